"""Why do identical CG jobs differ? A slow host, or ranks that wait for each other (issue 12).

    python -m benchmarks.coupling_probe                       # now8-governed, four arms, 6 runs each, ~8 min
    python -m benchmarks.coupling_probe --arms 1:0 4:0 4:1 4:4 --fraction 0.5 --reps 6 --csv runs.csv

The demo's CG jobs on four workstations varied by 8-15% (CV) between identical runs, and the
meter explained only part of it; 8 short runs on now8-governed varied 5.4% on one
workstation and 10.2% on four (experiments/results/demo/2026-11-29/README.md). Two causes
predict different things:
- the host's speed: each rank needs more CPU time for the same products, so the ranks'
  CPU seconds in the matrix-vector product (the job's own kernel, timed in thread CPU time
  by workloads/cg.py) vary with the job's time;
- coupling under CFS quotas: each rank gets its CPU late, out of phase with its peers, and
  waits for them; the CPU per product stays put while the time varies, and the variation
  grows with p.
The same question decides Sanjay & Vadhiyar's model error (experiments/results/sanjay-vadhiyar/
residuals.md): at one minAvgAvailCPU, jobs with several loaded workstations ran 16-26% slower
than predicted and jobs with one did not; Eq. 1 sees only the minimum. So the arms are
P:LOADED: the job on the first P workstations with the first LOADED of them held at
--fraction of their CPU by cap mode (as §5.1's loads are). 4:1 and 4:4 have the same minimum;
with no coupling cost they take the same time. Arms interleaved, their order turning. Per
run: the compute time, the ranks' CPU seconds (all, and in the product), the meter's
delivered speed over the run, and the members' CFS throttling (periods throttled and time
throttled, from the cgroups on this host). It prints each arm's CV and
how much of the time's variance each reading explains (r²).
"""
from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks._common import table  # noqa: E402

from testbed import lifecycle, state  # noqa: E402
from testbed.backends.docker.cgroups import cgroup_file  # noqa: E402
from testbed.cluster import Cluster  # noqa: E402
from testbed.meter import speed_over  # noqa: E402
from testbed.spec import load as load_spec  # noqa: E402
from experiments.studies.sanjay_vadhiyar.live import loaded  # noqa: E402
from experiments.studies.sanjay_vadhiyar.load_draws import CpuLoad, LoadDraw  # noqa: E402
from workloads.host.malleable import parse_result  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def throttling(cid: str) -> tuple[int, int, float]:
    """(periods, periods throttled, seconds throttled) of a container's CFS quota so far."""
    stat = dict(line.split() for line in cgroup_file(cid, "cpu", "cpu.stat").read_text().splitlines())
    return int(stat["nr_periods"]), int(stat["nr_throttled"]), int(stat["throttled_time"]) / 1e9


def one_run(c: Cluster, hosts: list[str], n: int, iterations: int, loaded_ws: list[str], fraction: float) -> dict:
    """One dedicated run, the loaded workstations held at `fraction` for its length."""
    draw = LoadDraw(cpu=tuple(CpuLoad(ws, fraction) for ws in loaded_ws))
    with loaded(c, draw):
        time.sleep(1.5 if loaded_ws else 0.0)  # the governor's ticks at the new caps
        return measure_run(c, hosts, n, iterations)


def measure_run(c: Cluster, hosts: list[str], n: int, iterations: int) -> dict:
    argv = ["python3", "-m", "workloads.cg", "--job", f"probe-{time.time_ns() % 10**9}", "--hosts", ",".join(hosts),
            "--n", str(n), "--iterations", str(iterations)]
    before = {ws: throttling(c.container_id(ws)) for ws in hosts}
    result = c.mpirun_popen(hosts, argv).wait(1800)
    t_end = time.time()
    after = {ws: throttling(c.container_id(ws)) for ws in hosts}
    report = parse_result(result.stdout)
    if result.exit_code != 0 or report is None:
        raise RuntimeError(result.stderr[-2000:])
    raw = float(report["compute_s"])
    delivered = [speed_over(state.cluster_dir(c.name), ws, t_end - raw, t_end).speed for ws in hosts]
    periods = sum(after[ws][0] - before[ws][0] for ws in hosts)
    return {"compute_s": raw, "cpu_s_mean": report["cpu_s_mean"], "cpu_s_max": report["cpu_s_max"],
            "matvec_cpu_s_mean": report["matvec_cpu_s_mean"], "matvec_cpu_s_max": report["matvec_cpu_s_max"],
            "delivered": statistics.mean(d for d in delivered if d is not None) if any(delivered) else None,
            "throttled_share": sum(after[ws][1] - before[ws][1] for ws in hosts) / max(periods, 1),
            "throttled_s": sum(after[ws][2] - before[ws][2] for ws in hosts) / len(hosts), "t_end": t_end}


