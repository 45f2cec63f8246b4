"""The engine now against the engine at an earlier commit, side by side in one run.

Written for the move of the engine's checks into scheduler/state_machine.py
(issue "One house plan"): the target is no more than 10% slower. The earlier
engine's source is read with `git show REV:scheduler/engine.py` and loaded as
a module beside today's; both run the same WK4 stream (bench_scheduler_engine)
under every policy, interleaved, and must agree event by event.

    .venv/bin/python -m benchmarks.bench_engine_before_after [--rev 5b00ac2] [--jobs 20000] [--repeats 5]

Prints per policy: the median seconds of each, the ratio now / before (of the
medians, and of each side's fastest run: deterministic code on a host whose speed
wanders 10-20% is best compared by its fastest runs), and whether the two runs
agree (timeline and per-job records equal).
"""
from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from benchmarks.bench_scheduler_engine import wk4
from scheduler.engine import simulate
from scheduler.registry import get_policy, policy_names

ROOT = Path(__file__).resolve().parent.parent
TARGET_RATIO = 1.10


def engine_at(rev: str):
    """scheduler/engine.py as it was at `rev`, loaded as a module of its own."""
    source = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:scheduler/engine.py"],
                            check=True, capture_output=True, text=True).stdout
    spec = importlib.util.spec_from_loader(f"engine_at_{rev}", loader=None)
    module = importlib.util.module_from_spec(spec)
    exec(compile(source, f"{rev}:scheduler/engine.py", "exec"), module.__dict__)
    return module


def timed(fn) -> tuple[float, object]:
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rev", default="5b00ac2", help="the commit to compare with (default: before the state machine)")
    ap.add_argument("--jobs", type=int, default=20000)
    ap.add_argument("--load", type=float, default=0.7)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--P", type=int, default=32)
    args = ap.parse_args()
    before = engine_at(args.rev)
    jobs = wk4(args.jobs, args.load, args.P)
    table = Table(title=f"engine now vs at {args.rev}: {args.jobs} WK4 jobs, P={args.P}, "
                        f"{args.repeats} interleaved runs each, timeline on")
    for col in ("policy", f"{args.rev} s", "now s", "now / before", "min now / min before", "agree"):
        table.add_column(col, justify="right")
    totals = {"before": 0.0, "now": 0.0}
    mins = {"before": 0.0, "now": 0.0}
    worst = 0.0
    for name in policy_names():
        times: dict[str, list[float]] = {"before": [], "now": []}
        for _ in range(args.repeats):  # alternate, so a burst of outside load hits both alike
            s, old = timed(lambda: before.simulate(jobs, get_policy(name), args.P))
            times["before"].append(s)
            s, new = timed(lambda: simulate(jobs, get_policy(name), args.P))
            times["now"].append(s)
        agree = old.timeline == new.timeline and old.jobs == new.jobs
        b, n = statistics.median(times["before"]), statistics.median(times["now"])
        totals["before"] += b
        totals["now"] += n
        mb, mn = min(times["before"]), min(times["now"])
        mins["before"] += mb
        mins["now"] += mn
        worst = max(worst, n / b)
        table.add_row(name, f"{b:.3f}", f"{n:.3f}", f"{n / b:.3f}", f"{mn / mb:.3f}", "yes" if agree else "NO")
    table.add_row("all", f"{totals['before']:.3f}", f"{totals['now']:.3f}",
                  f"{totals['now'] / totals['before']:.3f}", f"{mins['now'] / mins['before']:.3f}", "")
    console = Console()
    console.print(table)
    ratio = totals["now"] / totals["before"]
    console.print(f"summed over the policies: now / before = {ratio:.3f} (medians; {mins['now'] / mins['before']:.3f} "
                  "from each side's fastest run, less sensitive to this host's noise) "
                  f"({'within' if ratio <= TARGET_RATIO else 'OVER'} the {TARGET_RATIO:.2f} target); "
                  f"worst single policy {worst:.3f}")


if __name__ == "__main__":
    main()
