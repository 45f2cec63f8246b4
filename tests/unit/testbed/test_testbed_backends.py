"""The backend interface and the Docker backend's parts that need no engine: cgroup paths and
files, process CPU from /proc, orphans from labels; and Cluster's own logic on a recording backend."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from testbed import backends, shaping, state
from testbed.backends import Backend, Capabilities, CpuCap, CpuLimits
from testbed.backends.docker import DockerBackend, cgroups, engine
from testbed.backends.docker.control import netns_argv
from testbed.backends.ownership import owner_tag, tag_alive
from testbed.cluster import Cluster
from testbed.spec import SpecError, from_dict


def fake_cgroup(root: Path, cid: str, quota: int = 2_000, period: int = 10_000, cpus: str = "1") -> None:
    """The three cgroup v1 folders Docker makes for a container, with the files the backend reads."""
    for ctl in ("cpu", "cpuacct", "cpuset"):
        (root / ctl / "docker" / cid).mkdir(parents=True)
    (root / "cpu" / "docker" / cid / "cpu.cfs_quota_us").write_text(f"{quota}\n")
    (root / "cpu" / "docker" / cid / "cpu.cfs_period_us").write_text(f"{period}\n")
    (root / "cpuset" / "docker" / cid / "cpuset.cpus").write_text(f"{cpus}\n")
    (root / "cpuacct" / "docker" / cid / "cpuacct.usage").write_text("123456789\n")


def test_cgroup_paths_are_cgroupfs_v1_under_the_docker_parent(tmp_path):
    assert cgroups.cgroup_file("abc", "cpu", "cgroup.procs") == Path("/sys/fs/cgroup/cpu/docker/abc/cgroup.procs")
    assert cgroups.cgroup_dir("abc", "cpuacct", tmp_path) == tmp_path / "cpuacct" / "docker" / "abc"
    for bad in ("", "..", "a/b"):
        with pytest.raises(ValueError, match="container_id"):
            cgroups.cgroup_dir(bad, "cpu")


def test_a_cap_written_to_the_files_reads_back_as_limits(tmp_path):
    fake_cgroup(tmp_path, "c1")
    be = DockerBackend(cgroup_root=tmp_path)
    assert be.cpu_limits("c1") == CpuLimits(quota_us=2_000, period_us=10_000, cpuset="1")
    be.write_cpu_cap("c1", CpuCap(0.05, 20_000))
    lim = be.cpu_limits("c1")
    assert (lim.quota_us, lim.period_us, lim.cores) == (1_000, 20_000, 0.05)
    assert lim.as_dict() == {"quota_us": 1_000, "period_us": 20_000, "cores": 0.05, "cpuset": "1"}
    assert be.cpu_usage_ns("c1") == 123456789
    assert be._client is None  # the keeper's path: files only, no engine connection


def test_a_cap_needs_cores_and_a_period():
    assert CpuCap(0.25, 10_000).quota_us == 2_500
    with pytest.raises(ValueError, match="cores"):
        CpuCap(0.0, 10_000)
    with pytest.raises(ValueError, match="period_us"):
        CpuCap(0.1, 0)


def test_processes_cpu_counts_only_the_marked_processes_of_the_cgroup(tmp_path):
    """Real processes, real /proc: a busy child carrying a mark in its argv, and this test itself."""
    busy = subprocess.Popen([sys.executable, "-c", "import time\nt = time.time()\nwhile time.time() - t < 20: pass",
                             "he-owner-mark"])
    try:
        time.sleep(0.5)
        fake_cgroup(tmp_path, "c1")
        (tmp_path / "cpu" / "docker" / "c1" / "cgroup.procs").write_text(f"{os.getpid()}\n{busy.pid}\n999999999\n")
        be = DockerBackend(cgroup_root=tmp_path)
        child = int(Path(f"/proc/{busy.pid}/schedstat").read_text().split()[0])
        got = be.processes_cpu_ns("c1", "he-owner-mark")
        assert child <= got < child + 200_000_000  # the child only, read a moment later
        assert got > 50_000_000  # it did run
        assert be.processes_cpu_ns("c1", "no-such-mark") == 0
        assert be.processes_cpu_ns("gone", "he-owner-mark") == 0  # no cgroup: nothing runs there
    finally:
        busy.kill()
        busy.wait()


def test_owner_tags_tell_a_live_process_from_a_dead_or_reused_pid():
    me = owner_tag()
    assert tag_alive(me)
    pid = me.partition(":")[0]
    assert not tag_alive(f"{pid}:1")  # same pid, another start: a reused pid
    child = subprocess.Popen(["sleep", "30"])
    tag = owner_tag(child.pid)
    assert tag_alive(tag)
    child.kill()
    child.wait()
    assert not tag_alive(tag)
    assert not tag_alive("") and not tag_alive("garbage")


def dead_tag() -> str:
    child = subprocess.Popen(["true"])
    tag = owner_tag(child.pid)
    child.wait()
    return tag


def test_orphans_and_leftovers_from_labels(tmp_path):
    dead, alive = dead_tag(), owner_tag()
    home = tmp_path / "home"

    def labels(cluster: str, owner: str | None) -> dict[str, str]:
        out = {engine.LABEL: cluster, engine.HOME_LABEL: str(home)}
        return out if owner is None else {**out, engine.OWNER_LABEL: owner}

    assert engine.abandoned([labels("a", dead), labels("a", dead)])
    assert not engine.abandoned([labels("a", dead), labels("a", alive)])  # one maker still runs
    assert not engine.abandoned([])  # nothing of it exists
    (home / "clusters" / "ready").mkdir(parents=True)
    (home / "clusters" / "ready" / "cluster.json").write_text(json.dumps({"ready": True}))
    found = [labels("killed", dead), labels("killed", dead), labels("ready", dead), labels("starting", alive),
             labels("compose", None)]
    assert engine.unattended(found) == ["killed"]


def test_network_reads_enter_the_namespace_of_the_init_pid():
    assert netns_argv(4242, ["tc", "-s", "class", "show", "dev", "eth0"]) == [
        "nsenter", "--net=/proc/4242/ns/net", "tc", "-s", "class", "show", "dev", "eth0"]


def test_the_default_backend_is_docker_and_an_unknown_kind_is_one_line():
    be = backends.get()
    assert isinstance(be, Backend) and be.kind == "docker" == backends.DEFAULT
    with pytest.raises(ValueError, match=r"backend: unknown kind 'k8s' \(known: docker, ssh, swarm, local\)"):
        backends.get("k8s")


def test_older_state_files_are_docker_clusters(tmp_path, monkeypatch):
    monkeypatch.setenv("NOWLAB_HOME", str(tmp_path))
    d = tmp_path / "clusters" / "old"
    d.mkdir(parents=True)
    (d / "cluster.json").write_text(json.dumps({"spec": {"name": "old"}, "network": "n", "subnet": "s", "gateway": "g",
                                                "image": "i", "ips": {}, "cores": {}}))
    assert state.ClusterState.load("old").backend == "docker"


# -- Cluster's logic on a backend that only records what it is asked --------------------------
class RecordingBackend:
    """Stands in for the machines where Cluster's own checks are under test, nothing else."""

    kind = "recording"
    capabilities = Capabilities()  # a one-host machine backend: nothing beyond `Backend`, nothing lacking

    def __init__(self, pinned: dict[int, float] | None = None):
        self.pinned = pinned or {}
        self.calls: list[tuple] = []

    def pinned_load(self, exclude: str | None = None) -> dict[int, float]:
        self.calls.append(("pinned_load", exclude))
        return self.pinned

    def set_cpu_cap(self, machine: str, cap: CpuCap) -> None:
        self.calls.append(("set_cpu_cap", machine, cap))

    def write_cpu_cap(self, machine: str, cap: CpuCap) -> None:
        self.calls.append(("write_cpu_cap", machine, cap))

    def shape(self, machine: str, commands) -> None:
        self.calls.append(("shape", machine, [list(c) for c in commands]))

    def remove(self, cluster: str) -> dict[str, int]:
        self.calls.append(("remove", cluster))
        return {"containers": 2}