def parse_arm(text: str) -> tuple[int, int]:
    p, _, k = text.partition(":")
    try:
        procs, loaded_n = int(p), int(k or 0)
    except ValueError:
        raise SystemExit(f"arms: P:LOADED with whole numbers, not {text!r}") from None
    if procs < 1 or not 0 <= loaded_n <= procs:
        raise SystemExit(f"arms: need P >= 1 and 0 <= LOADED <= P, not {text!r}")
    return procs, loaded_n


def r2(x: pd.Series, y: pd.Series) -> float:
    ok = x.notna() & y.notna()
    return float(np.corrcoef(x[ok], y[ok])[0, 1] ** 2) if ok.sum() > 2 else float("nan")


def report(runs: pd.DataFrame) -> None:
    rows = []
    for (p, k), g in runs.groupby(["procs", "loaded"]):
        def cv(col: str) -> str:
            v = g[col].dropna()
            return f"{100 * v.std(ddof=1) / v.mean():.1f}%" if len(v) > 1 else "-"

        norm = g.compute_s * g.delivered / g.delivered.median()
        rows.append([f"{p}:{k}", str(len(g)), f"{g.compute_s.median():.2f}", cv("compute_s"),
                     f"{100 * norm.std(ddof=1) / norm.mean():.1f}%", cv("matvec_cpu_s_mean"), cv("cpu_s_mean"),
                     f"{r2(g.matvec_cpu_s_mean, g.compute_s):.2f}", f"{r2(1 / g.delivered, g.compute_s):.2f}",
                     f"{r2(g.throttled_s, g.compute_s):.2f}", f"{g.throttled_share.median():.2f}"])
    table("identical CG runs: what moves with the time",
          ["P:loaded", "runs", "median compute s", "CV time", "CV time x meter", "CV CPU in the product",
           "CV CPU in all", "r² product CPU", "r² 1/meter", "r² throttled time", "periods throttled"], rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spec", type=Path, default=ROOT / "compose/specs/now8-governed.toml")
    ap.add_argument("--arms", nargs="+", default=["1:0", "4:0", "4:1", "4:4"],
                    help="P:LOADED: run on the first P workstations, the first LOADED of them held at --fraction")
    ap.add_argument("--fraction", type=float, default=0.5, help="CPU left on a loaded workstation (cap mode)")
    ap.add_argument("--reps", type=int, default=6)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--iterations", type=int, default=300)
    ap.add_argument("--csv", type=Path, default=None, help="every run, one row each")
    ap.add_argument("--replot", type=Path, default=None, help="no runs: the table from this CSV")
    a = ap.parse_args()
    if a.replot is not None:
        report(pd.read_csv(a.replot))
        return
    arms = [parse_arm(x) for x in a.arms]
    spec = load_spec(a.spec).with_name("probe-coupling")
    rows = []
    c = lifecycle.start(spec)
    try:
        time.sleep(3.0)  # the governor settles
        for rep in range(a.reps):
            for p, k in arms[rep % len(arms):] + arms[:rep % len(arms)]:  # the order turns: drift hits every arm
                hosts = c.workstations[:p]
                row = {"rep": rep, "procs": p, "loaded": k, **one_run(c, hosts, a.n, a.iterations, hosts[:k], a.fraction)}
                rows.append(row)
                print(json.dumps(row), flush=True)
    finally:
        c.down()
    runs = pd.DataFrame(rows)
    if a.csv:
        runs.to_csv(a.csv, index=False)
    report(runs)


if __name__ == "__main__":
    main()
