"""Figs. 4-6 as a committed report: figures.md, figures.csv and figures.png (one panel per figure),
with the §5 claims table. Written beside the Tables 2-3 report, which keeps README.md."""
from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from experiments.reporting.tables import md_table  # noqa: E402
from experiments.studies.menasce_rao import claims as claims_mod  # noqa: E402
from experiments.reporting.claims import Claim  # noqa: E402
from experiments.studies.menasce_rao.claims import Remark  # noqa: E402
from experiments.studies.menasce_rao.figures import PointResult  # noqa: E402
from experiments.studies.menasce_rao.paper import CLASSES, TIME_SCALE  # noqa: E402
from experiments.studies.menasce_rao.sweeps import SWEEPS, curve  # noqa: E402

COLUMNS = ("kind", "n", "d_s", "z_s", "figures", "owner_d_s", "owner_z_s", "workstations", "reps",
           "measured_median_s", "measured_min_s", "measured_max_s", "tgs_s", "tgs_profiled_s", "monte_carlo_s",
           "monte_carlo_half_s", "error", "owner_u_model", "owner_u_measured")
STEM = "figures"


def write(results: Sequence[PointResult], chosen: Sequence[int], out: Path, command: str,
          profiled: Mapping[str, float] | None = None) -> Path:
    """Write the three files; returns the Markdown's path."""
    out.mkdir(parents=True, exist_ok=True)
    claims = claims_mod.section5(results, chosen)
    _csv(results, chosen, out / f"{STEM}.csv")
    _figure(results, chosen, out / f"{STEM}.png")
    md = out / f"{STEM}.md"
    md.write_text(markdown(results, chosen, claims, command, profiled))
    return md


def _in_figures(r: PointResult, chosen: Sequence[int]) -> list[int]:
    return [f for f in chosen if any(p == r.point for _x, p in curve(f, r.point.kind))]


def _f(x: float | None, fmt: str = ".3f") -> str:
    return "" if x is None else format(x, fmt)


def _csv(results: Sequence[PointResult], chosen: Sequence[int], path: Path) -> None:
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS)
        for r in results:
            p, pred, o = r.point, r.prediction, r.point.owners()
            w.writerow([p.kind, p.n, p.d_s, p.z_s, " ".join(map(str, _in_figures(r, chosen))), f"{o.d:g}", f"{o.z:g}",
                        " ".join(r.workstations), len(r.measured_s), _f(r.median_s),
                        _f(min(r.measured_s) if r.measured_s else None), _f(max(r.measured_s) if r.measured_s else None),
                        _f(pred.tgs_s), _f(pred.tgs_profiled_s), _f(pred.mc_s), _f(pred.mc_half_s),
                        _f(r.error, ".4f"), _f(r.owner_u_model, ".4f"), _f(r.owner_u_measured, ".4f")])


def _judged(j: Claim | None) -> str:
    if j is None:
        return "n/a"
    return f"{j.ours} ({j.verdict})"


def claims_table(claims: Sequence[Remark], predicted_label: str) -> list[str]:
    return [md_table(["the paper", "paper's number", "judged by", f"ours, {predicted_label}", "ours, measured",
                      "verdict"],
                     [(f'"{c.sentence}"', c.paper, c.test, _judged(c.predicted), _judged(c.measured), f"**{c.words}**")
                      for c in claims])]


