"""Write the study's outputs: cells.csv, replications.csv, claims.csv, the
figures, report.md, and the claims table on the terminal (rich).

Every number in report.md is computed from the study result or from the
generator; the only fixed text is the explanation of how to read them.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from rich.console import Console
from rich.table import Table

from experiments.reporting.claims import Verdict, tally, tally_text
from experiments.reporting.tables import cell, md_table
from experiments.studies.anastasiadis_sevcik import paper
from experiments.studies.anastasiadis_sevcik.claims import (
    SECTION_7,
    SECTION_64,
    Claim,
    Thresholds,
    dif_variant_table,
    evaluate,
    holding,
    to_frame,
)
from experiments.studies.anastasiadis_sevcik.claim import PER_REP, not_holding
from experiments.studies.anastasiadis_sevcik.plots import all_figures
from experiments.studies.anastasiadis_sevcik.spec import WORKLOADS, GeneratorSpec
from experiments.studies.anastasiadis_sevcik.study import StudyResult
from experiments.studies.anastasiadis_sevcik.workload import exact_moments, generate, stream_seed

#: Jobs drawn to show the generator's sample moments next to the exact ones.
MOMENT_SAMPLE_JOBS = 400_000


@dataclass(frozen=True)
class Outputs:
    """Paths of everything written, and the claims."""

    out_dir: Path
    cells_csv: Path
    replications_csv: Path
    claims_csv: Path
    dif_variants_csv: Path
    report_md: Path
    figures: list[Path]
    claims: list[Claim]


def moments_table(gen: GeneratorSpec, seed: int, n_jobs: int = MOMENT_SAMPLE_JOBS) -> pd.DataFrame:
    """Paper vs exact vs sampled moments of the generator, one row per (workload, moment)."""
    rows = []
    for name, wl in WORKLOADS.items():
        ex = exact_moments(gen, wl)
        s = generate(gen, wl, 0.5, n_jobs, stream_seed(seed, wl, 10_000))
        sample = {"E[W]": s.work_ks.mean(), "CoV[W]": s.work_ks.std() / s.work_ks.mean(),
                  "E[beta]": s.beta_ks.mean(), "E[alpha]": s.alpha_ks.mean(), "E[T(1)]": s.t1_ks.mean()}
        exact = {"E[W]": ex.mean_work, "CoV[W]": ex.cov_work, "E[beta]": ex.mean_beta,
                 "E[alpha]": ex.mean_alpha, "E[T(1)]": ex.mean_t1}
        printed = {"E[W]": paper.MEAN_WORK_KS, "CoV[W]": paper.COV_WORK, "E[beta]": paper.MEAN_BETA_KS,
                   "E[alpha]": paper.MEAN_ALPHA_KS[name], "E[T(1)]": paper.MEAN_T1_KS[name]}
        for key, value in exact.items():
            rows.append({"workload": name, "moment": key, "paper": printed[key], "exact": value,
                         "sample": float(sample[key])})
    df = pd.DataFrame(rows)
    df["exact_vs_paper"] = df.exact / df.paper.replace(0, np.nan) - 1.0
    return df


def _moment_differences(mom: pd.DataFrame) -> list[str]:
    """Exact moments that neither rounding nor truncation of the paper's last printed digit explains."""
    notes = []
    for _, r in mom.iterrows():
        dec = paper.PRINTED_DECIMALS[r.moment]
        unit = 10.0 ** -(dec[r.workload] if isinstance(dec, dict) else dec)
        rounded = abs(r.exact - r.paper) <= unit / 2
        truncated = r.paper <= r.exact < r.paper + unit
        if not (rounded or truncated):
            notes.append(f"{r.workload} {r.moment}: paper {r.paper:g}, exact {r.exact:.4f} "
                         f"({r.exact_vs_paper:+.1%})")
    return notes


def write_outputs(result: StudyResult, out_dir: Path, th: Thresholds | None = None) -> Outputs:
    out_dir.mkdir(parents=True, exist_ok=True)
    cells = result.cells
    th = th or Thresholds()
    claims = evaluate(cells, th)
    variants = dif_variant_table(cells, th)
    cells_csv, reps_csv, claims_csv = out_dir / "cells.csv", out_dir / "replications.csv", out_dir / "claims.csv"
    variants_csv = out_dir / "dif_variants.csv"
    cells.drop(columns=[PER_REP], errors="ignore").to_csv(cells_csv, index=False)
    result.replications.to_csv(reps_csv, index=False)
    to_frame(claims).to_csv(claims_csv, index=False)
    variants.to_csv(variants_csv, index=False)
    figures = all_figures(cells, out_dir)
    mom = moments_table(result.spec.generator, result.spec.seed)
    mom.to_csv(out_dir / "moments.csv", index=False)
    report = out_dir / "report.md"
    report.write_text(render_markdown(result, cells, claims, mom, figures, variants))
    return Outputs(out_dir, cells_csv, reps_csv, claims_csv, variants_csv, report, figures, claims)


