"""Dedicated-run profiling: time a workload at each partition size, fit Sevcik.

`nowlab profile WORKLOAD --procs 1,2,4,8 --reps 3` runs the workload alone on
the first p workstations, `reps` times per p, and writes the speedup curve (the
paper's Figures 1 and 2) with the Sevcik fit and its error at each point.
The time of a run is the job's own report of its iteration loop (compute_s,
coordinator clock), which leaves out mpiexec start-up; the wall time seen from
the host is recorded too. Host side (venv).
"""
from __future__ import annotations

import csv
import json
import os
import shlex
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from workloads.host import sevcik
from workloads.host.launch import Launcher
from workloads.host.malleable import parse_result

WORKLOADS = {"cg": "workloads.cg", "synthetic": "workloads.synthetic", "stencil": "workloads.stencil"}


@dataclass(frozen=True)
class ProfileSpec:
    workload: str
    procs: tuple[int, ...]
    reps: int = 3
    args: tuple[str, ...] = ()       # extra workload arguments, e.g. ("--n", "500")
    timeout_s: float = 1800.0

    def __post_init__(self) -> None:
        if self.workload not in WORKLOADS:
            raise ValueError(f"unknown workload {self.workload!r}; known: {', '.join(WORKLOADS)}")
        if not self.procs or min(self.procs) < 1 or self.reps < 1:
            raise ValueError("need partition sizes >= 1 and at least one repetition")


@dataclass(frozen=True)
class Sample:
    p: int
    rep: int
    time_s: float      # the job's iteration-loop time
    wall_s: float      # launch to exit, host clock
    done_s: float = float("nan")  # launch to the job's done report (what the live executor calls execution)


@dataclass
class Profile:
    spec: ProfileSpec
    samples: list[Sample] = field(default_factory=list)

    def mean_times(self) -> dict[int, float]:
        return {p: float(np.mean([s.time_s for s in self.samples if s.p == p])) for p in self.spec.procs}

    def speedups(self) -> dict[int, float]:
        """Speedup relative to the smallest partition measured, scaled by its size."""
        means = self.mean_times()
        base = min(means)
        return {p: base * means[base] / t for p, t in means.items()}

    def fit(self) -> sevcik.SevcikFit:
        return sevcik.fit([s.p for s in self.samples], [s.time_s for s in self.samples])


def program(workload: str, args: Sequence[str]) -> list[str]:
    return ["python3", "-m", WORKLOADS[workload], *args]


def run(launcher: Launcher, workstations: Sequence[str], spec: ProfileSpec,
        env: dict[str, str] | None = None, log=print) -> Profile:
    """Run every (p, rep) dedicated, one after the other, on workstations[:p]."""
    if max(spec.procs) > len(workstations):
        raise ValueError(f"p = {max(spec.procs)} needs {max(spec.procs)} workstations, "
                         f"the cluster has {len(workstations)}")
    profile = Profile(spec)
    for p in spec.procs:
        hosts = list(workstations[:p])
        for rep in range(spec.reps):
            job = f"profile-{spec.workload}-p{p}-r{rep}-{os.getpid()}-{time.time_ns() % 10**9}"
            argv = [*program(spec.workload, spec.args), "--job", job, "--hosts", ",".join(hosts)]
            t0, launched_at = time.monotonic(), time.time()
            result = launcher.mpirun_popen(hosts, argv, env=env).wait(spec.timeout_s)
            wall = time.monotonic() - t0
            report = parse_result(result.stdout)
            if result.exit_code != 0 or report is None:
                raise RuntimeError(f"{shlex.join(argv)} failed ({result.exit_code}): {result.stderr[-2000:]}")
            done = float(report["done_at"]) - launched_at if "done_at" in report else float("nan")
            sample = Sample(p, rep, float(report["compute_s"]), wall, done)
            profile.samples.append(sample)
            log(f"p={p} rep={rep} time={sample.time_s:.4f}s wall={wall:.2f}s")
    return profile


def write(profile: Profile, out_dir: Path) -> dict[str, Path]:
    """samples.csv, curve.csv (mean, speedup, fit, error per p), fit.json and speedup.png."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {name: out_dir / name for name in ("samples.csv", "curve.csv", "fit.json", "speedup.png")}
    with paths["samples.csv"].open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=["workload", "p", "rep", "time_s", "wall_s", "done_s"])
        writer.writeheader()
        for s in profile.samples:
            writer.writerow({"workload": profile.spec.workload, **asdict(s)})
    model = profile.fit()
    means, speedups = profile.mean_times(), profile.speedups()
    points = sevcik.errors(model, list(means), list(means.values()))
    with paths["curve.csv"].open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["p", "mean_time_s", "speedup", "fit_time_s", "fit_rel_error"])
        for pt in points:
            writer.writerow([pt.p, pt.measured_s, speedups[pt.p], pt.predicted_s, pt.relative_error])
    paths["fit.json"].write_text(json.dumps({"workload": profile.spec.workload, "args": list(profile.spec.args),
                                             "reps": profile.spec.reps, **asdict(model),
                                             "best_p": model.best_p()}, indent=2))
    _plot(profile, model, paths["speedup.png"])
    return paths


FIGSIZE_IN, DPI = (5, 4), 120  # speedup.png is 600 x 480 pixels


def speedup_figure(profile: Profile, model: sevcik.SevcikFit):
    """The speedup figure (measured, the Sevcik fit, linear), kept apart from saving so a test
    can check what it shows."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    speedups = profile.speedups()
    ps = sorted(speedups)
    fig, ax = plt.subplots(figsize=FIGSIZE_IN)
    ax.plot(ps, [speedups[p] for p in ps], "o-", label="measured")
    grid = np.linspace(min(ps), max(ps), 100)
    base = min(ps)
    ax.plot(grid, base * model.predict(base) / model.predict(grid), "--", label="Sevcik fit")
    ax.plot(ps, ps, ":", color="grey", label="linear")
    ax.set_xlabel("processors")
    ax.set_ylabel("speedup")
    ax.set_title(f"{profile.spec.workload} {' '.join(profile.spec.args)}".strip())
    ax.legend()
    fig.tight_layout()
    return fig


def _plot(profile: Profile, model: sevcik.SevcikFit, path: Path) -> None:
    import matplotlib.pyplot as plt

    fig = speedup_figure(profile, model)
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
