"""The SSH backend against three machines that run nothing but sshd, python3, numpy, mpi4py
and Open MPI (issue 18, item 3).

The machines (tools/testbeds/lab_machines.py) are containers of the workstation image,
started with the Docker SDK only to stand in for real hosts; from then on the test reaches
them only over SSH: the backend under test does, and so do the checks (`admin`: a plain
paramiko login with the machines' own key, as a lab's administrator would have). They differ
as lab hosts do: a is capped and shaped, b shaped and uncapped, c neither.
Nested caps on one machine say nothing about timing: this checks function only.

Here: the faults, each one line naming the host and leaving nothing; and a working cluster
(caps and qdiscs read, an owner daemon, MPI hello across the three hosts, a second cluster
refused, teardown). The working cluster's test was kept out of the test command after its MPI
hello hung once (24 Nov 2026); run three times on 25 Nov, alone (18.5 s) and twice with both
host cores burned by other processes (59 s each), it passed every time, and it is back.
"""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Iterator

import pytest

from testbed import backends, lifecycle, state
from testbed.backends import BackendError
from testbed.backends.ssh import registry
from tools.testbeds.lab_machines import ROLES, Machines, lab_machines
from testbed.load import owners
from testbed.load.monitor import Monitor
from testbed.spec import ClusterSpec, OwnerLoad, SpecError, from_dict
from testbed.sshkeys import make_keypair

pytestmark = pytest.mark.integration

NAME = "ssh-live"


@pytest.fixture(scope="module")
def machines(docker_engine: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Machines]:
    with lab_machines(tmp_path_factory.mktemp("admin-key")) as m:
        yield m


def admin(m: Machines, host: str, argv: list[str]) -> tuple[int, str, str]:
    return m.admin(host, argv)


def spec_of(m: Machines, name: str = NAME, changes: dict[str, dict[str, object]] | None = None) -> ClusterSpec:
    """Hosts a, b, c on cores 0, 1, 0, logging in with the admin key; `changes` per host name."""
    assert set(changes or {}) <= set(ROLES), changes
    hosts = [{"name": h, "address": m.addresses[h], "identity": str(m.admin_key), "cores": [i % 2],
              **(changes or {}).get(h, {})} for i, h in enumerate(ROLES)]
    return from_dict({
        "name": name, "host": hosts,
        "defaults": {"cpu": 0.2, "egress": "50mbit"},
        "workstation": [{"name": "ws1", "links": {"ws2": "5mbit"}}, {"name": "ws2"}, {"name": "ws3"}],
    })


LEFT_PROBE = """
import glob, json, os
mark = b"NOWLAB_SSH_CLUSTER=" + os.environ["CLUSTER"].encode()
marked = []
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        if mark in open(f"/proc/{pid}/environ", "rb").read().split(b"\\0"):
            marked.append(pid)
    except OSError:
        pass
keys = os.path.expanduser("~/.ssh/authorized_keys")
print(json.dumps({"marked": marked,
                  "folder": os.path.exists(os.path.expanduser("~/.nowlab/ssh/" + os.environ["CLUSTER"])),
                  "cgroups": glob.glob("/sys/fs/cgroup/*/nowlab." + os.environ["CLUSTER"] + ".*")
                             + glob.glob("/sys/fs/cgroup/nowlab." + os.environ["CLUSTER"] + ".*"),
                  "key": "nowlab-" + os.environ["CLUSTER"] in (open(keys).read() if os.path.exists(keys) else ""),
                  "tmp": glob.glob("/tmp/nowlab") + glob.glob("/tmp/nowlab-*") + glob.glob("/tmp/ompi.*")}))
"""


def leftovers(m: Machines, host: str, cluster: str = NAME) -> dict[str, object]:
    code, out, err = admin(m, host, ["env", f"CLUSTER={cluster}", "python3", "-c", LEFT_PROBE])
    assert code == 0, err
    found = json.loads(out)
    _code, qdisc, _err = admin(m, host, ["tc", "qdisc", "show", "dev", "eth0"])
    found["htb"] = "htb" in qdisc
    return found


