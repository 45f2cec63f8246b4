"""The Swarm backend on three Docker-in-Docker nodes of this machine (issue 18, item 2).

tools/testbeds/dind.py builds the node image (the repo's base plus Debian's
docker.io; cached by content hash), starts three nodes (dind.NODE_RIGHTS) each with its own dockerd
on tcp 2375, loads the workstation image into each with `docker save | docker load`, and
forms a Swarm. Six workstations, two per node, then come up through each node's engine API
on one attachable overlay; ws6 asks a speed instead of a cap. Checked: every cap, cpuset and
qdisc as the kernel holds them, the overlay's address, MTU and Open MPI's interface, a live
cap change, ws6 governed by the keeper from node 3's probe, an owner daemon read by the
monitor across hosts, an MPI program across the three nodes by mpiexec and by the resident
pool (reached through the cluster's SSH gateway), a CG job moved from node 1's workstations
onto node 2's that still matches its unmoved run (the overlay pins Open MPI to ob1 for this:
testbed/backends/swarm/overlay.py, docs/multi-host.md), teardown leaving nothing labelled on
any node, and `gc` after a controller killed mid-`up` cleaning every node.

Nested CPU caps on one machine say nothing about timing: three nodes share this machine's
cores. This checks function only.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from typing import Iterator

import numpy as np
import pytest

from testbed.backends.docker import engine
from testbed import keeper, lifecycle, meter, state
from testbed.backends.swarm import gateway, membership, metering, overlay, sampling
from testbed.backends.swarm.backend import SwarmBackend
from testbed.cluster import Cluster
from testbed.load import owners
from testbed.load.monitor import Monitor
from testbed.spec import OwnerLoad, from_dict
from tools.testbeds import dind
from workloads.host.control_server import ControlServer
from workloads.host.malleable import MalleableJob, parse_result

pytestmark = pytest.mark.integration

NAME = "swarm-live"
CPU = 0.15
SPEED = 0.1  # ws6's, in reference cores: its cap is the keeper's, from node 3's probe
NOWLAB = [sys.executable, "-m", "nowlab"]


EMPTY = {"containers": [], "networks": [], "volumes": []}


def clean_soon(client, name: str, timeout_s: float = 15.0) -> dict:
    """What is labelled `name` on a node, once empty or after `timeout_s` (a worker drops its
    copy of the overlay a moment after its last container leaves)."""
    deadline = time.monotonic() + timeout_s
    while (found := engine.labelled(client, name)) != EMPTY and time.monotonic() < deadline:
        time.sleep(0.5)
    return found


def spec_dict(nodes: list[dind.Node], name: str, per_node: int = 2, speed: str | None = None) -> dict:
    """`per_node` workstations on each node, named in node order; ws1 -> ws3 shaped to 20 Mbit/s;
    `speed` names one held at SPEED reference cores by the keeper instead of a cap."""
    ws = [{"name": f"ws{i * per_node + j + 1}", "cpu": CPU, "host": n.name}
          for i, n in enumerate(nodes) for j in range(per_node)]
    for w in ws:
        if w["name"] == speed:
            del w["cpu"]
            w["speed"] = SPEED
    ws[0]["links"] = {"ws3": "20mbit"}
    return {"name": name, "defaults": {"egress": "100mbit"},
            "host": [{"name": n.name, "address": n.address, "docker": n.url} for n in nodes], "workstation": ws}


@pytest.fixture(scope="module")
def nodes(docker_engine: None) -> Iterator[list[dind.Node]]:
    made = dind.up(log=lambda _m: None)
    try:
        yield made
    finally:
        dind.down()


@pytest.fixture(scope="module")
def engines(nodes: list[dind.Node]):
    return {n.name: membership.connect(n.url, what=n.name) for n in nodes}


@pytest.fixture(scope="module")
def swarm(nodes: list[dind.Node]) -> Iterator[tuple[Cluster, SwarmBackend]]:
    spec = from_dict(spec_dict(nodes, NAME, speed="ws6"))
    be = SwarmBackend(spec)
    c = lifecycle.start(spec, backend=be, ready_timeout=180)
    try:
        yield c, be
    finally:
        if NAME in be.cluster_names():
            c.down()


def test_six_workstations_sit_two_per_node_on_one_overlay(swarm, engines):
    c, be = swarm
    assert c.state.backend == "swarm"
    for i, node in enumerate(("node1", "node2", "node3")):
        found = [engines[node].api.inspect_container(x)["Config"]
                 for x in engine.labelled(engines[node], NAME)["containers"]]
        names = sorted(x["Hostname"] for x in found if engine.WS_LABEL in x["Labels"])
        assert names == [f"ws{2 * i + 1}", f"ws{2 * i + 2}"]
        roles = sorted(x["Labels"].get(gateway.ROLE_LABEL, "") for x in found if engine.WS_LABEL not in x["Labels"])
        # beside them: a speed probe per node, and the cluster's SSH gateway on the first
        assert roles == (["gateway", "meter"] if node == "node1" else ["meter"])
    nets = engines["node1"].api.networks(filters={"label": f"{engine.LABEL}={NAME}"})
    assert len(nets) == 1 and nets[0]["Driver"] == "overlay" and nets[0]["Attachable"]
    mtu = int(nets[0]["Options"][overlay.MTU_OPTION])
    assert mtu == overlay.overlay_mtu(SwarmBackend._underlay_mtu(engines["node1"]))  # VXLAN's 50 bytes left
    subnet = nets[0]["IPAM"]["Config"][0]["Subnet"]
    for ws in c.workstations:
        addr = c.exec(ws, ["ip", "-o", "-4", "addr", "show", "dev", "eth0"]).check("ip addr").stdout
        assert f"inet {c.ips[ws]}/" in addr  # eth0 is the overlay: the image's tc and MPI name it
        # at most the option: an engine may go lower (on this host the nodes' dockerd took 1400,
        # the host's own eth0 MTU), and any lower value still leaves VXLAN its room
        assert int(c.exec(ws, ["cat", "/sys/class/net/eth0/mtu"]).stdout) <= mtu
        conf = c.exec(ws, ["cat", overlay.MCA_FILE]).stdout
        assert f"btl_tcp_if_include = {subnet}" in conf and f"oob_tcp_if_include = {subnet}" in conf


def test_every_cap_cpuset_and_qdisc_is_in_force(swarm, engines):
    c, be = swarm
    slots = be.slots()
    for ws in c.workstations:
        host, core = slots[c.state.cores[ws]]
        assert host == c.spec.workstation(ws).host
        lim = c.cpu_limits(ws)  # the kernel's, read inside the workstation
        hc = engines[host].api.inspect_container(c.container_id(ws).split("/")[2])["HostConfig"]
        assert lim["cpuset"] == hc["CpusetCpus"] == str(core)
        if ws != "ws6":  # ws6's quota is the governor's (below)
            assert lim["cores"] == pytest.approx(CPU) and hc["CpuQuota"] / hc["CpuPeriod"] == pytest.approx(CPU)
        assert "htb" in c.tc_show(ws, "qdisc")
        assert c.read_net(ws, ["tc", "-s", "class", "show", "dev", "eth0"]).ok
        assert c.cpu_usage_ns(ws) > 0 and c.oom_kills(ws) == 0
    assert "ceil 20Mbit" in c.tc_show("ws1")
    c.set_cpu("ws2", 0.25)  # live, through node 1's engine
    assert c.cpu_limits("ws2")["cores"] == pytest.approx(0.25)
    c.set_bandwidth("ws5", "5mbit", to="ws2")  # tc in ws5's namespace, through node 3's engine
    assert "ceil 5Mbit" in c.tc_show("ws5")


def test_a_speed_workstation_is_governed_from_its_hosts_probe(swarm, engines):
    """ws6 asks a speed: node 3's probe read its core at placement and meters it now; the keeper
    on this machine follows the probe and writes ws6's quota through node 3's engine."""
    c, be = swarm
    probes = [x for x in engines["node3"].containers.list(filters={"label": f"{engine.LABEL}={NAME}"})
              if x.labels.get(metering.ROLE_LABEL) == metering.ROLE]
    cores = sorted({be.slots()[c.state.cores[ws]][1] for ws in ("ws5", "ws6")})
    assert len(probes) == 1 and probes[0].attrs["HostConfig"]["CpusetCpus"] == ",".join(map(str, cores))
    assert c.spec.placed_factor.get("ws6") and keeper.status(NAME)["alive"]
    d, slot = state.cluster_dir(NAME), c.state.cores["ws6"]
    deadline = time.monotonic() + 60
    while True:
        rows = [q for q in meter.read_quotas(d / meter.QUOTAS_CSV) if q.workstation == "ws6" and not q.stale]
        mine = [s for s in meter.read_samples(d / meter.SAMPLES_CSV) if s.core == slot]
        if len(rows) >= 3 and {s.kernel for s in mine} == {"multiply", "matvec"} or time.monotonic() > deadline:
            break
        time.sleep(1)
    assert {s.kernel for s in mine} == {"multiply", "matvec"}, f"{len(mine)} samples of slot {slot}"
    assert len(rows) >= 3 and rows[-1].target == SPEED and rows[-1].factor
    got = c.cpu_limits("ws6")["cores"]  # the quota in force is one the keeper wrote
    assert min(q.quota_cores for q in rows) * 0.95 <= got <= c.spec.cpu("ws6") * 1.05
    held = meter.speed_over(d, "ws6", rows[0].t, rows[-1].t)  # quota x factor: the speed it was given
    assert held.status == "metered" and held.speed == pytest.approx(SPEED, rel=0.35)  # nested caps: function only


def rows_of(mon: Monitor, ws: str) -> int:
    cpu = mon.frames()[0]
    return 0 if cpu.empty else int((cpu.workstation == ws).sum())


def test_owners_and_the_monitor_work_across_hosts(swarm, engines):
    """An owner daemon on ws3 (node 2), read by the monitor from each node's sampler
    (sampling.py: one container a node, not three execs a workstation a sample)."""
    c, _be = swarm
    owners.start(c, {"ws3": OwnerLoad(n=1, z=0.2, d=0.3)}, seed=1)
    try:
        with Monitor(c, interval=1.0) as mon:
            # the first samples are read by execs (seconds here) while the samplers start
            deadline = time.monotonic() + 60
            while (rows_of(mon, "ws3") < 2 or mon.reads["sampled"] < 3 * len(c.workstations)) \
                    and time.monotonic() < deadline:
                time.sleep(0.5)
    finally:
        owners.stop(c, ["ws3"])
    cpu, links = mon.frames()
    assert not mon.read_errors
    assert mon.reads["sampled"] >= 3 * len(c.workstations), mon.reads
    samplers = {n: [x for x in cl.containers.list(filters={"label": f"{engine.LABEL}={NAME}"})
                    if x.labels.get(metering.ROLE_LABEL) == sampling.ROLE] for n, cl in engines.items()}
    assert all(len(v) == 1 for v in samplers.values()), samplers  # one a node, shared by later monitors
    loaded, idle = cpu[cpu.workstation == "ws3"], cpu[cpu.workstation == "ws4"]
    assert len(loaded) >= 2 and loaded.owner_cores.mean() > 0.02  # M/M/1//1: 60% of its 0.15 core
    assert idle.owner_cores.max() < 0.005 and loaded.avail_cpu.mean() < 0.9
    assert {"ws1", "ws3", "ws5"} <= set(links.src) and (links.ceil_bps > 0).all()
    assert c.exec("ws3", ["pgrep", "-f", "agents/owner.py"]).exit_code == 1  # stopped


# -- MPI across the nodes ------------------------------------------------------------------------
RTOL = 1e-10


def test_mpi_hello_across_the_three_nodes(swarm):
    c, _be = swarm
    res = c.mpirun(["ws1", "ws3", "ws5"], ["python3", "-m", "workloads.hello"], timeout=240)
    assert res.exit_code == 0, res.stderr[-3000:]
    assert "hello from 3 ranks" in res.stdout


def test_the_resident_pool_is_reached_through_the_gateway(swarm, engines):
    """The controller is not on the overlay: the pool's connections go through the SSH gateway."""
    c, be = swarm
    gw = [x for x in engines["node1"].containers.list(filters={"label": f"{engine.LABEL}={NAME}"})
          if x.labels.get(gateway.ROLE_LABEL) == gateway.ROLE]
    assert len(gw) == 1 and engine.WS_LABEL not in gw[0].labels  # one, on the first node, no workstation
    res = c.job_launcher().mpirun_popen(["ws1", "ws3", "ws5"], ["python3", "-m", "workloads.hello"]).wait(120)
    assert res.exit_code == 0, res.stderr[-3000:]
    assert "hello from 3 ranks" in res.stdout


