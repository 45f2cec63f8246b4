"""Benchmark: what an owner's burst costs a coupled guest job in cap mode (nowlab issue 12).

    .venv/bin/python -m checks.owner_burst_cost --runs 4
    .venv/bin/python -m checks.owner_burst_cost --runs 2 --burst 0.4 --every 2.0   # short

The demo's owners are a schedule of bursts carried out as caps (testbed.load.caps), and the
engine predicts a job that spans a held workstation to lose exactly the bursts' length
(scheduler.engine, `schedule`). This checks that on the real thing: a synthetic job on
`--procs` speed workstations, alternately dedicated and with regular bursts (cap to the floor
for `--burst` s every `--every` s) on the last one, interleaved so the host's drift hits both
alike. Reported: the compute time lost per run against the bursts' length inside its
compute (what the engine charges), as a ratio; 1.0 means the engine's charge is right.
Prints one JSON line per run, then a table.
"""
from __future__ import annotations

import argparse
import json
import statistics
import time

from benchmarks._common import table
from testbed import cluster, from_dict
from testbed.load.caps import CapController
from workloads.host.malleable import parse_result


def one_run(c, hosts: list[str], phases: int, work: float, bursts: list[tuple[float, float]] | None) -> dict:
    argv = ["python3", "-m", "workloads.synthetic", "--job", f"bench-burst-{time.time_ns() % 10**9}",
            "--hosts", ",".join(hosts), "--phases", str(phases), "--work", str(work), "--redist-bytes", "0"]
    caps = CapController(c, {hosts[-1]: bursts}, mode="bench") if bursts else None
    t0 = time.monotonic()
    if caps is not None:
        caps.start()
    try:
        result = c.mpirun_popen(hosts, argv).wait(1800)
    finally:
        if caps is not None:
            caps.stop(restore=True)
    wall = time.monotonic() - t0
    report = parse_result(result.stdout)
    if result.exit_code != 0 or report is None:
        raise RuntimeError(result.stderr[-2000:])
    compute = float(report["compute_s"])
    held = 0.0
    if bursts:  # seconds of the job's compute (its last compute_s) during which the last workstation was held
        lo = wall - compute
        steps = bursts + [(float("inf"), 1.0)]
        for (a, f), (b, _) in zip(steps, steps[1:]):
            if f < 1.0:
                held += max(0.0, min(b, wall) - max(a, lo))
    return {"wall_s": wall, "compute_s": compute, "held_s": held,
            "max_lag_s": caps.metadata()["max_lag_s"] if caps else 0.0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=4, help="runs per arm (dedicated, with bursts)")
    parser.add_argument("--procs", type=int, default=4)
    parser.add_argument("--speed", type=float, default=0.3, help="reference cores per workstation (governed)")
    parser.add_argument("--cpu", type=float, default=None, help="a raw cap in cores instead of --speed (no governor)")
    parser.add_argument("--work", type=float, default=0.4, help="reference-seconds per phase, all ranks")
    parser.add_argument("--phases", type=int, default=20)
    parser.add_argument("--burst", type=float, default=0.4, help="seconds an owner holds the workstation")
    parser.add_argument("--every", type=float, default=2.4, help="seconds from one burst's start to the next")
    parser.add_argument("--name", default="bench-burst")
    args = parser.parse_args()
    bursts: list[tuple[float, float]] = []
    t = 0.5
    while t < 600:
        bursts += [(t, 0.0), (t + args.burst, 1.0)]
        t += args.every
    spec = from_dict({"name": args.name, "defaults": {"egress": "100mbit"},
                      "workstation": [{"name": "ws", "count": args.procs,
                                       **({"cpu": args.cpu} if args.cpu else {"speed": args.speed})}]})
    rows_out: dict[str, list[dict]] = {"dedicated": [], "bursts": []}
    with cluster(spec) as c:
        time.sleep(3.0)  # the governor settles
        one_run(c, c.workstations, args.phases, args.work, None)  # warm-up: the first launch imports
        for i in range(args.runs):
            for arm in ("dedicated", "bursts"):
                row = {"bench": "owner_burst_cost", "run": i, "arm": arm,
                       **one_run(c, c.workstations, args.phases, args.work, bursts if arm == "bursts" else None)}
                rows_out[arm].append(row)
                print(json.dumps(row), flush=True)
    base = statistics.median(r["compute_s"] for r in rows_out["dedicated"])
    ratios = [(r["compute_s"] - base) / r["held_s"] for r in rows_out["bursts"] if r["held_s"] > 0]
    table(f"owner bursts of {args.burst:g} s every {args.every:g} s on 1 of {args.procs} workstations (cap mode)",
          ["arm", "runs", "median compute s", "median held s (in compute)", "lost / held (engine: 1.0)"],
          [["dedicated", str(args.runs), f"{base:.2f}", "0", "-"],
           ["bursts", str(args.runs), f"{statistics.median(r['compute_s'] for r in rows_out['bursts']):.2f}",
            f"{statistics.median(r['held_s'] for r in rows_out['bursts']):.2f}",
            f"{statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f})" if ratios else "n/a"]])

if __name__ == "__main__":
    main()