def markdown(results: Sequence[PointResult], chosen: Sequence[int], claims: Sequence[Remark], command: str,
             profiled: Mapping[str, float] | None) -> str:
    by = {r.point: r for r in results}
    live = any(r.measured_s for r in results)
    speeds = ("the task-profiled speeds (" + ", ".join(f"{k} {v:.3f}" for k, v in profiled.items())
              + " reference cores)") if profiled else "the spec's speeds"
    lines = [f"# Menascé & Rao (1996), Figs. {', '.join(map(str, chosen))}, "
             + ("live" if live else "predicted only (not run live yet)"), "",
             f"Made by `{command}`. The wave front on the three workstations of one class of "
             "`compose/specs/menasce-rao.toml` (PVM's default placement), every one loaded by the same owner "
             "daemons; the owners' knobs are swept one at a time from the paper's baseline (N = 2, D = 1 s, "
             f"Z = 5 s). D and Z are given in the paper's units; the daemons ran them x{TIME_SCALE:g}, like "
             f"every time of ours (a task is 6.8 s on our LX, 34 s on theirs), so our execution times are the "
             f"paper's scale x{TIME_SCALE:g}. Measured: the median of the repetitions (range in brackets). "
             f"Predicted: the Monte Carlo of Fig. 2 (mean ± 95%) at {speeds}, the paper's model for §5; "
             "TGS with eq. 7 at the spec's speeds (and at the profiled ones when profiled) beside it. "
             "Error: (Monte Carlo - measured) / measured. The sweep points and why: "
             "`experiments/studies/menasce_rao/sweeps.py`.", ""]
    for fig in chosen:
        sweep = SWEEPS[fig]
        lines += [f"## Fig. {fig}: execution time against {sweep.parameter}", ""]
        rows = []
        for kind in CLASSES:
            for x, p in curve(fig, kind):
                r = by.get(p)
                if r is None:
                    continue
                pred = r.prediction
                meas = "not run" if not r.measured_s else \
                    f"{r.median_s:.2f} ({min(r.measured_s):.2f}-{max(r.measured_s):.2f})"
                rows.append((f"{x:g}", kind, meas, f"{pred.mc_s:.2f} ± {pred.mc_half_s:.2f}", f"{pred.tgs_s:.2f}",
                             _f(pred.tgs_profiled_s, ".2f") or "n/a", "n/a" if r.error is None else f"{r.error:+.1%}",
                             f"{r.owner_u_model:.3f} / {_f(r.owner_u_measured) or 'n/a'}"))
        lines += [md_table([sweep.parameter, "class", "measured (s)", "Monte Carlo (s)", "TGS (s)", "TGS, profiled (s)",
                            "error", "owners' U, model / measured"], rows), ""]
    lines += ["## The §5 remarks, judged", ""]
    lines += claims_table(claims, "predicted (Monte Carlo)")
    lines += ["", "Thresholds (`experiments/studies/menasce_rao/claims.py`, where each is argued): "
              f"non-linear = the last step's slope at least {claims_mod.CONVEX_MIN:g}x the first's; a quoted "
              f"ratio is reproduced within {claims_mod.RATIO_TOL:.0%} (the paper's largest model error was 11%); "
              f"the LX / SPARC20 ratio grows when it is at least {claims_mod.GROWTH_MIN:.0%} larger at the "
              f"largest N; a bigger relative impact is a growth factor {claims_mod.RELATIVE_MIN:.0%} larger; "
              f"a dramatic decrease is at least {claims_mod.DRAMATIC_MIN:g}x, falling at every step. "
              "The owners' D is CPU seconds on the workstation they load (the daemon and eq. 7 both read it "
              "so), so eq. 7 inflates every class by the same factor and predicts an LX / SPARC20 ratio that "
              "does not move with N: the ratio claims test whether anything else does.", "",
              "The owners' U is the fraction of each workstation the owner daemons took: the model's is "
              "1 - p0 of M/M/1//N; the measured one is their CPU time over each run's wall time x the quota the "
              "governor wrote, the share a guest has to give up (`experiments/studies/menasce_rao/owner_use.py`), averaged over the "
              "class's three workstations and the repetitions.", "",
              f"![Figs. {', '.join(map(str, chosen))}]({STEM}.png)", ""]
    return "\n".join(lines)


def _figure(results: Sequence[PointResult], chosen: Sequence[int], path: Path) -> None:
    by = {r.point: r for r in results}
    fig, axes = plt.subplots(1, len(chosen), figsize=(5 * len(chosen), 4), squeeze=False)
    for ax, f in zip(axes[0], chosen):
        sweep = SWEEPS[f]
        for i, kind in enumerate(CLASSES):
            pts = [(x, by[p]) for x, p in curve(f, kind) if p in by]
            if not pts:
                continue
            color, xs = f"C{i}", [x for x, _ in pts]
            ax.errorbar(xs, [r.prediction.mc_s for _, r in pts], yerr=[r.prediction.mc_half_s for _, r in pts],
                        fmt="x--", color=color, capsize=3, label=f"{kind} Monte Carlo")
            ax.plot(xs, [r.prediction.tgs_s for _, r in pts], ":", color=color, alpha=0.6, label=f"{kind} TGS")
            done = [(x, r) for x, r in pts if r.measured_s]
            if done:
                ax.plot([x for x, _ in done], [r.median_s for _, r in done], "o-", color=color,
                        label=f"{kind} measured")
                ax.vlines([x for x, _ in done], [min(r.measured_s) for _, r in done],
                          [max(r.measured_s) for _, r in done], color=color)
        ax.set_xlabel(sweep.axis)
        ax.set_ylabel(f"execution time (s, paper's x{TIME_SCALE:g})")
        ax.set_title(f"Fig. {f}: time against {sweep.parameter}")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
