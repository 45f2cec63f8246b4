"""`nowlab taskgraph`: Menascé & Rao task graphs: show a graph, place it, predict its execution time, run it live.

Parses and checks the input, calls `experiments.models` (TGS, Monte Carlo) and
`scheduler.taskgraph` (spec, policies) and, for `run`, `experiments.studies.menasce_rao.live` on a running
cluster, and prints.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

from nowlab.errors import user_errors

console = Console()
app = typer.Typer(no_args_is_help=True, help="Task-graph applications (Menascé & Rao): show, place, predict, run.")

GRAPH_HELP = "a task-graph TOML, or a shipped one by name (wavefront, fig1, small-then-large)"
WS_HELP = "a workstations TOML, or a shipped one by name (menasce-rao-classes)"


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="taskgraph")


def _owners(text: str | None):
    """'N,Z,D' -> Owners; one line naming the option when it is not three numbers."""
    from scheduler.taskgraph.workstations import Owners

    if text is None:
        return None
    parts = [p.strip() for p in text.split(",")]
    try:
        if len(parts) != 3:
            raise ValueError
        n, z, d = int(parts[0]), float(parts[1]), float(parts[2])
    except ValueError:
        raise ValueError(f"--owners: expected N,Z,D (e.g. 2,1.0,0.2), got {text!r}") from None
    for field, ok, need in (("N", n >= 0, ">= 0"), ("Z", z > 0, "> 0"), ("D", d > 0, "> 0")):
        if not ok:
            raise ValueError(f"--owners: {field} must be {need}, got {text!r}")
    return Owners(n=n, z_s=z, d_s=d)


def _setup(graph: str, workstations: str, policy: str, kind: str | None, count: int | None,
           owners: str | None, bandwidth_bit_s: int, latency_s: float):
    from experiments.models.tgs import Network
    from experiments.studies.menasce_rao.files import load_graph, load_workstations
    from scheduler.taskgraph.placement import get_policy
    from scheduler.taskgraph.workstations import select

    rule = get_policy(policy)  # an unknown name fails before any file is read
    g = load_graph(graph)
    ws = select(load_workstations(workstations).workstations, count, kind, _owners(owners))
    return g, ws, rule, Network(bandwidth_bit_s=bandwidth_bit_s, latency_s=latency_s)


def _availability(ws) -> dict[str, float]:
    """1 - U_ow of each workstation (M/M/1//N), what the load/speed rule is told of owners."""
    from testbed.load.model import available_fraction

    return {w.name: available_fraction(w.owners.n, w.owners.z_s, w.owners.d_s)
            for w in ws if w.owners is not None and w.owners.n > 0}


def _ws_line(ws) -> str:
    def one(w) -> str:
        o = "" if w.owners is None else f", owners N={w.owners.n} Z={w.owners.z_s:g}s D={w.owners.d_s:g}s"
        return f"{w.name} ({w.kind + ', ' if w.kind else ''}{w.speed_ref_cores:g} ref cores{o})"
    return "; ".join(one(w) for w in ws)


@app.command("show")
def show(graph: str = typer.Argument(..., help=GRAPH_HELP)) -> None:
    """The graph's tasks (demand, level, predecessors) and arcs."""
    from experiments.studies.menasce_rao.files import load_graph

    with user_errors():
        g = load_graph(graph)
    t = Table(title=f"{g.name}: {g.description}" if g.description else g.name)
    for col in ("task", "demand (ref-s)", "level", "after", "before"):
        t.add_column(col, justify="right" if col in ("demand (ref-s)", "level") else "left")
    for task in g.tasks:
        t.add_row(task.name, f"{task.demand_ref_s:g}", str(g.levels[task.name]),
                  ", ".join(g.pred[task.name]) or "-", ", ".join(g.succ[task.name]) or "-")
    console.print(t)
    a = Table(title=f"{len(g.arcs)} arcs")
    a.add_column("arc")
    a.add_column("bytes", justify="right")
    for arc in g.arcs:
        a.add_row(arc.label, f"{arc.size_bytes:,}")
    console.print(a)
    widths = [sum(1 for v in g.levels.values() if v == lv) for lv in range(max(g.levels.values()) + 1)]
    console.print(f"parallelism by level: {' -> '.join(map(str, widths))}; "
                  f"total demand {sum(x.demand_ref_s for x in g.tasks):g} reference-seconds")


def _timeline_table(title: str, result, means=None) -> Table:
    t = Table(title=title)
    cols = ["task", "workstation", "guests", "start (s)", "finish (s)"]
    if means is not None:
        cols += ["MC start (s)", "MC finish (s)"]
    for col in cols:
        t.add_column(col, justify="left" if col in ("task", "workstation") else "right")
    mc = {m.task: m for m in means} if means is not None else {}
    for x in result.timings:
        row = [x.task, x.workstation, str(x.guests), f"{x.start_s:.2f}", f"{x.finish_s:.2f}"]
        if means is not None:
            row += [f"{mc[x.task].start_s:.2f}", f"{mc[x.task].finish_s:.2f}"]
        t.add_row(*row)
    return t


WsOpt = typer.Option(..., "--workstations", "-w", help=WS_HELP)
PolicyOpt = typer.Option(..., "--policy", "-p", help="pvm-default, workstation-speed, parallel-load-speed, "
                                                     "workstation-load-speed")
KindOpt = typer.Option(None, "--kind", help="only workstations of this kind (e.g. LX)")
CountOpt = typer.Option(None, "--count", help="use the first COUNT workstations (default: all)")
OwnersOpt = typer.Option(None, "--owners", help="owner load on every workstation used: N,Z,D (Z, D in s)")
BandwidthOpt = typer.Option(10_000_000, "--bandwidth-bit-s", help="link rate for the arcs' bytes, bit/s")
LatencyOpt = typer.Option(0.0, "--latency-s", help="per-message latency, s")
GuestsOpt = typer.Option("running", "--guest-count", help="how TGS counts P of eq. 7: running or literal")
CsvOpt = typer.Option(None, "--csv", help="also write every task's workstation, start and finish to this CSV")


@app.command("place")
def place(graph: str = typer.Argument(..., help=GRAPH_HELP), workstations: str = WsOpt, policy: str = PolicyOpt,
          kind: Optional[str] = KindOpt, count: Optional[int] = CountOpt, owners: Optional[str] = OwnersOpt,
          bandwidth_bit_s: int = BandwidthOpt, latency_s: float = LatencyOpt, guest_count: str = GuestsOpt,
          csv_path: Optional[Path] = CsvOpt) -> None:
    """Where POLICY puts each task, with TGS's start and finish (eq. 7, no Monte Carlo)."""
    from experiments.models.tgs import GuestCount, tgs

    with user_errors():
        g, ws, rule, net = _setup(graph, workstations, policy, kind, count, owners, bandwidth_bit_s, latency_s)
        result = tgs(g, ws, rule, net, guest_count=_guest_count(guest_count, GuestCount), available=_availability(ws))
    console.print(f"workstations: {_ws_line(ws)}")
    console.print(_timeline_table(f"{g.name} placed by {policy}", result))
    console.print(f"TGS execution time: {result.makespan_s:.2f} s")
    _write_csv(csv_path, result)


def _guest_count(text: str, enum_type):
    try:
        return enum_type(text.strip().lower())
    except ValueError:
        raise ValueError(f"--guest-count: unknown {text!r} (known: {', '.join(e.value for e in enum_type)})") from None


@app.command("predict")
def predict(graph: str = typer.Argument(..., help=GRAPH_HELP), workstations: str = WsOpt, policy: str = PolicyOpt,
            kind: Optional[str] = KindOpt, count: Optional[int] = CountOpt, owners: Optional[str] = OwnersOpt,
            width: float = typer.Option(0.02, "--width", help="stop when the 95% half-width is this share of the mean"),
            seed: int = typer.Option(0, "--seed"),
            batch_size: int = typer.Option(20, "--batch-size", help="Monte Carlo iterations per batch"),
            max_batches: int = typer.Option(2000, "--max-batches"),
            bandwidth_bit_s: int = BandwidthOpt, latency_s: float = LatencyOpt, guest_count: str = GuestsOpt,
            csv_path: Optional[Path] = CsvOpt) -> None:
    """The execution time: TGS with eq. 7, and the Monte Carlo of Fig. 2 to a 95% interval."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from experiments.models.tgs import GuestCount, tgs
    from experiments.models.tgs_montecarlo import MonteCarloSettings, monte_carlo

    with user_errors():
        g, ws, rule, net = _setup(graph, workstations, policy, kind, count, owners, bandwidth_bit_s, latency_s)
        gc = _guest_count(guest_count, GuestCount)
        avail = _availability(ws)
        settings = MonteCarloSettings(rel_width=width, batch_size=batch_size, max_batches=max_batches, seed=seed)
        det = tgs(g, ws, rule, net, guest_count=gc, available=avail)
        with Progress(TextColumn("Monte Carlo"), BarColumn(), TextColumn("{task.fields[status]}"),
                      TimeElapsedColumn(), console=console, transient=True) as bar:
            job = bar.add_task("mc", total=settings.max_batches, status="")

            def on_batch(batches: int, mean_s: float, rel: float) -> None:
                bar.update(job, completed=batches,
                           status=f"{batches} batches, mean {mean_s:.2f} s, ±{rel:.1%} (target {width:.1%})")

            mc = monte_carlo(g, ws, rule, net, settings, gc, avail, on_batch)
    console.print(f"workstations: {_ws_line(ws)}")
    console.print(_timeline_table(f"{g.name} placed by {policy}: TGS (eq. 7) and Monte Carlo means", det, mc.tasks))
    console.print(f"TGS (eq. 7): {det.makespan_s:.2f} s")
    state = "converged" if mc.converged else "NOT converged"
    console.print(f"Monte Carlo: {mc.mean_s:.2f} s ± {mc.half_width_s:.2f} s (95%, ±{mc.rel_half_width:.2%}), "
                  f"{mc.batches} batches of {mc.batch_size}, {state}, seed {seed}, in {mc.elapsed_s:.2f} s")
    _write_csv(csv_path, det, mc.tasks)


def _write_csv(path: Path | None, result, means=()) -> None:
    from experiments.studies.menasce_rao.files import write_timeline_csv

    if path is not None:
        with user_errors():
            console.print(f"timeline written to {write_timeline_csv(path, result, means)}")


@app.command("run")
def run_live(graph: str = typer.Argument(..., help=GRAPH_HELP),
             cluster: Optional[str] = typer.Option(None, "--cluster", "-c", help="a running cluster (default: the only one)"),
             policy: str = PolicyOpt, count: Optional[int] = CountOpt,
             bandwidth_bit_s: Optional[int] = typer.Option(None, "--bandwidth-bit-s",
                                                           help="link rate the model uses (default: the cluster's egress)"),
             latency_s: float = LatencyOpt, guest_count: str = GuestsOpt,
             timeout_s: float = typer.Option(600.0, "--timeout-s", help="give up on the run after this long"),
             csv_path: Optional[Path] = typer.Option(None, "--csv", help="write measured and predicted times per task")) -> None:
    """Run GRAPH live on a cluster with speeds in reference cores: every task a real process on the
    workstation POLICY gives it (TGS's placement), messages over the shaped network; measured beside TGS."""
    from experiments.models.tgs import GuestCount, Network, tgs
    from experiments.studies.menasce_rao.files import load_graph
    from experiments.studies.menasce_rao.live import makespan_s, precedence_violations, run, workstations_of
    from scheduler.taskgraph.placement import get_policy
    from scheduler.taskgraph.workstations import select
    from testbed.cluster import Cluster

    with user_errors():
        rule = get_policy(policy)
        g = load_graph(graph)
        c = Cluster.attach(cluster)
        ws = select(workstations_of(c), count)
        rate = bandwidth_bit_s or min(c.spec.egress(w.name) for w in ws)
        predicted = tgs(g, ws, rule, Network(bandwidth_bit_s=rate, latency_s=latency_s),
                        guest_count=_guest_count(guest_count, GuestCount), available=_availability(ws))
        placement = {t.task: t.workstation for t in predicted.timings}
        console.print(f"workstations: {_ws_line(ws)}; links {rate / 1e6:g} Mbit/s in the model")
        with console.status(f"running {g.name} ({len(g.tasks)} tasks) on {c.name}"):
            runs = run(c, g, placement, timeout_s=timeout_s)
    table = Table(title=f"{g.name} placed by {policy}: measured and TGS")
    for col in ("task", "workstation", "start (s)", "TGS start (s)", "finish (s)", "TGS finish (s)"):
        table.add_column(col, justify="left" if col in ("task", "workstation") else "right")
    for r in runs:
        p = predicted.of(str(r.id))
        table.add_row(str(r.id), r.extra.workstation, f"{r.start_s:.2f}", f"{p.start_s:.2f}", f"{r.finish_s:.2f}",
                      f"{p.finish_s:.2f}")
    console.print(table)
    measured = makespan_s(runs)
    console.print(f"execution time: measured {measured:.2f} s, TGS {predicted.makespan_s:.2f} s "
                  f"(error {(predicted.makespan_s - measured) / measured:+.1%})")
    broken = precedence_violations(g, runs)
    console.print("every precedence arc respected" if not broken else "[red]" + "\n".join(broken) + "[/red]")
    if csv_path is not None:
        with csv_path.open("w") as f:
            f.write("task,workstation,start_s,finish_s,sent_s,tgs_start_s,tgs_finish_s\n")
            for r in runs:
                p = predicted.of(str(r.id))
                f.write(f"{r.id},{r.extra.workstation},{r.start_s:.6f},{r.finish_s:.6f},{r.extra.sent_s:.6f},"
                        f"{p.start_s:.6f},{p.finish_s:.6f}\n")
        console.print(f"written to {csv_path}")
    if broken:
        raise typer.Exit(1)


@app.command("tables")
def tables(cluster: Optional[str] = typer.Option(None, "--cluster", "-c",
                                                 help="a running compose/specs/menasce-rao.toml cluster"),
           which: str = typer.Option("2,3", "--tables", help="the paper's validation tables to run: 2, 3 or 2,3"),
           classes: Optional[str] = typer.Option(None, "--classes",
                                                 help="only these classes' rows, comma-separated (LX, SPARC5, "
                                                      "SPARC20; default all)"),
           reps: int = typer.Option(3, "--reps", help="live runs per row (the median is reported)"),
           task_reps: int = typer.Option(3, "--task-reps",
                                         help="runs of one task alone per class, for the task-profiled speeds "
                                              "(0: no profile)"),
           out: Path = typer.Option(Path("experiments/results/menasce-rao"), "--out", help="report directory"),
           seed: int = typer.Option(0, "--seed")) -> None:
    """Menascé & Rao's Tables 2 and 3 live: the wave front on 1-3 workstations of each class,
    measured beside TGS (and the Monte Carlo with owners), with the paper's numbers."""
    import shlex
    import sys

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from experiments.studies.menasce_rao.report import write
    from experiments.studies.menasce_rao.tables import measure_row, profile_speeds, rows
    from testbed.cluster import Cluster

    with user_errors():
        if reps < 1:
            raise ValueError(f"--reps: at least 1, got {reps}")
        if task_reps < 0:
            raise ValueError(f"--task-reps: at least 0, got {task_reps}")
        kinds = [k.strip() for k in classes.split(",") if k.strip()] if classes else None
        todo = rows([int(t) for t in which.split(",") if t.strip()], kinds)
        c = Cluster.attach(cluster)
        profiled = profile_speeds(c, task_reps, log=console.log, classes=kinds) if task_reps else None
        results = []
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=console) as bar:
            job = bar.add_task("rows", total=len(todo))
            for row in todo:
                bar.update(job, description=f"Table {row.table}: {row.n} {row.kind}")
                results.append(measure_row(c, row, reps, seed=seed, profiled=profiled, log=console.log))
                bar.advance(job)
        report = write(results, out, "nowlab taskgraph " + shlex.join(sys.argv[2:]))
    console.print(f"report: {report}")


@app.command("tables-join")
def tables_join(runs: list[Path] = typer.Argument(..., help="report directories of `tables --classes` runs"),
                out: Path = typer.Option(..., "--out", help="where the joined README.md and tables.csv go")) -> None:
    """Tables 2 and 3 joined from runs of a class or two each, judged as one (a row in two runs is an error)."""
    import shlex
    import sys

    from experiments.studies.menasce_rao.pieces import markdown, read, write_csv

    with user_errors():
        missing = [r for r in runs if not (r / "tables.csv").is_file()]
        if missing:
            raise ValueError(f"runs: no tables.csv in {missing[0]}")
        pieces = read([r / "tables.csv" for r in runs])
        out.mkdir(parents=True, exist_ok=True)
        write_csv(pieces, out / "tables.csv")
        text = markdown(pieces, "nowlab taskgraph " + shlex.join(sys.argv[2:]))
        (out / "README.md").write_text(text)
    console.print(text)


SPEC_DEFAULT = Path(__file__).resolve().parents[2] / "compose" / "specs" / "menasce-rao.toml"
StudyCluster = typer.Option(None, "--cluster", "-c", help="a running compose/specs/menasce-rao.toml cluster")
StudyReps = typer.Option(2, "--reps", help="live runs per point (the median is reported)")
StudyTaskReps = typer.Option(3, "--task-reps", help="runs of one task alone per class, for the task-profiled "
                                                    "speeds the Monte Carlo uses (0: the spec's speeds)")
StudyOut = typer.Option(Path("experiments/results/menasce-rao"), "--out", help="report directory")
PredictOnly = typer.Option(False, "--predict-only", help="predict and write the report without a cluster "
                                                         "(no live runs, no profile)")
StudySpec = typer.Option(SPEC_DEFAULT, "--spec", show_default="compose/specs/menasce-rao.toml",
                         help="the cluster spec the predictions read with --predict-only")


def _study_cluster(cluster: str | None, predict_only: bool, spec: Path, reps: int, task_reps: int):
    """The running cluster (or, with --predict-only, its spec) and the task-profiled speeds."""
    from experiments.studies.menasce_rao.measure import Planned
    from experiments.studies.menasce_rao.tables import profile_speeds
    from testbed.cluster import Cluster
    from testbed.spec import load

    if reps < 1:
        raise ValueError(f"--reps: at least 1, got {reps}")
    if task_reps < 0:
        raise ValueError(f"--task-reps: at least 0, got {task_reps}")
    if predict_only:
        return Planned(load(spec)), None
    c = Cluster.attach(cluster)
    return c, (profile_speeds(c, task_reps, log=console.log) if task_reps else None)


def _progress():
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=console)


