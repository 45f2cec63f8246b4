"""Benchmark: speed stability (nowlab issue 12) — how repeatable is a dedicated run's time?

    .venv/bin/python -m checks.speed_stability --runs 10 --procs 1 8 --speed 0.1 --work 1.0
    .venv/bin/python -m checks.speed_stability --runs 3 --procs 1 2 --workstations 2   # short

Brings up its own cluster of speed workstations (reference cores), then runs the synthetic
job dedicated, over and over, interleaving p and governor off/on (round-robin, so slow
drift of the host hits every arm alike). For each p it reports the coefficient of
variation of three times: the raw time with the governor off; the raw time with it on;
and the normalised time, raw x delivered speed / nominal speed, where the delivered speed
is the meter's (testbed.meter.speed_over, both kernels: the blend the governor holds;
multiply samples alone normalised worse in the short run, 2-7% against 2-4%).
Targets: <= 2% normalised; with the governor as low as its headroom allows. The full run
needs the machine to itself (10 runs x 2 p x 2 arms over >= 15 minutes).
Prints one JSON line per run, then a table.
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import time
from pathlib import Path

from benchmarks._common import table
from testbed import cluster, from_dict, keeper, state
from testbed.meter import speed_over
from workloads.host.malleable import parse_result


def cv(xs: list[float]) -> float:
    return statistics.pstdev(xs) / statistics.mean(xs) if len(xs) > 1 else float("nan")


def one_run(c, hosts: list[str], phases: int, work: float, speed: float) -> dict:
    argv = ["python3", "-m", "workloads.synthetic", "--job", f"bench-speed-{time.time_ns() % 10**9}",
            "--hosts", ",".join(hosts), "--phases", str(phases), "--work", str(work), "--redist-bytes", "0"]
    result = c.mpirun_popen(hosts, argv).wait(1800)
    t_end = time.time()
    report = parse_result(result.stdout)
    if result.exit_code != 0 or report is None:
        raise RuntimeError(result.stderr[-2000:])
    raw = float(report["compute_s"])
    d = state.cluster_dir(c.name)
    delivered = [speed_over(d, ws, t_end - raw, t_end).speed for ws in hosts]  # both kernels, as governed
    known = [x for x in delivered if x is not None]
    norm = raw * statistics.mean(known) / speed if len(known) == len(delivered) else None
    return {"raw_s": raw, "delivered": delivered, "normalised_s": norm, "t_end": t_end}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10, help="runs per (p, governor) arm")
    parser.add_argument("--procs", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--workstations", type=int, default=None, help="default: the largest p")
    parser.add_argument("--speed", type=float, default=0.1, help="reference cores per workstation")
    parser.add_argument("--work", type=float, default=1.0, help="reference-seconds per phase, all ranks")
    parser.add_argument("--phases", type=int, default=10)
    parser.add_argument("--name", default="bench-speed")
    parser.add_argument("--keep", type=Path, default=Path("bench-speed-out"),
                        help="folder to copy the meter's and the keeper's CSVs and the runs into")
    args = parser.parse_args()
    n = args.workstations or max(args.procs)
    spec = from_dict({"name": args.name, "workstation": [{"name": "ws", "count": n, "speed": args.speed}]})
    arms = [(p, on) for p in args.procs for on in (False, True)]
    out: dict[tuple[int, bool], list[dict]] = {a: [] for a in arms}
    with cluster(spec) as c:
        time.sleep(3.0)  # the governor settles
        for i in range(args.runs):
            for p, on in arms:
                keeper.set_governing(c.name, on)
                time.sleep(1.5)  # a few ticks at the new setting
                row = {"bench": "speed_stability", "run": i, "p": p, "governor": on,
                       **one_run(c, c.workstations[:p], args.phases, args.work * p / max(args.procs),
                                 args.speed)}
                out[(p, on)].append(row)
                print(json.dumps(row), flush=True)
        args.keep.mkdir(parents=True, exist_ok=True)
        for f in ("meter.csv", "quotas.csv"):
            shutil.copy(state.cluster_dir(c.name) / f, args.keep / f)
        (args.keep / "runs.json").write_text(json.dumps([r for rs in out.values() for r in rs], indent=1))
    rows = []
    for p in args.procs:
        off, on = out[(p, False)], out[(p, True)]
        norm = {arm: [r["normalised_s"] for r in rs if r["normalised_s"] is not None]
                for arm, rs in (("off", off), ("on", on))}
        rows.append([str(p), str(len(off)), f"{statistics.median(r['raw_s'] for r in off):.2f}",
                     f"{cv([r['raw_s'] for r in off]):.2%}", f"{cv([r['raw_s'] for r in on]):.2%}",
                     *(f"{cv(norm[a]):.2%}" if len(norm[a]) == len(off) else "raw only (meter gap)"
                       for a in ("off", "on"))])
    table("speed stability: CV of the job's time (others may have been running)",
          ["p", "runs/arm", "median raw s (off)", "CV raw, gov off", "CV raw, gov on", "CV norm, gov off",
           "CV norm, gov on"],
          rows)


if __name__ == "__main__":
    main()
