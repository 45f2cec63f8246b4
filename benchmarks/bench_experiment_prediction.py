"""Prediction accuracy of live experiments: measured against predicted, per cell.

Targets (issue: experiments end to end): mean response time of each (policy, rate) cell
within 10%, median per-job execution time within 5%. Either runs an experiment
(`--config`, default the tiny 4-workstation one; `experiments/configs/demo.toml` is the
demo) or reads stored results (`--results`, e.g. the demo's `results/demo-*.sqlite`),
and prints each cell's errors with the median absolute error over the cells.

    .venv/bin/python benchmarks/bench_experiment_prediction.py
    .venv/bin/python benchmarks/bench_experiment_prediction.py --results results/demo-....sqlite
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from _common import console, table

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", type=Path, default=ROOT / "tests" / "data" / "exp_tiny.toml")
    parser.add_argument("--results", type=Path, default=None, help="analyse these results instead of running")
    args = parser.parse_args()
    from experiments.report import analyse

    results = args.results
    if results is None:
        from experiments.live import run_experiment
        results = Path(tempfile.mkdtemp(prefix="nowlab-bench-")) / "bench.sqlite"
        run_experiment(args.config, out=results, resume=False)
    a = analyse(results)
    targets = a.config.get("targets", {"response_rel": 0.10, "execution_rel": 0.05})
    rows, resp, exe = [], [], []
    for r in a.compared.itertuples():
        resp.append(abs(r.err_response))
        exe.append(abs(r.err_median_execution))
        rows.append([r.policy, f"{r.rate:g}", f"{r.measured_response:.2f}", f"{r.predicted_response:.2f}",
                     f"{r.err_response:+.1%}", f"{r.measured_median_execution:.2f}",
                     f"{r.predicted_median_execution:.2f}", f"{r.err_median_execution:+.1%}"])
    table(f"{a.config.get('name')}: measured against predicted ({results})",
          ["policy", "rate /s", "response meas. s", "pred. s", "error", "median exec. meas. s", "pred. s", "error"],
          rows)
    console.print(f"median |error| over {len(rows)} cells: response {statistics.median(resp):.1%} "
                  f"(target {targets['response_rel']:.0%}, met in {sum(e <= targets['response_rel'] for e in resp)}), "
                  f"median execution {statistics.median(exe):.1%} (target {targets['execution_rel']:.0%}, "
                  f"met in {sum(e <= targets['execution_rel'] for e in exe)})")


if __name__ == "__main__":
    main()