def test_cg_moves_from_node1s_workstations_onto_node2s(swarm):
    c, _be = swarm
    n, first = 800, ["ws1", "ws2"]  # large enough that the job is still running when moved
    plain = c.mpirun(first, ["python3", "-m", "workloads.cg", "--job", f"plain-{time.time_ns()}", "--hosts",
                             ",".join(first), "--n", str(n), "--print-x"], timeout=300)
    assert plain.exit_code == 0, plain.stderr[-3000:]
    with ControlServer(c.controller_address) as server:
        job = MalleableJob(c.job_launcher(), server, f"move-{time.time_ns() % 10**12}",  # the resident pool
                           ["python3", "-m", "workloads.cg", "--n", str(n), "--print-x"], first,
                           c.controller_address, timeout_s=300).start()
        time.sleep(0.1)
        grow = job.resize(["ws1", "ws2", "ws3", "ws4"])  # onto the union: node 2 gets its rows
        shrink = job.resize(["ws3", "ws4"])  # and node 1 lets go
        record = job.wait()
    assert grow is not None and shrink is not None, "the job finished before it could be moved"
    assert (grow.kind, shrink.kind) == ("winner", "loser") and grow.bytes_moved > 0 and shrink.bytes_moved > 0
    assert record.hosts_history == [first, ["ws1", "ws2", "ws3", "ws4"], ["ws3", "ws4"]]
    assert record.result["placement"] == ["ws3", "ws4"] and record.result["iterations"] == 250
    x_plain = np.array(parse_result(plain.stdout)["x"])  # type: ignore[index]
    x = np.array(record.result["x"])
    assert np.linalg.norm(x - x_plain) / np.linalg.norm(x_plain) < RTOL