NOTHING = {"marked": [], "folder": False, "cgroups": [], "key": False, "tmp": [], "htb": False}


def test_faults_are_one_line_naming_the_host_and_leave_nothing(machines: Machines) -> None:
    # unreachable: nothing answers on c's port 2222
    unreachable = spec_of(machines, changes={"c": {"port": 2222}})
    with pytest.raises(BackendError, match=r"^host 'c' \(root@[\d.]+:2222\): unreachable"):
        lifecycle.start(unreachable, backend=backends.get("ssh", unreachable))
    # a key the machine does not know
    stranger = make_keypair(Path(str(machines.admin_key) + "-stranger"), "stranger")
    refused = spec_of(machines, changes={"b": {"identity": str(stranger)}})
    with pytest.raises(BackendError, match=r"^host 'b' \(root@[\d.]+:22\): the SSH key was refused for 'root'$"):
        lifecycle.start(refused, backend=backends.get("ssh", refused))
    # fewer cores than the spec asks of a host
    no_core = spec_of(machines, changes={"b": {"cores": [7]}})
    with pytest.raises(SpecError, match=r"host 'b' has no core\(s\) \[7\]"):
        lifecycle.start(no_core, backend=backends.get("ssh", no_core))
    # a host that fails half way through `up`, after the others were changed: its folder cannot be made
    assert admin(machines, "c", ["sh", "-c", "mkdir -p /root/.nowlab && touch /root/.nowlab/ssh"])[0] == 0
    try:
        broken = spec_of(machines)
        with pytest.raises(BackendError, match=r"^host 'c' \(root@[\d.]+:22\): "):
            lifecycle.start(broken, backend=backends.get("ssh", broken))
    finally:
        admin(machines, "c", ["rm", "-f", "/root/.nowlab/ssh"])
    for host in ROLES:
        assert leftovers(machines, host) == NOTHING, host
    assert registry.names() == [] and NAME not in state.running_names()


# -- a working cluster ------------------------------------------------------------------------------
FOLDER = f"/root/.nowlab/ssh/{NAME}"


def test_three_workstations_capped_shaped_running_mpi_and_removed(machines: Machines) -> None:
    spec = spec_of(machines)
    c = lifecycle.start(spec, backend=backends.get("ssh", spec), ready_timeout=120)
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

        # the monitor reads every workstation from one sampling agent per host (one ssh channel
        # each), not three ssh commands per workstation per sample; the owner's CPU shows there
        mon = Monitor(c, interval=0.5).start()

        def owner_seen() -> bool:  # the owner thinks 0.5 s on average between its 0.2 s bursts
            cpu = mon.frames()[0]
            return bool((cpu[cpu.workstation == "ws2"].owner_cores > 0).any())

        try:
            deadline = time.monotonic() + 30
            while (mon.reads["sampled"] < 9 or not owner_seen()) and time.monotonic() < deadline:
                time.sleep(0.25)
            cpu, links = mon.frames()
        finally:
            mon.stop()
        assert mon.reads["sampled"] >= 9, (mon.reads, mon._stream.errors if mon._stream else None)
        assert set(cpu.workstation) == {"ws1", "ws2", "ws3"} and not mon.read_errors, mon.read_errors
        assert cpu[cpu.workstation == "ws1"].cap_cores.iloc[-1] == pytest.approx(0.3)
        assert cpu[cpu.workstation == "ws2"].owner_cores.max() > 0
        assert set(links.src) >= {"ws1", "ws2"}  # the shaped hosts' counters, read on the hosts
        owners.stop(c, ["ws2"])
        assert admin(machines, "b", ["test", "-e", f"{FOLDER}/run/nowlab-owner.pid"])[0] != 0

        # a host already holding a cluster is refused for another, naming it, and left as it was
        other = spec_of(machines, name="ssh-live2")
        with pytest.raises(SpecError, match=rf"^host 'a': no free core, nowlab cluster '{NAME}' already runs there"):
            lifecycle.start(other, backend=backends.get("ssh", other))
        assert leftovers(machines, "a", "ssh-live2")["folder"] is False
    finally:
        removed = c.down()
    assert removed["containers"] == 3 and removed.get("unreachable") == 0
    for host in ROLES:
        assert leftovers(machines, host) == NOTHING, host
    assert registry.names() == [] and NAME not in state.running_names()


