"""The §6 placement comparison as a committed report: placements.md, .csv and .png, with the
paper's sentences about the policies judged (`policy_claims.py`)."""
from __future__ import annotations

import csv
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from experiments.reporting.tables import md_table  # noqa: E402
from experiments.studies.menasce_rao.figures_report import claims_table  # noqa: E402
from experiments.studies.menasce_rao.paper import CLASSES, TIME_SCALE  # noqa: E402
from experiments.studies.menasce_rao.placements import WORKSTATIONS, CaseResult  # noqa: E402
from experiments.studies.menasce_rao.policy_claims import BEAT, section6  # noqa: E402
from scheduler.taskgraph.placement import POLICIES  # noqa: E402

STEM = "placements"
COLUMNS = ("graph", "policy", "owners", "loaded", "placement", "reps", "measured_median_s", "measured_min_s",
           "measured_max_s", "tgs_s", "tgs_profiled_s", "monte_carlo_s", "monte_carlo_half_s", "error")


def write(results: Sequence[CaseResult], out: Path, command: str, loaded_classes: Sequence[str],
          profiled: Mapping[str, float] | None = None) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    _csv(results, out / f"{STEM}.csv")
    _figure(results, out / f"{STEM}.png")
    md = out / f"{STEM}.md"
    md.write_text(markdown(results, command, loaded_classes, profiled))
    return md


def where(r: CaseResult) -> str:
    """How many tasks each workstation got, in host-list order: 'sp20a x5, sp20b x3, sp5a x1'."""
    got = Counter(r.prediction.placement.values())
    return ", ".join(f"{w} x{got[w]}" for w in WORKSTATIONS if got[w])


def _f(x: float | None, fmt: str = ".3f") -> str:
    return "" if x is None else format(x, fmt)


def _csv(results: Sequence[CaseResult], path: Path) -> None:
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS)
        for r in results:
            c, p = r.case, r.prediction
            w.writerow([c.graph, c.policy, int(c.owners), " ".join(r.loaded),
                        " ".join(f"{t}:{ws}" for t, ws in p.placement.items()), len(r.measured_s), _f(r.median_s),
                        _f(min(r.measured_s) if r.measured_s else None),
                        _f(max(r.measured_s) if r.measured_s else None),
                        _f(p.tgs_s), _f(p.tgs_profiled_s), _f(p.mc_s), _f(p.mc_half_s), _f(r.error, ".4f")])


def markdown(results: Sequence[CaseResult], command: str, loaded_classes: Sequence[str],
             profiled: Mapping[str, float] | None) -> str:
    live = any(r.measured_s for r in results)
    speeds = ("the task-profiled speeds (" + ", ".join(f"{k} {v:.3f}" for k, v in profiled.items())
              + " reference cores)") if profiled else "the spec's speeds"
    on = ("every workstation" if set(loaded_classes) == set(CLASSES)
          else f"the {', '.join(loaded_classes)} workstations only")
    lines = ["# Menascé & Rao (1996) §6: the four placement policies compared, "
             + ("live" if live else "predicted only (not run live yet)"), "",
             f"Made by `{command}`. Each graph on {', '.join(WORKSTATIONS)} of `compose/specs/menasce-rao.toml` "
             "(two of each class, in host-list order: why, `experiments/studies/menasce_rao/placements.py`), "
             "placed by each policy inside TGS at the spec's speeds, then run live on that placement. "
             "With owners: the paper's baseline owners (N = 2, D = 1 s, Z = 5 s, times "
             f"x{TIME_SCALE:g}) on {on}. Measured: the median of "
             f"the repetitions (range). Predicted: the Monte Carlo of Fig. 2 (mean ± 95%) at {speeds}, at the "
             "same placement; TGS with eq. 7 beside it. Error: (Monte Carlo - measured) / measured.", ""]
    graphs = list(dict.fromkeys(r.case.graph for r in results))
    for g in graphs:
        lines += [f"## {g}", ""]
        rows = []
        for r in results:
            if r.case.graph != g:
                continue
            p = r.prediction
            meas = "not run" if not r.measured_s else \
                f"{r.median_s:.2f} ({min(r.measured_s):.2f}-{max(r.measured_s):.2f})"
            rows.append(("yes" if r.case.owners else "no", r.case.policy, where(r), meas,
                         f"{p.mc_s:.2f} ± {p.mc_half_s:.2f}", f"{p.tgs_s:.2f}", _f(p.tgs_profiled_s, ".2f") or "n/a",
                         "n/a" if r.error is None else f"{r.error:+.1%}"))
        lines += [md_table(["owners", "policy", "tasks per workstation", "measured (s)", "Monte Carlo (s)", "TGS (s)",
                            "TGS, profiled (s)", "error"], rows), ""]
    lines += ["## The §6 sentences, judged", ""]
    lines += claims_table(section6(results), "predicted (Monte Carlo)")
    lines += ["", f"A policy beats another when its time is at most {1 - BEAT:.0%} of the other's (two runs of one "
              "Table 2 row differed by up to ±4.7%); a claim holds only if it holds in every case it lists "
              "(`experiments/studies/menasce_rao/policy_claims.py`). The placements are TGS's: the cyclic "
              "policies keep one cursor over the run, the load/speed rule sees what TGS predicts is running "
              "(`scheduler/taskgraph/placement.py`).", "", f"![placements]({STEM}.png)", ""]
    return "\n".join(lines)


def _figure(results: Sequence[CaseResult], path: Path) -> None:
    graphs = list(dict.fromkeys(r.case.graph for r in results))
    policies = [p for p in POLICIES if any(r.case.policy == p for r in results)]
    fig, axes = plt.subplots(1, len(graphs), figsize=(6 * len(graphs), 4), squeeze=False)
    for ax, g in zip(axes[0], graphs):
        for j, owners in enumerate((False, True)):
            rows = {r.case.policy: r for r in results if r.case.graph == g and r.case.owners == owners}
            xs = [i + (j - 0.5) * 0.38 for i, p in enumerate(policies) if p in rows]
            got = [rows[p] for p in policies if p in rows]
            if not got:
                continue
            ax.bar(xs, [r.prediction.mc_s for r in got], width=0.36, yerr=[r.prediction.mc_half_s for r in got],
                   color=f"C{j}", alpha=0.6, capsize=3, label="Monte Carlo, " + ("owners" if owners else "no owners"))
            done = [(x, r) for x, r in zip(xs, got) if r.measured_s]
            if done:
                ax.plot([x for x, _ in done], [r.median_s for _, r in done], "ko", ms=4,
                        label="measured" if j == 0 else None)
                ax.vlines([x for x, _ in done], [min(r.measured_s) for _, r in done],
                          [max(r.measured_s) for _, r in done], color="k")
        ax.set_xticks(range(len(policies)))
        ax.set_xticklabels([p.replace("-", "\n", 1) for p in policies], fontsize=7)
        ax.set_ylabel("execution time (s)")
        ax.set_title(g)
        ax.grid(alpha=0.3, axis="y")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
