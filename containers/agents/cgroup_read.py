"""A workstation's cgroup files and its marked processes' CPU time, read as the kernel holds them.

Standard library only: it runs in two places.
- Inside a workstation on another host, sent as `python3 -c` through one `docker exec`
  (testbed/backends/swarm/readings.py), with root "/": the container sees its own cgroup at
  /sys/fs/cgroup and its own processes in /proc.
- In a host's sampler (host_sampler.py), with root "/proc/<pid>/root/": the same files seen
  through one of the workstation's processes, so one process outside the caps reads every
  workstation on its host without an exec each.

Every file a reading may need, cgroup v1 and v2, is returned raw (None where absent); the
controller parses them (readings.py), so this side has no version logic to keep in step.
"""
from __future__ import annotations

import json
import os
import sys

FILES = ("cpu/cpu.cfs_quota_us", "cpu/cpu.cfs_period_us", "cpuset/cpuset.cpus", "cpuacct/cpuacct.usage",
         "memory/memory.oom_control", "cpu.max", "cpuset.cpus.effective", "cpu.stat", "memory.events")


def read(root: str = "/", mark: str | None = None, exclude: frozenset[int] = frozenset()) -> dict:
    """{"files": {name: text or None}, "procs_ns": CPU ns of the processes whose command line
    holds `mark` (None when no mark is asked), pids in `exclude` left out}."""
    files: dict[str, str | None] = {}
    for f in FILES:
        try:
            with open(root + "sys/fs/cgroup/" + f) as fh:
                files[f] = fh.read()
        except OSError:
            files[f] = None
    procs = None
    if mark is not None:
        procs, needle = 0, mark.encode()
        try:
            pids = os.listdir(root + "proc")
        except OSError:
            pids = []
        for pid in pids:
            if not pid.isdigit() or int(pid) in exclude:
                continue
            try:
                with open(root + "proc/" + pid + "/cmdline", "rb") as fh:
                    if needle not in fh.read():
                        continue
                with open(root + "proc/" + pid + "/schedstat") as fh:
                    procs += int(fh.read().split()[0])
            except (OSError, IndexError, ValueError):
                pass  # a process that ended between the listing and the read
    return {"files": files, "procs_ns": procs}


if __name__ == "__main__":
    # the reader itself and its parent (`timeout`, when the exec has a deadline) hold the mark
    # in their own command lines: counted, they read 0.005 core of owners on an idle workstation
    print(json.dumps(read("/", sys.argv[1] if len(sys.argv) > 1 else None,
                          frozenset({os.getpid(), os.getppid()}))))
