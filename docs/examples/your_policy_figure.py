"""The figure of docs/your-policy.md: SJF-HALF (docs/examples/sjf_half.py) beside RA and Folding,
simulated on 16 workstations at four arrival rates.

    python docs/examples/your_policy_figure.py --out experiments/results/your-policy

For each rate it writes a jobs CSV (a seeded Poisson stream, 70% short and 30% long jobs of the
Sevcik model), runs `nowlab simulate` on it once per policy (each command is printed, and is
what a user would type), then reads the per-job CSVs and writes `summary.csv` and
`your-policy.png` (mean response of all, short and long jobs against the arrival rate).
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
P = 16
RATES = (0.02, 0.04, 0.06, 0.08)  # jobs/s; the machine saturates near 0.1/s
JOBS = 1000
SEED = 48
POLICIES = ("RA", "FOLDING", f"{(HERE / 'sjf_half.py').relative_to(REPO)}:ShortestFirstHalf")
# (share, W reference-s, alpha s, beta s per workstation, phases): T(p) = W/p + alpha + beta p
CLASSES = {"short": (0.7, 40.0, 0.5, 0.2, 10), "long": (0.3, 400.0, 1.0, 0.2, 40)}


def jobs_csv(rate: float, path: Path) -> pd.DataFrame:
    """A seeded stream at `rate`: exponential gaps, each job short or long by the shares."""
    rng = np.random.default_rng([SEED, int(rate * 1000)])
    arrival = np.cumsum(rng.exponential(1.0 / rate, JOBS))
    names = list(CLASSES)
    cls = rng.choice(names, size=JOBS, p=[CLASSES[c][0] for c in names])
    frame = pd.DataFrame({"id": np.arange(1, JOBS + 1), "arrival": arrival.round(3), "cls": cls})
    for i, col in enumerate(("W", "alpha", "beta"), start=1):
        frame[col] = [CLASSES[c][i] for c in cls]
    frame["pmax"] = ""  # eq. 6 of A&S: ceil(sqrt(W / beta)), capped at P by the engine
    frame["phases"] = [CLASSES[c][4] for c in cls]
    frame.drop(columns="cls").to_csv(path, index=False)
    return frame


def simulate(jobs: Path, policy: str, out: Path) -> Path:
    """One `nowlab simulate` run, as the guide writes it; returns its per-job CSV."""
    per_job = out / f"{jobs.stem}-{policy.rsplit(':', 1)[-1].lower()}.csv"
    argv = ["nowlab", "simulate", _shown(jobs), "--policy", policy, "-P", str(P),
            "--timeline", _shown(out / "timeline.csv"), "--jobs-out", _shown(per_job)]
    print("$ " + " ".join(argv), flush=True)
    subprocess.run([sys.executable, "-m", *argv], cwd=REPO, check=True, stdout=subprocess.DEVNULL)
    return per_job


def _shown(path: Path) -> str:
    """A path as the guide writes it: relative to the repository when inside it."""
    return str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "experiments" / "results" / "your-policy")
    args = parser.parse_args()
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for rate in RATES:
        path = out / f"jobs-{rate:g}.csv"
        stream = jobs_csv(rate, path).set_index("id")
        for policy in POLICIES:
            done = pd.read_csv(simulate(path, policy, out)).set_index("job_id")
            done["cls"] = stream.cls
            name = "SJF-HALF" if ":" in policy else policy
            for group, part in (("all", done), *done.groupby("cls")):
                rows.append({"policy": name, "rate": rate, "jobs": group, "n": len(part),
                             "mean_response_s": part.turnaround_time.mean(),
                             "mean_wait_s": part.waiting_time.mean(),
                             "mean_partition": part.mean_partition.mean()})
    summary = pd.DataFrame(rows)
    summary.to_csv(out / "summary.csv", index=False, float_format="%.4g")
    plot(summary, out / "your-policy.png")
    print(f"wrote {_shown(out / 'summary.csv')} and {_shown(out / 'your-policy.png')}")


def plot(summary: pd.DataFrame, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(12, 3.6), sharex=True)
    for ax, group in zip(axes, ("all", "short", "long")):
        for policy, part in summary[summary.jobs == group].groupby("policy", sort=False):
            ax.plot(part.rate, part.mean_response_s, marker="o", label=policy)
        ax.set_title(f"{group} jobs")
        ax.set_xlabel("arrival rate (jobs/s)")
        ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("mean response (s)")
    axes[0].legend()
    fig.suptitle(f"Simulated, P = {P}, {JOBS} jobs per rate (docs/examples/your_policy_figure.py)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
