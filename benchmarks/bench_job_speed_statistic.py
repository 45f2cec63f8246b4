"""Benchmark: which summary of a job's workstations' metered speeds explains its time best.

    .venv/bin/python benchmarks/bench_job_speed_statistic.py RESULTS.sqlite [...] [--out DIR]

A live job's delivered speed (experiments/delivered.py) was, until 30 Nov 2026, the slowest of
its workstations' speeds over its span, each the mean of quota x core factor
(testbed/meter.py); since then it is their mean, on this benchmark's finding. For a job on 8
workstations over two cores that is the lower of two short, noisy averages, and a minimum of
noisy readings lies under what it summarises. Whether it also lies under the speed the job
got is a question for the jobs' own times: a class's jobs that kept one partition of p
workstations did the same work, so if a statistic s is the speed that set their pace, time x s
is the same for all of them (time x s / demand, where the demand varies), and the spread of time x s across them is smallest for the
statistic that explains their variation best. (Median and mean agree on two cores: the
workstations of one core share its factor.)

From each stored run's own meter series (kept as artifacts), this recomputes every such job's
per-workstation speeds and summarises them as the minimum, the mean and the median; it checks
the recomputed figures against the one stored (the median of min / stored should be 1 for a
run made before 30 Nov 2026, of mean / stored after; the segment's epoch start is taken from
the store, a little off the executor's clock), then prints per
(class, p) the coefficient of variation of time, time x min, time x mean and time x median,
and the mean of min / mean. With --out it writes statistic.md, statistic.csv and statistic.png.
"""
from __future__ import annotations

import csv
import io
import statistics
import tempfile
from pathlib import Path

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
from _common import console, stored_runs_args, table, write_report  # noqa: E402  (also puts the repo on sys.path)

from testbed.meter import delivered_speed, read_quotas, read_samples  # noqa: E402
from experiments.report import md_table  # noqa: E402
from experiments.store import ResultsStore  # noqa: E402

STATISTICS = ("min", "mean", "median")


def unresized_jobs(store: ResultsStore) -> list[dict]:
    """Done jobs with one launch and no preemption: cls, p, hosts, epoch span (the segment's
    stored start plus the job's times on its clock), time and demand, and the stored ratio."""
    jobs = store.jobs_frame()
    jobs = jobs[(jobs.status == "done") & (jobs.preemptions == 0) & jobs.delivered_speed.notna()]
    out = []
    for cell, mine in jobs.groupby("cell_id"):
        artifacts = store.artifacts(int(cell))
        segments = {seg["seq"]: seg for seg in store.segments(int(cell))}
        launches: dict[int, list[str]] = {}
        for seq in segments:
            for row in csv.DictReader(io.StringIO(artifacts.get(f"runs-{seq}.csv", ""))):
                launches.setdefault(int(row["job"]), []).append(row["hosts"])
        for j in mine.itertuples():
            runs = launches.get(int(j.job_id), [])
            hosts = runs[0].split(",") if len(runs) == 1 else []
            if len(hosts) != j.max_procs:
                continue
            seg = segments[int(j.segment)]
            epoch = seg["started_at"] - seg["offset_s"]
            out.append({"cls": j.cls, "p": int(j.max_procs), "hosts": hosts, "ratio": j.delivered_speed,
                        "t0": epoch + j.start, "t1": epoch + j.finish, "time_s": j.execution, "demand": j.demand})
    return out


def meter_series(store: ResultsStore, tmp: Path) -> tuple[list, list]:
    """The run's meter samples and quotas, from its artifacts (every calibration's, joined),
    read by the meter's own parsers."""
    samples, quotas = [], []
    for name, text in store.artifacts(None).items():
        if name.startswith(("meter-", "quotas-")):
            path = tmp / name
            path.write_text(text)
            (samples if name.startswith("meter-") else quotas).extend(
                (read_samples if name.startswith("meter-") else read_quotas)(path))
    return samples, quotas