def recorded_cluster(tmp_path, monkeypatch, pinned: dict[int, float] | None = None) -> tuple[Cluster, RecordingBackend]:
    monkeypatch.setenv("NOWLAB_HOME", str(tmp_path))
    spec = from_dict({"name": "he-rec", "defaults": {"egress": "50mbit"},
                      "workstation": [{"name": "ws1", "cpu": 0.3}, {"name": "ws2", "cpu": 0.2}]})
    st = state.ClusterState(spec=spec.model_dump(by_alias=True), network="n", subnet="10.9.0.0/24", gateway="10.9.0.1",
                            image="img", ips={"ws1": "10.9.0.2", "ws2": "10.9.0.3"}, cores={"ws1": 0, "ws2": 0},
                            containers={"ws1": "m1", "ws2": "m2"}, backend="recording")
    st.save()
    be = RecordingBackend(pinned)
    return Cluster(st, be), be


def test_set_cpu_checks_the_core_and_hands_the_backend_a_cap(tmp_path, monkeypatch):
    c, be = recorded_cluster(tmp_path, monkeypatch)
    c.set_cpu("ws1", 0.1)
    assert ("pinned_load", "he-rec") in be.calls
    assert be.calls[-1] == ("set_cpu_cap", "m1", CpuCap(0.1, c.spec.cfs_period_us("ws1")))
    assert state.ClusterState.load("he-rec").cluster_spec.cpu("ws1") == 0.1  # kept for other processes
    c2, be2 = recorded_cluster(tmp_path, monkeypatch, pinned={0: 0.5})
    with pytest.raises(SpecError, match="cpu: core 0 would carry 0.90"):
        c2.set_cpu("ws1", 0.2 + 1e-6)  # 0.2 + 0.2 + 0.5 > 0.9
    assert not any(call[0] == "set_cpu_cap" for call in be2.calls)


