"""docs/your-workload.md's worked example, workloads/examples/heat.py, as real MPI jobs on the host's
Open MPI: on 1 and 3 ranks, and resized 4 -> 2 -> 3 (a shrink, then a grow) through the real control
channel, it ends with the rod the serial reference computes, bit for bit."""
from __future__ import annotations

import time

import numpy as np
import pytest

from workloads.examples import heat_math as hm
from workloads.host.control_server import ControlServer
from workloads.host.launch import LocalLauncher
from workloads.host.malleable import MalleableJob, parse_result
from workloads.redistribution_plan import plan_moves, rows_over_network

pytestmark = pytest.mark.host_mpi  # real jobs on this host's Open MPI

N, STEPS, R = 600, 600, 0.45
PROGRAM = ["python3", "-m", "workloads.examples.heat", "--n", str(N), "--steps", str(STEPS), "--r", str(R),
           "--print-u"]


def job_id(tag: str) -> str:
    return f"{tag}-{time.time_ns() % 10**12}"


@pytest.mark.parametrize("hosts", [["ws1"], ["ws1", "ws2", "ws3"]])
def test_any_number_of_ranks_gives_the_serial_rod(hosts):
    result = LocalLauncher().mpirun_popen(hosts, [*PROGRAM, "--job", job_id("heat"), "--hosts", ",".join(hosts)]).wait(120)
    assert result.exit_code == 0, result.stderr[-3000:]
    report = parse_result(result.stdout)
    assert report["steps"] == STEPS and report["ranks"] == len(hosts)
    assert np.array_equal(np.array(report["u"]), hm.serial(N, STEPS, R))


def test_shrunk_and_grown_it_gives_the_serial_rod():
    hosts = ["ws1", "ws2", "ws3", "ws4"]
    with ControlServer(bind_host="127.0.0.1") as server:
        job = MalleableJob(LocalLauncher(), server, job_id("heat-resize"), PROGRAM, hosts, "127.0.0.1", timeout_s=120)
        with job:
            job.start()
            time.sleep(0.15)
            shrink = job.resize(["ws1", "ws2"])
            time.sleep(0.15)
            grow = job.resize(["ws1", "ws2", "ws3"])
            record = job.wait()
    assert shrink is not None and grow is not None, "the job finished before it could be resized"
    assert (shrink.kind, grow.kind) == ("loser", "winner")
    assert 1 <= shrink.iteration <= grow.iteration < STEPS
    # one float64 per cell that crosses the network, by the runtime's plan
    assert shrink.bytes_moved == rows_over_network(plan_moves(N, hosts, ["ws1", "ws2"])) * 8
    assert grow.bytes_moved == rows_over_network(plan_moves(N, ["ws1", "ws2"], ["ws1", "ws2", "ws3"])) * 8
    result = record.result
    assert result["steps"] == STEPS and result["ranks"] == 3
    assert result["steps_this_run"] == STEPS - grow.iteration and result["restore"]["role"] == "winner"
    assert np.array_equal(np.array(result["u"]), hm.serial(N, STEPS, R))
    print(f"heat n={N}: 4->2 at step {shrink.iteration} ({shrink.bytes_moved} B), "
          f"2->3 at step {grow.iteration} ({grow.bytes_moved} B)")
