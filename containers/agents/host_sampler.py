"""One host's monitor readings of every workstation on it, one JSON line per interval.

Why: on another host the controller cannot read a workstation's cgroup files, its
processes or its tc counters, and one `docker exec` for each (three per workstation per
sample) costs 0.07 core apiece on the host being measured (docs/scale.md). This process
runs once per host, in a container that shares the host's process table (pid "host") and
may read other processes' roots and enter their namespaces (SYS_PTRACE, SYS_ADMIN), outside
every workstation's cap. Each interval it
reads, for each workstation:
- its cgroup files and its owner processes' CPU time (cgroup_read.py), through
  /proc/<pid>/root of one of the workstation's processes: the container's own view;
- its tc class counters, by `nsenter --net` into its namespace, stamped midway as the
  controller's own read is (testbed/load/monitor.py read_tc).

A workstation is named by its container id; its processes are found by that id in
/proc/<pid>/cgroup (v1 and v2, nested engines too), again after it restarts. The controller
follows stdout through the host's engine (testbed/backends/swarm/sampling.py). The sampler
ends by itself once none of its workstations has been seen for `--linger` seconds, so a
cluster removed without it leaves nothing running.

    python3 host_sampler.py --interval 1 --mark agents/owner.py --tc "tc -s class show dev eth0" \
        ws1=<container id> ws2=<container id>
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cgroup_read import read  # noqa: E402  (a sibling file, not a package)

PROC = "/proc/"


def find_pid(container_id: str, proc: str = PROC) -> int | None:
    """The lowest pid whose cgroup path names the container (its init, as a rule)."""
    best = None
    for pid in os.listdir(proc):
        if not pid.isdigit() or (best is not None and int(pid) >= best):
            continue
        try:
            with open(proc + pid + "/cgroup") as fh:
                if container_id in fh.read():
                    best = int(pid)
        except OSError:
            pass
    return best


def alive(pid: int, container_id: str, proc: str = PROC) -> bool:
    try:
        with open(f"{proc}{pid}/cgroup") as fh:
            return container_id in fh.read()
    except OSError:
        return False


def read_tc(pid: int, tc_argv: list[str], timeout_s: float) -> str:
    """`stamp\\ntc output` from inside the workstation's network namespace ("" if it failed)."""
    t0 = time.time()
    try:
        res = subprocess.run(["nsenter", "-t", str(pid), "--net", "--", *tc_argv], capture_output=True,
                             text=True, timeout=timeout_s)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    t1 = time.time()
    return f"{(t0 + t1) / 2:.6f}\n{res.stdout}" if res.returncode == 0 else ""


class Sampler:
    def __init__(self, workstations: dict[str, str], mark: str, tc_argv: list[str] | None,
                 proc: str = PROC) -> None:
        self.workstations = workstations  # name -> container id
        self.mark, self.tc_argv, self.proc = mark, tc_argv, proc
        self.pids: dict[str, int] = {}

    def pid(self, ws: str) -> int | None:
        cid, pid = self.workstations[ws], self.pids.get(ws)
        if pid is None or not alive(pid, cid, self.proc):
            pid = find_pid(cid, self.proc)
            if pid is None:
                self.pids.pop(ws, None)
                return None
            self.pids[ws] = pid
        return pid

    def sample(self, timeout_s: float = 5.0) -> dict:
        """{"t": wall clock, "ws": {name: {"t", "files", "procs_ns", "tc"}}}; a workstation
        with no process now is left out."""
        out: dict[str, dict] = {}
        for ws in self.workstations:
            pid = self.pid(ws)
            if pid is None:
                continue
            t = time.time()
            got = read(f"{self.proc}{pid}/root/", self.mark)
            if not any(v is not None for v in got["files"].values()):
                self.pids.pop(ws, None)  # it ended while being read
                continue
            got["t"] = t
            got["files"] = {k: v for k, v in got["files"].items() if v is not None}
            got["tc"] = read_tc(pid, self.tc_argv, timeout_s) if self.tc_argv else ""
            out[ws] = got
        return {"t": time.time(), "ws": out}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--interval", type=float, default=1.0, help="seconds between lines")
    p.add_argument("--mark", default="agents/owner.py", help="text in the owner processes' command lines")
    p.add_argument("--tc", default="", help="the tc read to run in each workstation's namespace")
    p.add_argument("--linger", type=float, default=120.0, help="stop after this long with no workstation seen")
    p.add_argument("workstations", nargs="+", help="NAME=CONTAINER_ID")
    a = p.parse_args(argv)
    pairs = [w.partition("=") for w in a.workstations]
    bad = [w for w, eq, cid in pairs if not eq or not cid]
    if bad or a.interval <= 0:
        p.error(f"workstations: NAME=CONTAINER_ID, not {bad[0]!r}" if bad else "--interval: must be above 0")
    s = Sampler({w: cid for w, _, cid in pairs}, a.mark, shlex.split(a.tc) or None)
    seen = time.monotonic()
    nxt = time.monotonic()
    while True:
        line = s.sample(timeout_s=max(1.0, a.interval * 2))
        if line["ws"]:
            seen = time.monotonic()
        elif time.monotonic() - seen > a.linger:
            return 0
        try:
            sys.stdout.write(json.dumps(line, separators=(",", ":")) + "\n")
            sys.stdout.flush()
        except BrokenPipeError:
            return 0
        nxt += a.interval
        time.sleep(max(0.0, nxt - time.monotonic()))
        if time.monotonic() - nxt > a.interval:
            nxt = time.monotonic()  # fell behind (a slow read): start the beat again, not a burst


if __name__ == "__main__":
    sys.exit(main())