@app.command("figures")
def figures(cluster: Optional[str] = StudyCluster,
            which: str = typer.Option("4,5,6", "--figures", help="the §5 figures to run: any of 4, 5, 6"),
            reps: int = StudyReps, task_reps: int = StudyTaskReps, out: Path = StudyOut, seed: int = typer.Option(0, "--seed"),
            predict_only: bool = PredictOnly, spec: Path = StudySpec) -> None:
    """Menascé & Rao's Figs. 4-6 live: the wave front on three workstations of each class against the
    owners' D, N and Z, measured beside the Monte Carlo and TGS, with the §5 remarks judged."""
    import shlex
    import sys

    from experiments.studies.menasce_rao import figures as figs
    from experiments.studies.menasce_rao.figures_report import write
    from experiments.studies.menasce_rao.sweeps import figures as parse_figures
    from experiments.studies.menasce_rao.sweeps import points

    command = "nowlab taskgraph " + shlex.join(sys.argv[2:])
    with user_errors():
        chosen = parse_figures(which)
        c, profiled = _study_cluster(cluster, predict_only, spec, reps, task_reps)
        todo = points(chosen)
        with _progress() as bar:
            job = bar.add_task("predicting", total=len(todo))
            results = []
            for p in todo:
                results.append(figs.predict_point(c, p, profiled=profiled, seed=seed))
                bar.advance(job)
        console.print(f"{len(todo)} points; live at --reps {reps}: about "
                      f"{figs.estimate_s(results, reps) / 60:.0f} min by the Monte Carlo means")
        if not predict_only:
            with _progress() as bar:
                job = bar.add_task("points", total=len(results))
                for i, r in enumerate(results):
                    p = r.point
                    bar.update(job, description=f"{p.kind} N={p.n} D={p.d_s:g} Z={p.z_s:g}")
                    results[i] = figs.measure_point(c, r, reps, seed=seed, log=console.log)
                    write(results, chosen, out, command, profiled)  # a run cut short keeps what it measured
                    bar.advance(job)
        report = write(results, chosen, out, command, profiled)
    console.print(f"report: {report}")