def render_markdown(result: StudyResult, cells: pd.DataFrame, claims: list[Claim], mom: pd.DataFrame,
                    figures: list[Path], variants: pd.DataFrame | None = None) -> str:
    spec = result.spec
    reps = result.replications
    sat = int(cells.saturated.sum())
    unsat = cells[~cells.saturated]
    conv = int(unsat.converged.sum())
    lines = [
        "# Anastasiadis & Sevcik (1996): reproduction of the simulation study",
        "",
        "## Run",
        "",
        (f"- Cells: {len(spec.workloads)} workloads x {len(spec.loads)} loads x {len(spec.cell_policies)} policies "
        f"= {len(cells)}; P = {spec.generator.processors}. DIF readings: greedy-total (ASP(2), AP1(2), AEP(2))"
        + "".join(f", {r}" for r in spec.dif_variants) + "."),
        (f"- Per replication: {spec.jobs_per_replication:,} jobs, first {spec.warmup_jobs:,} dropped, "
        f"{spec.measured_jobs:,} measured; saturated if {spec.saturation_extra_jobs:,} further jobs arrive "
        "before the measured jobs have all finished."),
        (f"- Replications per cell: {spec.min_replications} to {spec.max_replications}, stopping when the "
        f"{spec.confidence:.0%} half-width is at most {spec.target_rel_halfwidth:.0%} of the mean; "
        f"{spec.workers} worker process(es); seed {spec.seed}."),
        (f"- Wall time: {result.wall_s:.1f} s for {len(reps)} replications "
        f"({int(reps.jobs_simulated.sum()):,} jobs simulated; {reps.wall_s.sum():.1f} s of worker time)."),
        f"- Saturated cells: {sat}. Unsaturated cells meeting the precision target: {conv}/{len(unsat)}"
        + (f"; worst relative half-width {unsat.rel_half_width.max():.1%}." if len(unsat) else "."),
        *([] if spec.jobs_per_replication >= 20_000 else [
            "",
            (f"**Quick run** ({spec.jobs_per_replication:,} jobs, {spec.max_replications} replications per "
             "cell): same cells and outputs as the full study, but the intervals are wide and the verdicts "
             "at 90% load, where one replication of a few thousand jobs is dominated by a handful of huge "
             "jobs, are not reliable. Run without `--quick` for the paper's procedure.")]),
        "",
        ("Times are in the paper's unit, ks (thousands of seconds). Response times in the figures are "
        "normalised to DYN-EQUI (zero-overhead) in the same cell."),
        "",
        "## Claims",
        "",
        ("Each claim is judged on checks: a margin (> 0 where the claim holds) with its 95% half-width, paired "
         "by replication (replication r of every policy in a workload and load ran the same jobs), or in "
         "quadrature across loads (separate streams). A claim holds if every check holds outside its interval, "
         "fails if any check fails outside it, and is unresolved otherwise, as is a check without an interval "
         "(an order of point estimates); a saturation is an observation by the stated criterion and decides "
         "outright (experiments/reporting/claims.py); the words give how many checks held."),
        "",
        md_table(["#", "§", "Paper's claim", "Measured answer", "Verdict", "Checks"],
                 [(i, c.paper.section, c.statement, c.paper.answer, f"**{c.verdict}**", _checks_words(c))
                  for i, c in enumerate(claims, 1)]),
    ]
    lines += ["", "Verdicts: " + tally_text(tally(claims)) + ".", ""]
    lines += _sources(claims)
    lines += _variants_section(variants if variants is not None else pd.DataFrame())
    lines += ["", "## Figures", ""]
    for f in figures:
        lines += [f"![{f.stem}]({f.name})", ""]
    lines += [
        ("Figure 1, right: each point is one AEP or AP1 cell of the study, placed at its measured actual "
        "load rho_a (processor time used by the measured jobs over the capacity offered while they "
        "arrived). The analysis assumes identical jobs that all receive exactly the target n = P/N "
        "(AEP) or P/L (AP1); in the study's workloads partitions are capped by pmax and by the free "
        "processors at low load (so jobs rarely wait, far below both curves) and cannot drop below one "
        "processor at high load (so waiting grows instead of vanishing). What carries over is the "
        "ordering: at equal rho_a, AEP waits less relative to its running time than AP1."),
        "",
    ]
    lines += ["## Generator check (Table 3 moments)", "",
              f"Sample: {MOMENT_SAMPLE_JOBS:,} jobs per workload, fixed seed.", "",
              md_table(["workload", "moment", "paper", "exact", "sample"],
                       [(r.workload, r.moment, f"{r.paper:g}", f"{r.exact:.4f}", f"{r['sample']:.4f}")
                        for _, r in mom.iterrows()])]
    diffs = _moment_differences(mom)
    wk2 = mom[(mom.workload == "WK2") & (mom.moment == "E[alpha]")].iloc[0]
    lines += ["", "Differences beyond the paper's rounding:", ""]
    lines += [f"- {d}" for d in diffs] or ["- none"]
    lines += [
        "",
        f"The paper prints E[alpha] = {wk2.paper:g} for WK2, but Table 3's own definition gives "
        f"E[W] x mean of pmax^-0.8 over {{4, 16, 64}} = {wk2.exact:.3f}. Its WK4 value 2.34 is "
        "(0 + 2.0 + 5.0)/3, so the 2.0 was carried into WK4 (exact: "
        f"{mom[(mom.workload == 'WK4') & (mom.moment == 'E[alpha]')].iloc[0].exact:.3f}). "
        "E[beta] = 0.3058 is printed truncated as 0.30, and each printed E[T(1)] is the sum of the "
        "printed parts 13.76 + 0.30 + E[alpha], which is why WK3's 19.06 is 0.03 below the exact "
        "value. We follow the definitions, not the printed "
        "means: our interarrival times use the exact E[T(1)], so each nominal load is the true "
        "offered load. Had the printed E[T(1)] been used, the actual offered load would be higher than "
        "nominal by the exact/paper ratio of E[T(1)] (" + ", ".join(
            f"{r.workload} {r.exact_vs_paper:+.1%}" for _, r in mom[mom.moment == "E[T(1)]"].iterrows()) + ").",
        "",
        "## Cells",
        "",
        ("All cells are in `cells.csv` (one row per workload, load and policy) and every replication "
        "in `replications.csv`. Cells not meeting the precision target:"),
        "",
    ]
    bad = unsat[~unsat.converged]
    if bad.empty:
        lines.append("- none")
    for _, r in bad.iterrows():
        lines.append(f"- {r.workload} {r.load:.0%} {r.policy}: {r.replications} replications, "
                     f"half-width {r.rel_half_width:.1%}")
    lines.append("")
    return "\n".join(lines)


