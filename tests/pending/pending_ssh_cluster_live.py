"""Pending: the SSH backend's working-cluster test, out of the test command (not named test_*).

It passed run alone twice (143 s and 99 s, 24 Nov 2026), but in the full test command its MPI
hello across the three stand-in hosts hung past 180 s once. Until that is understood it runs
only when named:

    .venv/bin/pytest tests/pending/pending_ssh_cluster_live.py

Fixtures and helpers are those of tests/test_testbed_backends_ssh_live.py.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from test_testbed_backends_ssh_live import (  # noqa: E402,F401 - machines is a fixture
    NAME, NOTHING, ROLES, Machines, admin, leftovers, machines, spec_of)

from testbed import backends, state  # noqa: E402
from testbed.backends.ssh import registry  # noqa: E402
from testbed.cluster import Cluster  # noqa: E402
from testbed.load import owners  # noqa: E402
from testbed.spec import OwnerLoad, SpecError  # noqa: E402

pytestmark = pytest.mark.integration

FOLDER = f"/root/.nowlab/ssh/{NAME}"


def test_three_workstations_capped_shaped_running_mpi_and_removed(machines: Machines) -> None:
    spec = spec_of(machines)
    c = Cluster.create(spec, backend=backends.get("ssh", spec), ready_timeout=120)
    try:
        assert c.state.backend == "ssh" and set(c.ips.values()) == set(machines.addresses.values())
        host = {ws: c.container_id(ws).split("/")[1] for ws in c.workstations}
        assert host == {"ws1": "a", "ws2": "b", "ws3": "c"}

        # caps: a has cgroup rights, b and c are reported uncapped; all are pinned to their core
        assert c.cpu_limits("ws1") == {"quota_us": 2000, "period_us": 10000, "cores": 0.2, "cpuset": "0"}
        for ws, core in (("ws2", "1"), ("ws3", "0")):
            limits = c.cpu_limits(ws)
            assert limits["quota_us"] == -1 and limits["cpuset"] == core, (ws, limits)
        c.set_cpu("ws1", 0.3)
        assert c.cpu_limits("ws1")["quota_us"] == 3000

        # shaping: root with NET_ADMIN shapes (a, b), root without it stays unshaped (c)
        classes = c.read_net("ws1", ["tc", "class", "show", "dev", "eth0"]).stdout
        assert "rate 50Mbit" in classes and "ceil 5Mbit" in classes, classes
        assert "htb" in c.tc_show("ws2", "qdisc")
        assert "htb" not in c.read_net("ws3", ["tc", "qdisc", "show", "dev", "eth0"]).stdout

        # MPI across the three hosts, launched on ws1 over the hosts' own ssh; the ranks run in
        # the workstations (ws1's cgroup counts the CPU of its rank and of mpiexec)
        before = c.cpu_usage_ns("ws1")
        hello = c.mpirun(["ws1", "ws2", "ws3"], ["python3", "-m", "workloads.hello"], timeout=180)
        assert hello.ok, hello.stderr[-2000:]
        assert "hello from 3 ranks" in hello.stdout
        assert c.cpu_usage_ns("ws1") > before

        # an owner daemon runs as a real process of the host, in the workstation, pid file in its folder
        owners.start(c, {"ws2": OwnerLoad(n=1, z=0.5, d=0.2)})
        code, pid, _err = admin(machines, "b", ["cat", f"{FOLDER}/run/nowlab-owner.pid"])
        assert code == 0 and pid.strip().isdigit()
        deadline = time.monotonic() + 20
        while c.processes_cpu_ns("ws2", "owner.py") == 0 and time.monotonic() < deadline:
            time.sleep(0.5)
        assert c.processes_cpu_ns("ws2", "owner.py") > 0
        owners.stop(c, ["ws2"])
        assert admin(machines, "b", ["test", "-e", f"{FOLDER}/run/nowlab-owner.pid"])[0] != 0

        # a host already holding a cluster is refused for another, naming it, and left as it was
        other = spec_of(machines, name="ssh-live2")
        with pytest.raises(SpecError, match=rf"^host 'a': no free core, nowlab cluster '{NAME}' already runs there"):
            Cluster.create(other, backend=backends.get("ssh", other))
        assert leftovers(machines, "a", "ssh-live2")["folder"] is False
    finally:
        removed = c.down()
    assert removed["containers"] == 3 and removed.get("unreachable") == 0
    for host in ROLES:
        assert leftovers(machines, host) == NOTHING, host
    assert registry.names() == [] and NAME not in state.running_names()