@app.command("placements")
def placements(cluster: Optional[str] = StudyCluster,
               graphs: str = typer.Option("wavefront,small-then-large", "--graphs",
                                          help="task graphs to compare the policies on"),
               owners_on: str = typer.Option("SPARC20", "--owners-on",
                                             help="classes whose workstations get the baseline owners in the "
                                                  "'with owners' runs (LX, SPARC5, SPARC20, or all)"),
               reps: int = StudyReps, task_reps: int = StudyTaskReps, out: Path = StudyOut,
               seed: int = typer.Option(0, "--seed"), predict_only: bool = PredictOnly,
               spec: Path = StudySpec) -> None:
    """Menascé & Rao §6: every placement policy on each graph, without and with owners, measured
    beside the Monte Carlo and TGS, with the paper's sentences about the policies judged."""
    import shlex
    import sys

    from experiments.studies.menasce_rao import placements as pl
    from experiments.studies.menasce_rao.placements_report import write
    from experiments.studies.menasce_rao.files import load_graph

    command = "nowlab taskgraph " + shlex.join(sys.argv[2:])
    with user_errors():
        loaded = pl.loaded_classes(owners_on)
        names = [g.strip() for g in graphs.split(",") if g.strip()]
        if not names:
            raise ValueError(f"--graphs: at least one task graph, got {graphs!r}")
        for g in names:
            load_graph(g)  # a bad graph fails before anything runs
        c, profiled = _study_cluster(cluster, predict_only, spec, reps, task_reps)
        todo = pl.cases(names)
        with _progress() as bar:
            job = bar.add_task("predicting", total=len(todo))
            results = []
            for case in todo:
                results.append(pl.predict_case(c, case, loaded, profiled=profiled, seed=seed))
                bar.advance(job)
        console.print(f"{len(todo)} cases; live at --reps {reps}: about {pl.estimate_s(results, reps) / 60:.0f} min "
                      "by the Monte Carlo means")
        if not predict_only:
            with _progress() as bar:
                job = bar.add_task("cases", total=len(results))
                for i, r in enumerate(results):
                    bar.update(job, description=f"{r.case.graph} {r.case.policy}"
                                                f"{' + owners' if r.case.owners else ''}")
                    results[i] = pl.measure_case(c, r, reps, loaded, seed=seed, log=console.log)
                    write(results, out, command, loaded, profiled)  # a run cut short keeps what it measured
                    bar.advance(job)
        report = write(results, out, command, loaded, profiled)
    console.print(f"report: {report}")
