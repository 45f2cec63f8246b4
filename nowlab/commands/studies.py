"""`nowlab study <paper> <verb>`: one command-line shape for every paper.

Each of the five papers is a group under `study`, named for its authors, with its verbs:

    nowlab study padhye-dowdy run|report|summary ...      (a live experiment from a figure's config)
    nowlab study anastasiadis-sevcik simulate ...          (the adaptive family on the simulator)
    nowlab study menasce-rao show|place|predict|run|tables|tables-join|figures|placements ...
    nowlab study sanjay-vadhiyar simulate|fit|show|hosts|train|live|report|avoid ...
    nowlab study zhou-brent table|simulate|run|report ...

The shapes that came before stay as aliases so that committed READMEs still run:
`nowlab run/report/summary`, `nowlab study anastasiadis`, `nowlab study sanjay-vadhiyar [--quick]`
(with no verb it runs the simulated study, as it did), `nowlab select ...`, `nowlab taskgraph ...`,
`nowlab timeshare ...`. A group is built from the same command functions as its alias, so the two
cannot drift apart.
"""
from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from nowlab.commands import experiments, selection, taskgraph, timeshare

def anastasiadis_sevcik_simulate(
    quick: Annotated[bool, typer.Option("--quick", help="Same outputs with ~7x fewer jobs (under 2 minutes).")] = False,
    out: Annotated[Path, typer.Option("--out", help="Directory for report.md, CSVs, PNGs.")] = Path(
        "results/anastasiadis"),
    workers: Annotated[int, typer.Option("--workers", help="Worker processes for replications.")] = 2,
    seed: Annotated[int, typer.Option("--seed", help="Seed of every job stream.")] = 1996,
    max_replications: Annotated[int | None, typer.Option("--max-replications",
                                                         help="Cap on replications per cell.")] = None,
    jobs: Annotated[int | None, typer.Option("--jobs", help="Jobs per replication, a tenth of them the warm-up "
                                             "(a smoke run's size; the paper's is 20,000).")] = None,
    dif_variants: Annotated[str | None, typer.Option(
        "--dif-variants", help="Other readings of DIF to run beside the default, comma-separated "
        "(all-free, share; 'none' for none). Default: all of them.")] = None,
) -> None:
    """Anastasiadis & Sevcik (1996): 4 workloads x 5 loads x 14 policies (+ DIF variants), report and claims."""
    # Imported here so `nowlab --help` does not pay for numpy/scipy/matplotlib.
    from experiments.studies.anastasiadis_sevcik.report import print_claims, write_outputs
    from experiments.studies.anastasiadis_sevcik.spec import SpecError, full_spec, quick_spec
    from experiments.studies.anastasiadis_sevcik.study import run_study

    overrides: dict[str, object] = {"workers": workers, "seed": seed}
    if max_replications is not None:
        overrides["max_replications"] = max_replications
    if jobs is not None:
        overrides.update(jobs_per_replication=jobs, warmup_jobs=jobs // 10)
    if dif_variants is not None:
        overrides["dif_variants"] = tuple(v.strip() for v in dif_variants.split(",") if v.strip() not in ("", "none"))
    try:
        spec = (quick_spec if quick else full_spec)(**overrides)
    except SpecError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    result = run_study(spec)
    outputs = write_outputs(result, out)
    print_claims(outputs.claims)
    typer.echo(f"wall time {result.wall_s:.1f} s; report: {outputs.report_md}")


PAPER_SCALE_OUT = Path("experiments/results/sanjay-vadhiyar/paper-scale")


def sanjay_vadhiyar_simulate(
    quick: Annotated[bool, typer.Option("--quick", help="Budgets at 1/100 of the paper's, fewer clusters "
                                        "(about 2 minutes); as --scale quick.")] = False,
    out: Annotated[Path | None, typer.Option("--out", help="Directory for report.md, CSVs, PNGs (default "
                                             "results/sanjay-vadhiyar; with --scale paper, "
                                             f"{PAPER_SCALE_OUT}).")] = None,
    scale: Annotated[str, typer.Option("--scale", help="quick, full (budgets at 1/10) or paper (the paper's "
                                       "budgets and counts: Figs. 8, 9, Table I, Fig. 12; weeks of one core, "
                                       "resumable).")] = "full",
    resume: Annotated[bool, typer.Option("--resume", help="--scale paper: continue the cases.csv in --out.")] = False,
    limit: Annotated[int | None, typer.Option("--limit", help="--scale paper: stop after this many searches.")] = None,
    report_only: Annotated[bool, typer.Option("--report-only", help="--scale paper: only write the report from "
                                              "the cases so far.")] = False,
) -> None:
    """Sanjay & Vadhiyar (2009): SA, GA, DP and Box Elimination on 32-1,024 processors (Figs. 8-12, Table I)."""
    from experiments.studies.sanjay_vadhiyar.report import print_claims, write_outputs
    from experiments.studies.sanjay_vadhiyar.spec import full_spec, quick_spec
    from experiments.studies.sanjay_vadhiyar.study import run_study

    scale = "quick" if quick else scale.strip().lower()
    if scale not in ("quick", "full", "paper"):
        typer.echo(f"error: scale: unknown {scale!r}; known: quick, full, paper", err=True)
        raise typer.Exit(2)
    if scale == "paper":
        _sanjay_vadhiyar_paper_scale(out or PAPER_SCALE_OUT, resume, limit, report_only)
        return
    out = out or Path("results/sanjay-vadhiyar")
    spec = quick_spec() if scale == "quick" else full_spec()
    typer.echo(f"{spec.name} run: at most {spec.upper_bound_s() / 60:.0f} min of search")
    result = run_study(spec)
    outputs = write_outputs(result, out)
    print_claims(outputs.claims)
    typer.echo(f"wall time {result.wall_s:.1f} s; report: {outputs.report_md}")


def _sanjay_vadhiyar_paper_scale(out: Path, resume: bool, limit: int | None, report_only: bool) -> None:
    """The paper-scale run: appends to out/cases.csv, then writes the report from every case so far."""
    from experiments.studies.sanjay_vadhiyar import paper_scale
    from experiments.studies.sanjay_vadhiyar.report import write_outputs

    spec = paper_scale.PaperScaleSpec()
    cases_csv = out / paper_scale.CASES_CSV
    if limit is not None and limit < 1:
        typer.echo(f"error: limit: {limit} is not >= 1", err=True)
        raise typer.Exit(2)
    if not report_only:
        if cases_csv.exists() and cases_csv.stat().st_size and not resume:
            typer.echo(f"error: out: {cases_csv} has cases already; pass --resume to continue it", err=True)
            raise typer.Exit(2)
        n, budget_s, n_done, done_s = paper_scale.total_budget_s(spec, paper_scale.done_keys(cases_csv))
        typer.echo(f"paper scale: {n_done:,}/{n:,} cases done; at most {(budget_s - done_s) / 86400:.1f} days "
                   "of search left (one core)")
        try:
            paper_scale.run_with_progress(spec, out, limit)
        except ValueError as exc:  # another run holds the cases file
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None
    if not cases_csv.exists():
        typer.echo(f"error: out: no {cases_csv} yet", err=True)
        raise typer.Exit(2)
    outputs = write_outputs(paper_scale.load(spec, out), out)
    with outputs.report_md.open("a") as fh:
        fh.write("\n" + paper_scale.progress_md(spec, out))
    n, _, n_done, _ = paper_scale.total_budget_s(spec, paper_scale.done_keys(cases_csv))
    typer.echo(f"{n_done:,}/{n:,} cases done; report: {outputs.report_md}")


def _group(help_text: str, *sources: typer.Typer, no_args_is_help: bool = True) -> typer.Typer:
    """A paper's group: the verbs of the given command apps, shared (not copied) with their aliases."""
    group = typer.Typer(no_args_is_help=no_args_is_help, add_completion=False, help=help_text)
    for source in sources:
        group.registered_commands.extend(source.registered_commands)
    return group


def _padhye_dowdy() -> typer.Typer:
    group = typer.Typer(no_args_is_help=True, add_completion=False,
                        help="Padhye & Dowdy: RA, Folding, Equipartition live from a figure's config "
                             "(experiments/studies/padhye_dowdy/configs/), its report and the summary.")
    group.command("run")(experiments.run)
    group.command("report")(experiments.report_cmd)
    group.command("summary")(experiments.summary_cmd)
    return group


def _anastasiadis_sevcik() -> typer.Typer:
    group = typer.Typer(no_args_is_help=True, add_completion=False,
                        help="Anastasiadis & Sevcik: the adaptive family on the simulator.")
    group.command("simulate")(anastasiadis_sevcik_simulate)
    return group


def _sanjay_vadhiyar() -> typer.Typer:
    group = _group("Sanjay & Vadhiyar: machine selection (SA, GA, DP, Box Elimination), Eq. 1, and its "
                   "live runs. With no verb, runs the simulated study (as `simulate`).", selection.app,
                   no_args_is_help=False)
    group.command("simulate")(sanjay_vadhiyar_simulate)

    @group.callback(invoke_without_command=True)
    def _no_verb(
        ctx: typer.Context,
        quick: Annotated[bool, typer.Option("--quick", help="With no verb: as `simulate --quick`.")] = False,
        out: Annotated[Path, typer.Option("--out", help="With no verb: as `simulate --out`.")] = Path(
            "results/sanjay-vadhiyar"),
    ) -> None:
        """The older `nowlab study sanjay-vadhiyar [--quick] [--out DIR]`, kept: it runs `simulate`."""
        if ctx.invoked_subcommand is None:
            sanjay_vadhiyar_simulate(quick=quick, out=out, scale="full", resume=False, limit=None, report_only=False)

    return group


def study_app() -> typer.Typer:
    """`nowlab study`, built afresh on each call (so registering it twice adds nothing twice)."""
    study = typer.Typer(no_args_is_help=True, add_completion=False,
                        help="The five papers, one shape: nowlab study <paper> <verb>.")
    study.add_typer(_padhye_dowdy(), name="padhye-dowdy")
    study.add_typer(_anastasiadis_sevcik(), name="anastasiadis-sevcik")
    study.add_typer(_group("Menascé & Rao: task graphs with owners: show, place, predict, run, the "
                           "tables and figures.", taskgraph.app), name="menasce-rao")
    study.add_typer(_sanjay_vadhiyar(), name="sanjay-vadhiyar")
    study.add_typer(_group("Zhou & Brent: time sharing by scheduling tables: table, simulate, run, "
                           "report.", timeshare.timeshare_app), name="zhou-brent")
    # the older shape of the Anastasiadis & Sevcik study, kept for the committed READMEs
    study.command("anastasiadis", hidden=True)(anastasiadis_sevcik_simulate)
    return study


def register(app: typer.Typer) -> None:
    """Add `nowlab study` and its five papers to the `nowlab` app."""
    app.add_typer(study_app(), name="study")
