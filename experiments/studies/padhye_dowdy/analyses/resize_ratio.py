"""At what ratio of resize cost to job length does Folding beat RA again? Simulated only.

    python -m experiments.studies.padhye_dowdy.analyses.resize_ratio [--seeds 20] [--serial 0,0.1]
        [--out experiments/results/padhye-dowdy/resize-ratio]

The paper's main result (Folding's mean response below RA's, Figs. 4-10) is reversed on this
testbed, live and in the model. A resize here moves CG's whole matrix (50/128 MB for "CG
300/500") over 100 Mbit/s links; on the Paragon it moved 0.72/2 MB. This sweeps that one
difference: each of Figs. 4, 6 and 7 is simulated with the class models of its committed
store (`experiments.replay.class_models`, the models its live predictions used), every
per-resize cost (fixed, per-processor, grow, the bytes over the link, and the release of the
workstations a shrink gives up) multiplied by one factor, so the x axis is

    ratio = cost of one fold (pmax -> pmax/2, the model's ResizeFit) / T(1) (the job's
            dedicated time on one workstation).

At each ratio, each arrival rate of the figure and each of `--seeds` arrival streams (the
config's stream generator, replications 0..seeds-1, so the committed runs' streams come
first), RA and Folding run the same stream (paired by seed); the statistic is the geometric
mean over seeds of Folding's mean response over RA's, with a Student-t 95% interval on the
log ratios. The crossover is where that ratio reaches 1 (`crossover`, linear in log ratio);
its interval is where the band's upper and lower edges reach 1 (the pointwise band inverted).

`--serial g` repeats the sweep with the speedup made sublinear as in the paper's Fig. 1: a
fraction g of the parallel work W moves into the serial term alpha (T(1) unchanged), so the
synthetic job's speedup at 8 falls from 6.8 (profiled, near linear) to 4.3 at g = 0.1.

Two points are marked: this testbed (ratio at factor 1, from the stores' profiles) and the
paper's hardware (`PAPER`: the paper's bytes per resize and job sizes, over assumed Paragon
rates; data transfer only, so a lower end of the paper's ratio). Writes resize_ratio.csv
(every cell), crossovers.csv, resize_ratio.png and report.md to --out.
"""
from __future__ import annotations

import argparse
import dataclasses
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from rich.progress import Progress
from scipy import stats

from experiments.config import ExperimentConfig
from experiments.models.resize import busiest_fraction
from experiments.predict import ClassModel, predict, summarize
from experiments.report import md_table
from experiments.runner import stream_for

RESULTS = Path("experiments/results/padhye-dowdy")
OUT = RESULTS / "resize-ratio"
COMMAND = "python -m experiments.studies.padhye_dowdy.analyses.resize_ratio"
POLICIES = ("RA", "FOLDING")


# --------------------------------------------------------------------------- crossover finder

def crossover(x: Sequence[float], y: Sequence[float], level: float = 1.0) -> float | None:
    """The first x at which y rises through `level`, interpolated linearly in (log x, y).

    x: increasing, > 0. Scans upwards for the first pair of neighbours with y < level at the
    left and y >= level at the right (a point exactly at `level` is the answer itself).
    None: y never rises through `level` in the range (all below, all above, or only falling).
    """
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if xs.shape != ys.shape or xs.ndim != 1:
        raise ValueError(f"crossover: x and y must be 1-d of one length, got {xs.shape} and {ys.shape}")
    if np.any(xs <= 0) or np.any(np.diff(xs) <= 0):
        raise ValueError("crossover: x must be > 0 and strictly increasing")
    for i in range(len(xs) - 1):
        a, b = ys[i], ys[i + 1]
        if not (math.isfinite(a) and math.isfinite(b)):
            continue
        if a < level <= b:
            lx0, lx1 = math.log(xs[i]), math.log(xs[i + 1])
            return math.exp(lx0 + (level - a) * (lx1 - lx0) / (b - a))
    return None


def crossings(y: Sequence[float], level: float = 1.0) -> int:
    """How many times y changes side of `level` (a noisy curve may cross more than once)."""
    side = [v >= level for v in y if math.isfinite(v)]
    return sum(1 for a, b in zip(side, side[1:]) if a != b)


