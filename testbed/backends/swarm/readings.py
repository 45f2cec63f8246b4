"""A workstation's cgroup values read from inside it, for hosts whose /sys the controller cannot see.

On this host the Docker backend reads /sys/fs/cgroup directly (docker/cgroups.py). A
container on another host sees its own cgroup at /sys/fs/cgroup (v1: one folder per
controller; v2: one folder), read-only, so one `docker exec` of a fixed python3 program
returns the raw files and the controller parses them here: the kernel's values, not the
engine's record. Costs one exec (tens of ms) per read against microseconds for a file.
"""
from __future__ import annotations

import json

from testbed.backends.base import CpuLimits
from testbed.backends.docker.cgroups import parse_oom_kills
from testbed.image import CONTAINERS_DIR

# The program the exec runs: containers/agents/cgroup_read.py, sent as its text (so a
# workstation made from an older image reads the same files).
READER = (CONTAINERS_DIR / "agents" / "cgroup_read.py").read_text()


def reader_argv(command_contains: str | None = None) -> list[str]:
    return ["python3", "-c", READER, *([command_contains] if command_contains is not None else [])]


def parse(stdout: str) -> dict:
    try:
        got = json.loads(stdout.strip().splitlines()[-1])
        files = got["files"]
    except (ValueError, IndexError, KeyError, TypeError):
        raise ValueError(f"cgroup reading: no JSON answer ({stdout.strip()[:80]!r})") from None
    return got if isinstance(files, dict) else {"files": {}, "procs_ns": None}


def _need(files: dict, *names: str) -> str:
    for n in names:
        if files.get(n) is not None:
            return str(files[n]).strip()
    raise ValueError(f"cgroup reading: none of {', '.join(names)} in the workstation")


def limits(got: dict) -> CpuLimits:
    """The cap and pinning in force (v2's "max" quota reads -1, as v1 writes no limit)."""
    files = got["files"]
    if files.get("cpu/cpu.cfs_quota_us") is not None:
        quota, period = int(_need(files, "cpu/cpu.cfs_quota_us")), int(_need(files, "cpu/cpu.cfs_period_us"))
    else:
        q, _, p = _need(files, "cpu.max").partition(" ")
        quota, period = (-1 if q == "max" else int(q)), int(p)
    return CpuLimits(quota_us=quota, period_us=period, cpuset=_need(files, "cpuset/cpuset.cpus", "cpuset.cpus.effective"))


def usage_ns(got: dict) -> int:
    files = got["files"]
    if files.get("cpuacct/cpuacct.usage") is not None:
        return int(_need(files, "cpuacct/cpuacct.usage"))
    for line in _need(files, "cpu.stat").splitlines():
        key, _, value = line.partition(" ")
        if key == "usage_usec":
            return int(value) * 1000
    raise ValueError("cgroup reading: cpu.stat has no usage_usec")


def oom_kills(got: dict) -> int:
    return parse_oom_kills(_need(got["files"], "memory/memory.oom_control", "memory.events"))


def procs_ns(got: dict) -> int:
    if got.get("procs_ns") is None:
        raise ValueError("cgroup reading: no process CPU time asked for")
    return int(got["procs_ns"])