def _checks_words(c: Claim) -> str:
    """The verdict's k-of-n words and, when not every check held, the first few that did not (all in claims.csv)."""
    rest = not_holding(c.checks, most=3)
    return f"{c.words} ({rest})" if rest else c.words


def _sources(claims: list[Claim]) -> list[str]:
    """Each claim's sentence in the paper and how its threshold follows from it."""
    lines = ["### Where each claim comes from", ""]
    for i, c in enumerate(claims, 1):
        lines += [f"{i}. **{c.paper.section}** \"{cell(c.paper.quote)}\"  ", f"   *Reading:* {cell(c.paper.reading)}",
                  ""]
    return lines


def _variants_section(table: pd.DataFrame) -> list[str]:
    """The DIF-dependent claims under each reading of DIF that was run, and which reading reproduces §6.4, §7."""
    lines = ["## DIF read three ways", "",
             ("The paper leaves open how many processors DIF distributes among the jobs the base rule starts "
              "(`scheduler/policies/dif.py`): **greedy-total** (the default: what greedy would give them in "
              "all), **all-free** (every free processor) or **share** (the jobs' unrounded target share, "
              "k x P/(waiting+running) for AEP). The claims that depend on DIF, under each reading run:"), ""]
    if table.empty:
        return lines + ["- only the default reading was run", ""]
    readings = list(dict.fromkeys(table.reading))
    rows = []
    for key, g in table.groupby("key", sort=False):
        by = g.set_index("reading")
        rows.append([g.statement.iloc[0], g.section.iloc[0],
                     *(f"{by.loc[r].verdict} ({by.loc[r].value:.3g})" for r in readings)])
    lines.append(md_table(["claim", "§", *readings], rows))
    lines.append("")
    for label, keys in (("§6.4", SECTION_64), ("§7", SECTION_7)):
        scores = {r: holding(table, r, keys) for r in readings}
        best = max(scores.values())
        winners = [r for r, v in scores.items() if v == best]
        lines.append(f"- {label} ({len(keys)} claims): " + ", ".join(f"{r} {k}/{n}" for r, (k, n) in scores.items())
                     + (f"; all hold under {', '.join(winners)}" if best[0] == best[1]
                        else "; none holds under any reading" if best[0] == 0
                        else f"; no reading makes all of them hold (most: {', '.join(winners)})"))
    lines += ["", "Every reading's answers in full are in `dif_variants.csv`.", ""]
    return lines


def print_claims(claims: list[Claim], console: Console | None = None) -> None:
    """The claims table on the terminal."""
    console = console or Console()
    table = Table(title="Anastasiadis & Sevcik: the paper's claims, measured", show_lines=True)
    table.add_column("#", justify="right")
    table.add_column("claim", ratio=3)
    table.add_column("measured", ratio=4)
    table.add_column("verdict")
    style = {Verdict.HOLDS: "green", Verdict.FAILS: "red", Verdict.UNRESOLVED: "yellow"}
    for i, c in enumerate(claims, 1):
        table.add_row(str(i), c.statement, c.paper.answer, f"[{style.get(c.verdict, 'dim')}]{c.verdict}[/]\n{c.words}")
    console.print(table)
    console.print("Verdicts: " + tally_text(tally(claims)))