def locate(x: Sequence[float], y: Sequence[float], level: float = 1.0) -> tuple[str, float | None]:
    """The crossover with how it relates to the range: ("=", x*) found; ("<", x[0]) y is at or
    above `level` all along (the crossover, if any, lies below the range); (">", x[-1]) y is
    below it all along; ("none", None) y only falls through it."""
    found = crossover(x, y, level)
    if found is not None:
        return "=", found
    ys = [v for v in y if math.isfinite(v)]
    if ys and all(v >= level for v in ys):
        return "<", float(x[0])
    if ys and all(v < level for v in ys):
        return ">", float(x[-1])
    return "none", None


def crossover_interval(x: Sequence[float], lo: Sequence[float], hi: Sequence[float],
                       level: float = 1.0) -> tuple[tuple[str, float | None], tuple[str, float | None]]:
    """The pointwise 95% band inverted: (`locate` of its upper edge, `locate` of its lower edge),
    the interval's low and high ends."""
    return locate(x, hi, level), locate(x, lo, level)


# --------------------------------------------------------------------------- models

def fold_sizes(model: ClassModel, P: int) -> tuple[int, int]:
    """(p, p // 2) of the typical fold: from the class's largest partition to half of it."""
    top = min(P, model.fit_pmax or P)
    return top, max(1, top // 2)


def fold_cost_s(model: ClassModel, P: int) -> float:
    """Seconds of one fold onto a different set, as the engine prices it."""
    old, new = fold_sizes(model, P)
    return model.resize_cost(tuple(range(old)), tuple(range(new)))


def fold_transfer_s(model: ClassModel, P: int) -> float:
    """The data part alone of one fold (the busiest sender's bytes over its link)."""
    if model.resize is None:
        return 0.0
    old, new = fold_sizes(model, P)
    return model.resize.transfer_s(tuple(range(old)), tuple(range(new)))


def t1_s(model: ClassModel) -> float:
    """A demand-1 job's dedicated time on one workstation (launch left out)."""
    return model.model().T(1)


def scaled(model: ClassModel, factor: float) -> ClassModel:
    """Every per-resize cost times `factor`: fixed, per-processor, grow, the bytes (a link
    `factor` times slower), the receive, and the release of a shrink's workstations."""
    if factor < 0 or not math.isfinite(factor):
        raise ValueError(f"factor must be finite and >= 0, got {factor}")
    resize = model.resize
    if resize is not None:
        resize = dataclasses.replace(resize, **{f: factor * getattr(resize, f) for f in
                                                ("fixed_s", "per_proc_s", "data_bytes", "grow_s", "release_s")})
    return dataclasses.replace(model, resize=resize, reconfig_s=factor * model.reconfig_s,
                               release_s=factor * model.release_s, extra_resize_s=factor * model.extra_resize_s)


def sublinear(model: ClassModel, serial: float) -> ClassModel:
    """A fraction `serial` of W moved into alpha: T(1) the same, the speedup flatter. The
    class's pmax is kept as it was fixed (an unlimited class stays unlimited)."""
    if not 0 <= serial < 1:
        raise ValueError(f"serial must be in [0, 1), got {serial}")
    if serial == 0:
        return model
    pmax = model.pmax if model.pmax is not None else model.fit_pmax
    return dataclasses.replace(model, W=(1 - serial) * model.W, alpha=model.alpha + serial * model.W, pmax=pmax)


def without_setup(model: ClassModel, scale: float) -> ClassModel:
    """The launch's set-up pause (start-up, set-up work, the profiled hellos) times `scale`: CG's
    set-up builds its n x n matrix (9.5 s at p = 1 for n = 4000), which the Paragon's 500 x 500
    did in no time; a job started on fewer workstations pays more of it, as Folding's do."""
    if not (math.isfinite(scale) and scale >= 0):
        raise ValueError(f"setup scale must be finite and >= 0, got {scale}")
    if scale == 1:
        return model
    return dataclasses.replace(model, startup_s=None if model.startup_s is None else scale * model.startup_s,
                               setup_work_s=scale * model.setup_work_s,
                               hello_s=tuple((p, scale * t) for p, t in model.hello_s))


@dataclass(frozen=True)
class Variant:
    """How the stored model is changed before the sweep: W moved into alpha, set-up scaled."""

    serial: float = 0.0
    setup_scale: float = 1.0

    def apply(self, model: ClassModel) -> ClassModel:
        return without_setup(sublinear(model, self.serial), self.setup_scale)


def speedup(model: ClassModel, p: int) -> float:
    m = model.model()
    return m.T(1) / m.T(p)


# --------------------------------------------------------------------------- the paper's hardware

@dataclass(frozen=True)
class PaperClass:
    """One of the paper's job classes: bytes a preemption redistributes and the work of a job.

    work_flop: what the job computes (the paper states the work, not its seconds: its
    figures' time axes are not in our text of the paper)."""

    name: str
    bytes_per_resize: float
    work_flop: float
    source: str


def cg_flop(n: int, iterations: int = 250) -> float:
    """Dense CG: a matrix-vector product (2n^2) and about five vector operations (10n) an iteration."""
    return iterations * (2.0 * n * n + 10.0 * n)


#: From the paper's text (section and the sentence in `source`).
PAPER = {
    "fig4": PaperClass("synthetic, 50 phases x 66,000 multiplications", 0.5e6, 50 * 66_000.0,
                       "Sec. 3.2: '66000 floating point multiplications per phase. When preempted, 0.5 megabytes "
                       "of data require redistribution'; Sec. 2.5: Fig. 1's curves are for 50 phases"),
    "fig6": PaperClass("CG 300x300, 250 iterations", 0.72e6, cg_flop(300),
                       "Sec. 3.2: 'approximately 0.72 megabytes' (= 300^2 doubles); Sec. 2.5: 250 iterations"),
    "fig7": PaperClass("CG 500x500, 250 iterations", 2.0e6, cg_flop(500),
                       "Sec. 3.2: 'approximately 2 megabytes' (= 500^2 doubles); Sec. 2.5: 250 iterations"),
}

#: Assumed, not in the paper: an i860 XP node's sustained rate on this kind of loop (peak 75
#: Mflop/s double) and the message bandwidth between two Paragon nodes (mesh links 175 MB/s
#: in hardware, OSF/1 message passing delivering tens of MB/s). Central value and range.
PARAGON_FLOP_S = (10e6, 5e6, 20e6)
PARAGON_LINK_BYTE_S = (50e6, 30e6, 175e6)


def paper_ratio(fig: str, old: int, new: int) -> tuple[float, float, float]:
    """(central, low, high) of the paper's fold: its bytes' busiest share over the Paragon's
    link, over its job's work at the node's rate. Data only: the Paragon's restart is unknown."""
    pc = PAPER[fig]
    share = pc.bytes_per_resize * busiest_fraction(tuple(range(old)), tuple(range(new)))

    def ratio(flop_s: float, link: float) -> float:
        return (share / link) / (pc.work_flop / flop_s)

    central = ratio(PARAGON_FLOP_S[0], PARAGON_LINK_BYTE_S[0])
    low = ratio(PARAGON_FLOP_S[1], PARAGON_LINK_BYTE_S[2])
    high = ratio(PARAGON_FLOP_S[2], PARAGON_LINK_BYTE_S[1])
    return central, low, high


# --------------------------------------------------------------------------- the sweep

@dataclass(frozen=True)
class Figure:
    """One committed run: its key in PAPER, its results folder and the store in it."""

    key: str
    run: str

    @property
    def store(self) -> Path:
        return RESULTS / self.run / f"{self.run}.sqlite"


FIGURES = (Figure("fig4", "fig4-ra-vs-folding-constant"), Figure("fig6", "fig6-ra-vs-folding-cg300"),
           Figure("fig7", "fig7-ra-vs-folding-cg500"))


def load_run(fig: Figure) -> tuple[ExperimentConfig, dict[str, ClassModel], int]:
    """The run's config, its class models (from the profiles its store kept) and P."""
    from experiments.replay import class_models
    from experiments.store import ResultsStore

    store = ResultsStore.open(fig.store, readonly=True)
    config = ExperimentConfig.model_validate(store.config)
    profiles = store.profiles()
    missing = sorted(set(config.classes) - set(profiles))
    if missing:
        raise SystemExit(f"{fig.store}: no profile stored for class {', '.join(missing)}")
    P = max((len(s[0]["hosts"]) for c in store.cells_frame()["cell_id"] if (s := store.segments(int(c)))),
            default=8)
    return config, class_models(config, profiles), P


def cell_response(config: ExperimentConfig, models: dict[str, ClassModel], policy: str, P: int,
                  rate: float, seed: int) -> float:
    """Mean response past the warm-up of one simulated stream."""
    stream = stream_for(config, rate, seed)
    return summarize(predict(stream, models, policy, P), config.arrivals.warmup)["mean_response"]


def paired_ratio(folding: Sequence[float], ra: Sequence[float]) -> tuple[float, float, float]:
    """Geometric mean of Folding/RA over paired seeds, with its Student-t 95% interval."""
    logs = np.log(np.asarray(folding, dtype=float) / np.asarray(ra, dtype=float))
    mean = float(np.mean(logs))
    if len(logs) < 2:
        return math.exp(mean), math.nan, math.nan
    half = float(stats.t.ppf(0.975, len(logs) - 1) * np.std(logs, ddof=1) / math.sqrt(len(logs)))
    return math.exp(mean), math.exp(mean - half), math.exp(mean + half)


KEYS = ["figure", "run", "cls", "serial", "setup_scale", "speedup_top", "ratio", "factor", "rate"]


def sweep(figures: Sequence[Figure], ratios: Sequence[float], variants: Sequence[Variant],
          seeds: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(per seed: every response; per (figure, variant, ratio, rate): the paired ratio and band)."""
    runs = {fig.key: load_run(fig) for fig in figures}
    total = sum(len(runs[f.key][0].arrivals.rates) for f in figures) * len(variants) * len(ratios) * seeds
    rows = []
    with Progress(transient=True) as bar:
        task = bar.add_task("Folding against RA", total=total)
        for fig in figures:
            config, base, P = runs[fig.key]
            for variant in variants:
                shaped = {n: variant.apply(m) for n, m in base.items()}
                (name, ref), = list(shaped.items())[:1]
                x1 = fold_cost_s(ref, P) / t1_s(ref)  # the testbed's ratio
                for ratio in ratios:
                    models = {n: scaled(m, ratio / x1) for n, m in shaped.items()}
                    for rate in config.arrivals.rates:
                        for seed in range(seeds):
                            resp = {p: cell_response(config, models, p, P, rate, seed) for p in POLICIES}
                            rows.append({"figure": fig.key, "run": fig.run, "cls": name, "serial": variant.serial,
                                         "setup_scale": variant.setup_scale,
                                         "speedup_top": speedup(ref, fold_sizes(ref, P)[0]), "ratio": ratio,
                                         "factor": ratio / x1, "rate": rate, "seed": seed,
                                         "response_ra_s": resp["RA"], "response_folding_s": resp["FOLDING"]})
                            bar.advance(task)
    per_seed = pd.DataFrame(rows)
    out = []
    for key, g in per_seed.groupby(KEYS, sort=True):
        mean, lo, hi = paired_ratio(g["response_folding_s"], g["response_ra_s"])
        out.append({**dict(zip(KEYS, key)),
                    "seeds": len(g), "folding_over_ra": mean, "ci_low": lo, "ci_high": hi,
                    "folding_wins": int((g["response_folding_s"] < g["response_ra_s"]).sum())})
    return per_seed, pd.DataFrame(out)


def hardware_points(figures: Sequence[Figure]) -> pd.DataFrame:
    """Per figure: the testbed's fold (full cost and data alone) and the paper's, as ratios to T(1)."""
    rows = []
    for fig in figures:
        _, models, P = load_run(fig)
        m = next(iter(models.values()))
        old, new = fold_sizes(m, P)
        central, low, high = paper_ratio(fig.key, old, new)
        pc = PAPER[fig.key]
        light = dataclasses.replace(m, resize=m.resize and dataclasses.replace(m.resize, data_bytes=pc.bytes_per_resize))
        rows.append({"figure": fig.key, "run": fig.run, "cls": m.name, "fold": f"{old}->{new}",
                     "testbed_data_mb": m.resize.data_bytes / 1e6 if m.resize else 0.0,
                     "testbed_fold_s": fold_cost_s(m, P), "testbed_transfer_s": fold_transfer_s(m, P),
                     "testbed_t1_s": t1_s(m), "testbed_ratio": fold_cost_s(m, P) / t1_s(m),
                     "testbed_data_ratio": fold_transfer_s(m, P) / t1_s(m),
                     "testbed_paper_bytes_ratio": fold_cost_s(light, P) / t1_s(m),
                     "testbed_speedup_top": speedup(m, old),
                     "paper_mb": pc.bytes_per_resize / 1e6, "paper_t1_s": pc.work_flop / PARAGON_FLOP_S[0],
                     "paper_ratio": central, "paper_ratio_low": low, "paper_ratio_high": high,
                     "paper_source": pc.source})
    return pd.DataFrame(rows)


def shown(found: tuple[str, float | None]) -> str:
    """A `locate` answer as text: 0.0048, <1e-05 (below the range), >1 (above it), none."""
    relation, value = found
    if value is None:
        return "none"
    return f"{value:.2g}" if relation == "=" else f"{relation}{value:.2g}"


def value_at(x: Sequence[float], y: Sequence[float], at: float) -> float:
    """y read off the swept curve at `at`, linearly in log x (NaN outside the range)."""
    xs = np.log(np.asarray(x, dtype=float))
    if not xs[0] <= math.log(at) <= xs[-1]:
        return math.nan
    return float(np.interp(math.log(at), xs, np.asarray(y, dtype=float)))


def crossover_table(table: pd.DataFrame, points: pd.DataFrame) -> pd.DataFrame:
    """Per figure, variant and rate: the crossover and its interval, and Folding over RA read off
    the curve where this testbed and the Paragon (data only, central) sit."""
    where = points.set_index("figure")
    rows = []
    for (fig, serial, setup, rate), g in table.groupby(["figure", "serial", "setup_scale", "rate"], sort=True):
        g = g.sort_values("ratio")
        x, y = g["ratio"].to_numpy(), g["folding_over_ra"].to_numpy()
        low, high = crossover_interval(x, g["ci_low"].to_numpy(), g["ci_high"].to_numpy())
        rows.append({"figure": fig, "serial": serial, "setup_scale": setup, "speedup_top": g["speedup_top"].iloc[0], "rate": rate,
                     "crossover_ratio": shown(locate(x, y)), "ci_from": shown(low), "ci_to": shown(high),
                     "sides_changed": crossings(y), "below_1_at_smallest": bool(y[0] < 1),
                     "ratio_at_smallest": float(y[0]), "ratio_at_largest": float(y[-1]),
                     **{f"{side}_ratio": where.at[fig, f"{side}_ratio"] for side in ("testbed", "paper")},
                     **{f"at_{side}{edge}": value_at(x, g[col].to_numpy(), where.at[fig, f"{side}_ratio"])
                        for side in ("testbed", "paper")
                        for edge, col in (("", "folding_over_ra"), ("_low", "ci_low"), ("_high", "ci_high"))}})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- output

def plot(table: pd.DataFrame, points: pd.DataFrame, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    figs = list(dict.fromkeys(table["figure"]))
    variants = sorted(set(zip(table["serial"], table["setup_scale"])), key=lambda v: (v[0], -v[1]))
    fig, axes = plt.subplots(len(variants), len(figs), figsize=(4.6 * len(figs), 3.6 * len(variants)),
                             squeeze=False, sharey=True)
    for i, (serial, setup) in enumerate(variants):
        for j, key in enumerate(figs):
            ax = axes[i][j]
            sub = table[(table["figure"] == key) & (table["serial"] == serial) & (table["setup_scale"] == setup)]
            for rate, g in sub.groupby("rate"):
                g = g.sort_values("ratio")
                line, = ax.plot(g["ratio"], g["folding_over_ra"], marker=".", label=f"{rate:g}/s")
                ax.fill_between(g["ratio"], g["ci_low"], g["ci_high"], color=line.get_color(), alpha=0.15)
            pt = points[points["figure"] == key].iloc[0]
            ax.axhline(1.0, color="black", lw=0.8)
            ax.axvline(pt["testbed_ratio"], color="tab:red", ls="--", lw=1.2, label="this testbed")
            ax.axvspan(pt["paper_ratio_low"], pt["paper_ratio_high"], color="tab:green", alpha=0.12)
            ax.axvline(pt["paper_ratio"], color="tab:green", ls=":", lw=1.5, label="Paragon (data only)")
            ax.axvline(pt["testbed_paper_bytes_ratio"], color="tab:purple", ls="-.", lw=1.0,
                       label="this testbed, the paper's bytes")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_ylim(0.5, 4.0)  # the crossing is the point; above 4 the curves only climb
            ax.set_yticks([0.5, 0.7, 1.0, 1.5, 2.0, 3.0, 4.0])
            ax.yaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
            ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
            s = sub["speedup_top"].iloc[0]
            ax.set_title(f"{key} {pt['cls']}: serial +{serial:g}, set-up x{setup:g}, "
                         f"S({fold_sizes_label(pt)})={s:.1f}", fontsize=9)
            if i == len(variants) - 1:
                ax.set_xlabel("fold cost / T(1)")
            if j == 0:
                ax.set_ylabel("Folding / RA mean response")
            ax.legend(fontsize=7, loc="upper left")
    fig.suptitle("Folding over RA against the resize-cost ratio (simulated, 95% paired bands)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def fold_sizes_label(point: pd.Series) -> str:
    return str(point["fold"]).split("->")[0]


def report(table: pd.DataFrame, cross: pd.DataFrame, points: pd.DataFrame, seeds: int, argv: Sequence[str]) -> str:
    lo, hi = float(table["ratio"].min()), float(table["ratio"].max())
    shown = cross.copy()
    shown["speedup_top"] = shown["speedup_top"].round(2)
    for side in ("testbed", "paper"):
        shown[f"F/RA at {side}"] = [f"{m:.3f} ({lo:.3f}-{hi:.3f})" for m, lo, hi in
                                    zip(shown[f"at_{side}"], shown[f"at_{side}_low"], shown[f"at_{side}_high"])]
    shown = shown[["figure", "serial", "setup_scale", "speedup_top", "rate", "crossover_ratio", "ci_from", "ci_to",
                   "sides_changed", "F/RA at testbed", "F/RA at paper"]]
    hw = points[["figure", "cls", "fold", "testbed_data_mb", "testbed_fold_s", "testbed_transfer_s", "testbed_t1_s",
                 "testbed_ratio", "testbed_data_ratio", "testbed_paper_bytes_ratio", "testbed_speedup_top", "paper_mb", "paper_t1_s",
                 "paper_ratio", "paper_ratio_low", "paper_ratio_high"]].copy()
    for col in hw.columns:
        if hw[col].dtype.kind == "f":
            hw[col] = hw[col].map(lambda v: f"{v:.3g}")
    lines = [
        "# Padhye & Dowdy: the resize-cost ratio at which Folding beats RA again (simulated)",
        "",
        f"Made by `{' '.join([COMMAND, *argv])}` (pure simulation, no live run). Method: the module's "
        "docstring (`experiments/studies/padhye_dowdy/analyses/resize_ratio.py`).",
        "",
        f"x = one fold's cost (the class's largest partition to half of it, as the engine prices it) over the "
        f"job's dedicated time on one workstation, T(1). Swept {lo:.0e} to {hi:.0e} by scaling every per-resize "
        f"cost of the committed stores' class models alike. y = geometric mean over {seeds} paired arrival "
        "streams of Folding's mean response over RA's (the config's streams, its jobs and warm-up), "
        "with the Student-t 95% interval. Below 1: Folding wins, as in the paper.",
        "",
        "![Folding over RA](resize_ratio.png)",
        "",
        "## Crossovers",
        "",
        "`crossover_ratio`: where the mean reaches 1 rising; `ci_from`/`ci_to`: where the band's upper and lower "
        "edges reach 1 (<x: already at or above 1 at the smallest ratio swept, so below the range; >x: still below "
        "1 at the largest). `sides_changed` > 1: the curve is noisy around 1. "
        "`serial`: the fraction of W moved into alpha (sublinear speedup); `setup_scale`: the factor on the "
        "launch's set-up pause (0: none, as for the Paragon's small matrices); `speedup_top`: the speedup at the "
        "class's largest partition. `F/RA at testbed` / `at paper`: the curve (and its band) read off at this "
        "testbed's ratio and at the Paragon's central one (table below).",
        "",
        md_table(shown),
        "",
        "## Where the two machines sit",
        "",
        md_table(hw),
        "",
        "- **This testbed** (red line): the fold's full cost from the stores' profiles (`ResizeFit`: fixed + "
        "per-processor + the busiest sender's bytes over 100 Mbit/s + the receive) over T(1) of the same profile. "
        "`testbed_data_ratio`: its data transfer alone. **This testbed with the paper's bytes** (purple, "
        "`testbed_paper_bytes_ratio`): the same fit with the paper's bytes per resize in place of the class's; "
        "its fixed part stays, so this is where the paper-volume configs (`configs/paper-volumes/`) should sit.",
        "- **The Paragon** (green line, band the range): the paper's bytes per resize, the busiest sender's share "
        "of them for the same fold, over an assumed message bandwidth, divided by the job's work over an assumed "
        "node rate. Data transfer only: the paper states no restart cost, so this is the low end of its ratio.",
        "- From the paper (the numbers are its, the sentences named): "
        + "; ".join(f"{k}: {v.name}, {v.bytes_per_resize / 1e6:g} MB a resize, {v.work_flop / 1e6:.1f} Mflop "
                    f"({v.source})" for k, v in PAPER.items()) + ".",
        f"- Assumed, not in the paper: node rate {PARAGON_FLOP_S[0] / 1e6:g} Mflop/s (range "
        f"{PARAGON_FLOP_S[1] / 1e6:g}-{PARAGON_FLOP_S[2] / 1e6:g}; the i860 XP's peak is 75), message bandwidth "
        f"{PARAGON_LINK_BYTE_S[0] / 1e6:g} MB/s (range {PARAGON_LINK_BYTE_S[1] / 1e6:g}-"
        f"{PARAGON_LINK_BYTE_S[2] / 1e6:g}, the mesh links' hardware rate at the top). The paper's figures' "
        "time axes are not in our text of it, so the job lengths are derived from the work it states. The "
        "synthetic job comes out at a third of a second on one node: if a 'computation' was more than one "
        "multiplication, the job was longer and the paper's ratio smaller still. (Sec. 4 says Fig. 11's job has "
        "'15 phases instead of 250', against Sec. 2.5's 50; 50 is used.)",
        "- The paper's own numbers bound its full ratio from above, loosely: in Fig. 4 Folding's jobs ran at "
        "most about 17% longer than RA's with fewer than 1.5 preemptions a job, so with about one preemption "
        "a job a preemption cost at most about 0.17 of a job's execution time (and T(1) is longer than that).",
    ]
    return "\n".join(lines) + "\n"


def parse_floats(text: str, name: str) -> list[float]:
    try:
        return [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise SystemExit(f"--{name}: a comma-separated list of numbers, got {text!r}") from None


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20, help="arrival streams per cell, paired across policies")
    parser.add_argument("--serial", default="0,0.1", help="fractions of W moved into alpha, comma-separated")
    parser.add_argument("--setup-scale", default="1", help="factors on the launch's set-up pause, comma-separated")
    parser.add_argument("--low", type=float, default=1e-5, help="smallest ratio swept")
    parser.add_argument("--high", type=float, default=1.0, help="largest ratio swept")
    parser.add_argument("--per-decade", type=int, default=4, help="ratios a decade")
    parser.add_argument("--figures", default="fig4,fig6,fig7", help="which of fig4, fig6, fig7")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    if args.seeds < 2:
        raise SystemExit(f"--seeds: at least 2 for an interval, got {args.seeds}")
    if not 0 < args.low < args.high:
        raise SystemExit(f"--low/--high: need 0 < low < high, got {args.low}, {args.high}")
    known = {f.key: f for f in FIGURES}
    wanted = [k.strip() for k in args.figures.split(",") if k.strip()]
    if bad := [k for k in wanted if k not in known]:
        raise SystemExit(f"--figures: unknown {bad[0]!r} (known: {', '.join(known)})")
    figures = [known[k] for k in wanted]
    variants = [Variant(g, k) for g in parse_floats(args.serial, "serial")
                for k in parse_floats(args.setup_scale, "setup-scale")]
    n = int(round(math.log10(args.high / args.low) * args.per_decade)) + 1
    ratios = list(np.logspace(math.log10(args.low), math.log10(args.high), n))
    _, table = sweep(figures, ratios, variants, args.seeds)
    points = hardware_points(figures)
    cross = crossover_table(table, points)
    args.out.mkdir(parents=True, exist_ok=True)
    table.to_csv(args.out / "resize_ratio.csv", index=False)
    cross.to_csv(args.out / "crossovers.csv", index=False)
    points.to_csv(args.out / "hardware_points.csv", index=False)
    plot(table, points, args.out / "resize_ratio.png")
    (args.out / "report.md").write_text(report(table, cross, points, args.seeds, argv))
    print(md_table(cross[["figure", "serial", "setup_scale", "rate", "crossover_ratio", "ci_from", "ci_to",
                          "testbed_ratio", "at_testbed", "paper_ratio", "at_paper"]].round(4)))
    print(f"wrote {args.out}/report.md, resize_ratio.csv, crossovers.csv, hardware_points.csv, resize_ratio.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