# -- teardown (the swarm fixture's cluster is gone after this) ------------------------------
def test_down_leaves_nothing_labelled_on_any_node(swarm, engines):
    c, be = swarm
    c.down()
    for node, client in engines.items():
        assert clean_soon(client, NAME) == EMPTY, node
    assert NAME not in be.cluster_names()


def test_gc_after_a_killed_controller_cleans_every_node(nodes, engines, tmp_path):
    name = "swarm-killed"
    spec = tmp_path / f"{name}.toml"
    d = spec_dict(nodes, name, per_node=1)
    hosts = "".join(f'[[host]]\nname = "{h["name"]}"\naddress = "{h["address"]}"\ndocker = "{h["docker"]}"\n'
                    for h in d["host"])
    wss = "".join(f'[[workstation]]\nname = "{w["name"]}"\ncpu = {CPU}\nhost = "{w["host"]}"\n' for w in d["workstation"])
    spec.write_text(f'name = "{name}"\n{hosts}{wss}')
    proc = subprocess.Popen([*NOWLAB, "up", str(spec), "--backend", "swarm"], env=dict(os.environ),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 180
    while sum(len(engine.labelled(cl, name)["containers"]) for cl in engines.values()) < len(d["workstation"]):
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGKILL)  # the controller dies halfway: no finally runs
    proc.wait()
    assert engine.labelled(engines["node1"], name)["networks"]  # the overlay, on the manager
    gc = subprocess.run([*NOWLAB, "gc"], env=dict(os.environ), capture_output=True, text=True, timeout=180)
    assert gc.returncode == 0, gc.stderr
    assert name in gc.stdout
    for node, client in engines.items():
        assert clean_soon(client, name) == EMPTY, node