def measure(src: Path) -> pd.DataFrame:
    with ResultsStore.open(src, readonly=True) as store, tempfile.TemporaryDirectory() as tmp:
        run = label(src, store.config.get("name", src.stem))
        refs = {name: data.get("ref_speed") for name, data in store.profiles().items()}
        samples, quotas = meter_series(store, Path(tmp))
        picked = unresized_jobs(store)
    rows = []
    for j in picked:
        speeds = [delivered_speed(samples, quotas, h, j["t0"], j["t1"]).speed for h in j["hosts"]]
        if any(s is None for s in speeds) or not refs.get(j["cls"]):
            continue
        ref = refs[j["cls"]]
        rows.append({"run": run, "cls": j["cls"], "p": j["p"], "time_s": j["time_s"] / j["demand"],
                     "stored": j["ratio"], "min": min(speeds) / ref,
                     "mean": statistics.fmean(speeds) / ref, "median": statistics.median(speeds) / ref})
    return pd.DataFrame(rows)


def label(src: Path, name: str) -> str:
    """The run's name, and its folder when it is one of several runs of a figure (run-DATE-x)."""
    return f"{name} ({src.parent.name})" if src.parent.name.startswith("run-") else name


def cv(values: pd.Series) -> float:
    return float(values.std(ddof=1) / values.mean()) if len(values) > 1 else float("nan")


def summarise(jobs: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (run, cls, p), g in jobs.groupby(["run", "cls", "p"]):
        if len(g) < 5:
            continue
        row = {"run": run, "cls": cls, "p": p, "jobs": len(g),
               "min_vs_stored": float((g["min"] / g["stored"]).median()),
               "mean_vs_stored": float((g["mean"] / g["stored"]).median()),
               "cv_time": cv(g["time_s"])}
        for stat in STATISTICS:
            row[f"cv_time_x_{stat}"] = cv(g["time_s"] * g[stat])
        row["min_over_mean"] = float((g["min"] / g["mean"]).mean())
        rows.append(row)
    return pd.DataFrame(rows)


def plot(summary: pd.DataFrame, by_p: pd.DataFrame, path: Path) -> None:
    """Left: min / mean per (run, class, p) against p. Right: the median spread per statistic."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.6))
    left.scatter(summary["p"], summary["min_over_mean"], s=14, alpha=0.7)
    left.axhline(1.0, color="grey", lw=0.8)
    left.set_xscale("log", base=2)
    left.set_xlabel("workstations p")
    left.set_ylabel("min / mean of the job's workstations' speeds")
    for stat, marker in zip(("cv_time", *(f"cv_time_x_{s}" for s in STATISTICS)), "osx^"):
        right.plot(by_p.index, by_p[stat], marker=marker, label=stat.replace("cv_", "").replace("_x_", " x "))
    right.set_xscale("log", base=2)
    right.set_xlabel("workstations p")
    right.set_ylabel("coefficient of variation (median)")
    right.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> None:
    args = stored_runs_args(__doc__, "statistic.md, statistic.csv and statistic.png")
    frames = []
    for src in args.results:
        frames.append(measure(src))
    jobs = pd.concat(frames, ignore_index=True)
    summary = summarise(jobs)
    cols = ["run", "cls", "p", "jobs", "min_vs_stored", "mean_vs_stored", "cv_time",
            *[f"cv_time_x_{s}" for s in STATISTICS], "min_over_mean"]
    table("spread of a class's unresized jobs' times, raw and times each speed statistic", cols,
          [[str(r[c]) if isinstance(r[c], (str, int)) else f"{r[c]:.3f}" for c in cols]
           for _, r in summary.iterrows()])
    by_p = summary.groupby("p")[[f"cv_time_x_{s}" for s in STATISTICS] + ["cv_time", "min_over_mean"]].median()
    console.print("median over runs and classes, by p:")
    console.print(by_p.round(3).to_string())
    best = summary[[f"cv_time_x_{s}" for s in STATISTICS]].idxmin(axis=1).value_counts()
    console.print("groups where each statistic gives the smallest spread: "
                  + ", ".join(f"{k.removeprefix('cv_time_x_')} {v}" for k, v in best.items()))
    if args.out:
        write_report(args.out, "statistic", summary, lambda path: plot(summary, by_p, path),
                     "Which summary of a job's workstations' speeds explains its time",
                     "bench_job_speed_statistic.py", args.results,
                     md_table(summary.round(4)) + "\n\n## By p, median\n\n"
                     + md_table(by_p.round(4).reset_index()) + "\n\n![statistic](statistic.png)\n")


if __name__ == "__main__":
    main()