def test_set_bandwidth_shapes_both_ends_of_a_symmetric_link(tmp_path, monkeypatch):
    c, be = recorded_cluster(tmp_path, monkeypatch)
    c.set_bandwidth("ws1", "5mbit", to="ws2")
    shaped = [call for call in be.calls if call[0] == "shape"]
    assert [m for _, m, _ in shaped] == ["m1", "m2"]
    assert shaped[0][2] == shaping.change_commands(c.spec, "ws1", c.ips)
    assert any("5000000bit" in cmd for cmd in shaped[0][2])


def test_write_cpu_cap_and_down_go_to_the_backend(tmp_path, monkeypatch):
    c, be = recorded_cluster(tmp_path, monkeypatch)
    c.write_cpu_cap("ws2", 0.01, 100_000)
    assert be.calls[-1] == ("write_cpu_cap", "m2", CpuCap(0.01, 100_000))
    assert c.down() == {"containers": 2}
    assert ("remove", "he-rec") in be.calls
    assert "he-rec" not in state.running_names()


def test_a_hold_freezes_and_thaws_through_the_freezer_file(tmp_path):
    (tmp_path / "freezer" / "docker" / "c1").mkdir(parents=True)
    be = DockerBackend(cgroup_root=tmp_path)
    state = tmp_path / "freezer" / "docker" / "c1" / "freezer.state"
    be.hold("c1", True)
    assert state.read_text() == "FROZEN" and cgroups.is_frozen("c1", tmp_path)
    be.hold("c1", False)
    assert state.read_text() == "THAWED" and not cgroups.is_frozen("c1", tmp_path)
    assert not cgroups.is_frozen("gone", tmp_path)  # no freezer file: nothing to thaw