def test_a_speed_is_governed_from_a_probe_on_its_host_and_refused_where_it_cannot_be_capped(
        machines: Machines) -> None:
    """ws1 asks 0.1 reference cores on host a: placed by a's measured factor, and held by the
    keeper from a probe on a (its samples over ssh, keyed by ws1's slot), its quota written
    through a's agent. On b (no cgroup rights) a speed is one line naming the host."""
    from testbed import meter
    from testbed.state import cluster_dir

    def two(speed_on: str) -> ClusterSpec:
        hosts = [{"name": h, "address": machines.addresses[h], "identity": str(machines.admin_key), "cores": [i]}
                 for i, h in enumerate(("a", "b"))]
        ws = [{"name": "ws1", "host": "a", "cpu": 0.2}, {"name": "ws2", "host": "b", "cpu": 0.2}]
        for w in ws:
            if w["host"] == speed_on:
                del w["cpu"]
                w["speed"] = 0.1
        return from_dict({"name": NAME, "host": hosts, "workstation": ws})

    refused = two("b")
    with pytest.raises(BackendError, match=r"^host 'b' \(root@[\d.]+:22\): ws2 asks a speed in reference cores, "
                                           r"which needs a CPU cap"):
        lifecycle.start(refused, backend=backends.get("ssh", refused))
    for host in ("a", "b"):
        assert leftovers(machines, host) == NOTHING, host

    spec = two("a")
    c = lifecycle.start(spec, backend=backends.get("ssh", spec), ready_timeout=120)
    try:
        assert c.spec.placed_factor["ws1"] > 0 and 0 < c.spec.cpu("ws1") <= 0.9
        d = cluster_dir(NAME)
        deadline = time.monotonic() + 45
        while time.monotonic() < deadline:
            rows = [q for q in meter.read_quotas(d / meter.QUOTAS_CSV) if q.workstation == "ws1" and q.factor]
            if len(rows) >= 3:
                break
            time.sleep(1)
        mine = [s for s in meter.read_samples(d / meter.SAMPLES_CSV) if s.core == c.state.cores["ws1"]]
        assert {s.kernel for s in mine} == {"multiply", "matvec"}, f"{len(mine)} samples"
        assert len(rows) >= 3 and rows[-1].target == 0.1
        got = c.cpu_limits("ws1")["cores"]  # the quota in force is one the keeper wrote through a's agent
        # read again: the keeper may have written a newer one between the first read and the limit's
        rows = [q for q in meter.read_quotas(d / meter.QUOTAS_CSV) if q.workstation == "ws1" and q.factor]
        assert any(abs(q.quota_cores - got) < 0.002 for q in rows), (got, [q.quota_cores for q in rows[-5:]])
        probes = admin(machines, "a", ["pgrep", "-f", "workloads.speed_probe"])
        assert probes[0] == 0, "no probe on host a"
        assert admin(machines, "b", ["pgrep", "-f", "workloads.speed_probe"])[0] == 1  # b is not governed
    finally:
        c.down()
    for host in ("a", "b"):
        assert leftovers(machines, host) == NOTHING, host
    assert admin(machines, "a", ["pgrep", "-f", "workloads.speed_probe"])[0] == 1  # stopped with the cluster
