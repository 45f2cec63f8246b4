"""The Swarm's per-host sampler (containers/agents/host_sampler.py) and the controller's side of it.

The sampler's reads run here against a folder laid out like /proc: the files are the real
ones' shapes, only the root differs. Its tc read is run for real, with nsenter into this
process's own network namespace (root, as in CI). The live check, a monitor across three
Docker-in-Docker nodes reading through the samplers, is in test_testbed_backends_swarm_live.py.
"""
from __future__ import annotations

import itertools
import json
import os
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from testbed import shaping
from testbed.backends.base import CpuLimits, Sampled
from testbed.backends.swarm import readings, sampling
from testbed.image import CONTAINERS_DIR
from testbed.load.monitor import Monitor

sys.path.insert(0, str(CONTAINERS_DIR / "agents"))
import host_sampler  # noqa: E402

CID = "c0ffee" * 10 + "abcd"


def workstation(proc: Path, pid: int, cid: str, *, quota: int = 20000, owner_ns: int = 0) -> None:
    """A container's init at `pid` (cgroup v1) with an owner process inside it."""
    (proc / str(pid)).mkdir(parents=True)
    (proc / str(pid) / "cgroup").write_text(f"12:cpu,cpuacct:/docker/{cid}\n4:cpuset:/docker/{cid}\n")
    root = proc / str(pid) / "root"
    cg = root / "sys/fs/cgroup"
    for f, text in {"cpu/cpu.cfs_quota_us": f"{quota}\n", "cpu/cpu.cfs_period_us": "100000\n",
                    "cpuset/cpuset.cpus": "1\n", "cpuacct/cpuacct.usage": "5000\n",
                    "memory/memory.oom_control": "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n"}.items():
        (cg / f).parent.mkdir(parents=True, exist_ok=True)
        (cg / f).write_text(text)
    for n, argv, ns in ((1, b"/sbin/docker-init\0--\0", 7), (30, b"python3\0/opt/nowlab/agents/owner.py\0", owner_ns)):
        d = root / "proc" / str(n)
        d.mkdir(parents=True)
        (d / "cmdline").write_bytes(argv)
        (d / "schedstat").write_text(f"{ns} 0 0\n")


def test_the_sampler_finds_a_workstation_by_its_container_id_and_reads_it_through_its_root(tmp_path):
    proc = tmp_path / "proc"
    workstation(proc, 4321, CID, quota=15000, owner_ns=2_000_000)
    (proc / "17").mkdir()
    (proc / "17" / "cgroup").write_text("12:cpu,cpuacct:/docker/someone-else\n")
    s = host_sampler.Sampler({"ws3": CID, "ws9": "gone" * 16}, "agents/owner.py", None, proc=str(proc) + "/")
    line = s.sample()
    assert set(line["ws"]) == {"ws3"}  # ws9 has no process: left out, not an error
    got = sampling.parse_line(json.dumps(line))["ws3"]
    assert got.limits == CpuLimits(quota_us=15000, period_us=100000, cpuset="1")
    assert got.procs_ns == 2_000_000 and got.tc == ""  # only the owner's process counted
    assert s.pids == {"ws3": 4321}


def test_a_restarted_workstation_is_found_again_under_its_new_pid(tmp_path):
    proc = tmp_path / "proc"
    workstation(proc, 100, CID)
    s = host_sampler.Sampler({"ws1": CID}, "agents/owner.py", None, proc=str(proc) + "/")
    assert s.sample()["ws"] and s.pids["ws1"] == 100
    os.rename(proc / "100", proc / "250")  # the old init gone, the container's new one
    assert s.sample()["ws"] and s.pids["ws1"] == 250


def test_the_tc_read_enters_the_namespace_and_is_stamped():
    if os.geteuid() != 0:
        pytest.skip("nsenter needs root (CI runs as root)")
    text = host_sampler.read_tc(os.getpid(), ["echo", "class htb 1:1"], timeout_s=10)
    stamp, _, out = text.partition("\n")
    assert abs(float(stamp) - __import__("time").time()) < 10 and out == "class htb 1:1\n"
    assert host_sampler.read_tc(os.getpid(), ["false"], timeout_s=10) == ""


def test_the_sampler_refuses_a_workstation_without_its_container_id(capsys):
    with pytest.raises(SystemExit):
        host_sampler.main(["--interval", "1", "ws1"])
    assert "NAME=CONTAINER_ID" in capsys.readouterr().err


def test_the_exec_reader_and_the_sampler_read_the_same_files():
    """One program: the exec in a workstation sends cgroup_read.py's text."""
    assert readings.READER == (CONTAINERS_DIR / "agents" / "cgroup_read.py").read_text()


