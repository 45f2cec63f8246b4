"""Switch cost of the local job manager (Zhou & Brent §5): slot end -> the next process running.

Starts containers/agents/timeshare_manager.py on 127.0.0.1 (no Docker), checks in `--jobs`
CPU-burning processes as jobs, gives a round of equal slots of `--slot-s`, and after
`--duration-s` reads the manager's switch latencies, the part of them the timer's wake-up owes,
its own CPU time, and each job's CPU time from /proc. One job runs at a time, so it keeps one
core busy.
Run: .venv/bin/python -m benchmarks.bench_timeshare_switch --slot-s 0.1 --duration-s 10
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from benchmarks._common import console, table
from rich.progress import Progress

from experiments.studies.zhou_brent.host import AGENT, manager_env
from experiments.studies.zhou_brent.manager_client import ManagerClient, WireSlot
from workloads import channel_auth

CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid: int) -> float:
    f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / CLK_TCK


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--slot-s", type=float, default=0.1)
    p.add_argument("--duration-s", type=float, default=10.0)
    a = p.parse_args()
    if a.jobs < 1 or a.slot_s <= 0 or a.duration_s <= 0:
        raise SystemExit("error: --jobs, --slot-s and --duration-s must be positive")
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(a.jobs)]
    secret = channel_auth.new_secret()
    manager = subprocess.Popen([sys.executable, str(AGENT), "--name", "bench", "--host", "127.0.0.1", "--port", "0"],
                               env=manager_env(secret), stdout=subprocess.PIPE, text=True)
    try:
        client = ManagerClient("127.0.0.1", int(manager.stdout.readline().split()[2]), secret=secret)
        for i, b in enumerate(burners):
            client.checkin(f"J{i}", b.pid)
        client.table(a.slot_s * a.jobs, [WireSlot(f"J{i}", a.slot_s) for i in range(a.jobs)])
        start_cpu = [cpu_s(b.pid) for b in burners]
        start_manager_cpu_s = client.status().cpu_s
        start_s = time.monotonic()
        with Progress(console=console, transient=True) as progress:
            task = progress.add_task("switching", total=a.duration_s)
            while (elapsed := time.monotonic() - start_s) < a.duration_s:
                progress.update(task, completed=elapsed)
                time.sleep(min(0.2, a.duration_s - elapsed))
        status = client.status()
        wall_s = time.monotonic() - start_s
        used = [cpu_s(b.pid) - c for b, c in zip(burners, start_cpu)]
    finally:
        for b in burners:
            b.kill()
        manager.terminate()
        manager.wait(timeout=5)
        for b in burners:
            b.wait(timeout=5)
    ms = lambda v: f"{v * 1e3:.3f}" if v is not None else "-"  # noqa: E731
    table(f"{a.jobs} jobs, slots of {a.slot_s:g} s, {wall_s:.1f} s on this host",
          ["", "count", "median (ms)", "95th pct (ms)", "max (ms)"],
          [["slot end -> next process continued", str(status.latency.count), ms(status.latency.median_s),
            ms(status.latency.p95_s), ms(status.latency.max_s)],
           ["slot end -> timer awake", str(status.wake_late.count), ms(status.wake_late.median_s),
            ms(status.wake_late.p95_s), ms(status.wake_late.max_s)]])
    total = sum(used)
    console.print(f"manager CPU: {status.cpu_s - start_manager_cpu_s:.3f} s "
                  f"({(status.cpu_s - start_manager_cpu_s) / wall_s:.2%} of a core), {status.switches} switches; "
                  f"jobs' CPU shares: {', '.join(f'{u / total:.3f}' for u in used)} (each should be {1 / a.jobs:.3f})")


if __name__ == "__main__":
    main()