def test_the_sampler_container_is_named_by_what_it_reads_and_labelled_with_the_cluster():
    cfg = sampling.sampler_config("c1", "node2", "img", {"ws4": "b" * 64, "ws3": "a" * 64}, mark="agents/owner.py",
                                  tc_argv=["tc", "-s", "class", "show", "dev", "eth0"], interval_s=1.0)
    assert cfg["labels"] == {"nowlab.cluster": "c1", "nowlab.role": "sampler"}
    assert cfg["pid_mode"] == "host" and cfg["log_config"]["config"]["max-size"] == "1m"
    assert set(cfg["cap_add"]) == {"SYS_ADMIN", "SYS_PTRACE"} and "privileged" not in cfg  # a DinD node grants no more
    assert cfg["command"][-2:] == [f"ws3={'a' * 64}", f"ws4={'b' * 64}"]
    assert cfg["command"][cfg["command"].index("--tc") + 1] == "tc -s class show dev eth0"
    other = sampling.sampler_config("c1", "node2", "img", {"ws3": "a" * 64}, mark="agents/owner.py",
                                    tc_argv=["tc"], interval_s=0.5)
    assert cfg["name"].startswith("nowlab-c1_sampler-") and cfg["name"].endswith("_node2")
    assert other["name"] != cfg["name"]
    with pytest.raises(ValueError, match="interval_s"):
        sampling.sampler_config("c1", "n", "img", {"ws1": "x"}, mark="m", tc_argv=[], interval_s=0)
    with pytest.raises(ValueError, match="workstations"):
        sampling.sampler_config("c1", "n", "img", {}, mark="m", tc_argv=[], interval_s=1)


def test_a_line_that_is_not_one_reads_as_nothing():
    assert sampling.parse_line("Traceback (most recent call last):") == {}
    assert sampling.parse_line('{"t": 1, "ws": {"ws1": {"t": 1, "files": {}}}}') == {}  # half there


class Stream:
    """The samplers' newest lines, scripted: ws1 sampled every other read, ws2 never."""

    def __init__(self) -> None:
        self.n = itertools.count()
        self.closed = False

    def latest(self) -> dict[str, Sampled]:
        n = next(self.n)
        k = n // 2  # a new line every second read: the monitor samples faster than the sampler writes
        tc = (f"{100.0 + k:.6f}\nclass htb {shaping.ROOT} root rate 100Mbit ceil 100Mbit burst 1600b\n"
              f" Sent {k * 1000} bytes 10 pkt (dropped 0, overlimits 0 requeues 0)\n")
        return {"ws1": Sampled(t=100.0 + k, limits=CpuLimits(20000, 100000, "0"), procs_ns=k * 50_000_000, tc=tc)}

    def close(self) -> None:
        self.closed = True


class Cluster:
    name = "t-sampled"
    workstations = ["ws1", "ws2"]
    spec = SimpleNamespace(names=["ws1", "ws2"], cpu=lambda ws: 0.2, speed=lambda ws: None)

    def __init__(self) -> None:
        self.stream = Stream()
        self.direct: list[str] = []

    def sample_stream(self, mark, tc_argv, interval_s):
        return self.stream

    def cpu_limits(self, ws):
        self.direct.append(ws)
        return {"cores": 0.2}

    def processes_cpu_ns(self, ws, command_contains):
        return 0

    def read_net(self, ws, argv, timeout=10.0):
        return SimpleNamespace(ok=True, stdout="")


def test_the_monitor_reads_from_the_backends_samplers_and_reads_the_rest_itself():
    c = Cluster()
    mon = Monitor(c, interval=0.0)
    mon._stream = c.sample_stream("agents/owner.py", [], 1.0)
    for _ in range(7):
        mon.sample()
    assert set(c.direct) == {"ws2"} and mon.reads == {"sampled": 7, "direct": 7}
    ws1 = [r for r in mon.cpu_rows if r["workstation"] == "ws1"]
    # a row only when the sampler's line moved (reads 2, 4, 6), its rate over the sampler's own span
    assert len(ws1) == 3 and all(r["owner_cores"] == pytest.approx(0.05) for r in ws1)
    assert all(r["avail_cpu"] == pytest.approx(0.75) for r in ws1)
    mon.stop()
    assert c.stream.closed


def test_a_follower_that_ended_is_started_again_but_not_at_once():
    import time as _time

    from testbed.backends.follow import HostThreads

    calls: list[str] = []
    threads = HostThreads(["a", "b"], calls.append, "t", retry_s=0.2)  # each follow ends at once
    threads.ensure()
    _time.sleep(0.05)
    threads.ensure()  # ended, but within retry_s: not again
    assert sorted(calls) == ["a", "b"]
    _time.sleep(0.25)
    threads.ensure()
    _time.sleep(0.05)
    assert sorted(calls) == ["a", "a", "b", "b"]
