"""Glue behind `nowlab run` and `nowlab report`: config -> store -> runner -> replay -> report.

After the runner, the post-processing steps run softly (experiments/steps.py):
failed steps of cells are redone first, then the predictions and the report;
an error in any of them is stored in the results and printed as one line, and
`nowlab report R` (or `nowlab run --resume --out R`) redoes it later.
"""
from __future__ import annotations

import dataclasses
import math
import sqlite3
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from rich.console import Console

from experiments import config as cfg
from experiments import steps, until_resolved
from experiments.replay import replay
from experiments.report import error_table_text, measured_claims, seconds_per_replication, write_report
from experiments.reporting.claims import Claim
from experiments.runner import Runner, cluster_spec, swf_stream
from experiments.store import ResultsStore, StoreError
from experiments.traces.swf_export import export
from testbed.config_loader import validate
from testbed.placement import SpeedRefused
from testbed.spec import SpecError

SpeedScale = float | str | None  # a number, "fit" (testbed.speed_fit), or None: the config's own

console = Console(stderr=True)


def default_out(config: cfg.ExperimentConfig) -> Path:
    return Path("results") / f"{config.name}.sqlite"


def open_store(target: Path | None, out: Path | None, resume: bool,
               backend: str | None = None, speed_scale: SpeedScale = None) -> tuple[ResultsStore, cfg.ExperimentConfig]:
    """The store to write into and the config it holds; checks everything before a container starts."""
    from testbed import backends
    if backend is not None and backend not in backends.KINDS:
        raise cfg.ConfigError(f"backend: unknown {backend!r} (known: {', '.join(backends.KINDS)})")
    if speed_scale is not None and resume:
        raise cfg.ConfigError("--speed-scale: a resumed run keeps the scale it began with")
    if resume:
        if out is None:
            if target is None:
                raise cfg.ConfigError("--resume needs the results file (or the config it came from)")
            if target.suffix == ".toml":
                out = default_out(cfg.load(target))
            else:
                out = target
        store = ResultsStore.open(out)  # takes the file's writer lock: a second runner stops here
        try:
            try:
                config = validate(cfg.ExperimentConfig, store.config, cfg.ConfigError)
            except cfg.ConfigError as exc:
                raise cfg.ConfigError(f"{out}: the stored config: {exc}") from None
            if target is not None and target.suffix == ".toml" and cfg.load(target).model_copy(
                    update={"speed_scale": config.speed_scale}).with_work_scaled().dump() != config.dump():
                raise cfg.ConfigError(f"{target}: differs from the config stored in {out}; resume with the same one")
            if backend is not None and backend != store.backend:
                raise cfg.ConfigError(f"backend: {out} ran on {store.backend!r}; resume it there, not on {backend!r}")
            cfg.check_cluster(config, out)
            check_trace(config, out)
        except BaseException:
            store.close()
            raise
        return store, config
    if target is None:
        raise cfg.ConfigError("name an experiment config")
    config = with_speed_scale(cfg.load(target), speed_scale, backend or backends.DEFAULT)
    check_trace(config, target)
    out = out or default_out(config)
    out.parent.mkdir(parents=True, exist_ok=True)
    return ResultsStore.create(out, config.dump(), target.read_text(), backend or backends.DEFAULT), config


def with_speed_scale(config: cfg.ExperimentConfig, speed_scale: SpeedScale, backend: str) -> cfg.ExperimentConfig:
    """The config at the scale asked: a number as given, "fit" read off this host's cores now."""
    if speed_scale is None:
        return config
    if speed_scale == "fit":
        return config.model_copy(update={"speed_scale": fitted_scale(config, backend)}).with_work_scaled()
    try:
        return cfg.ExperimentConfig.model_validate(
            {**config.model_dump(by_alias=True), "speed_scale": speed_scale}).with_work_scaled()
    except ValueError:
        raise cfg.ConfigError(f"--speed-scale: must be a number in (0, 1] or 'fit', got {speed_scale!r}") from None


def fitted_scale(config: cfg.ExperimentConfig, backend: str) -> float:
    """The largest scale of the config's speeds this host holds (testbed.speed_fit), said in one line."""
    from testbed import backends, meter, speed_fit
    spec = cluster_spec(config.model_copy(update={"speed_scale": 1.0}))
    be = backends.get(backend, spec)
    if be.capabilities.places_on_hosts:
        raise cfg.ConfigError(f"--speed-scale: 'fit' reads this host's cores; on the {backend} backend give a number")
    got = speed_fit.fit(spec, be.cores(), be.pinned_load(),
                        lambda cores, seconds: meter.quick_factors(cores, seconds, kernel=spec.kernel))
    console.log(got.describe(spec))
    if got.scale is None:
        raise SpeedRefused(f"--speed-scale: {got.describe(spec)}")
    return got.scale


def check_trace(config: cfg.ExperimentConfig, where: Path) -> None:
    """An SWF source must import as the runner will import it, before the results file exists."""
    if config.arrivals.swf is None:
        return
    try:
        swf_stream(config, config.arrivals.rates[0])
    except ValueError as exc:  # SwfError, a bad class range, too few jobs: one line each
        raise cfg.ConfigError(f"{where}: arrivals.swf: {exc}") from None


#: How many scales `--speed-scale fit` tries when placement refuses the one it fitted: placement reads
#: the cores again, and on this host a core read 1.27 for the fit and 1.23 for placement a minute later.
FIT_TRIES = 3


def run_experiment(target: Path | None, *, out: Path | None, resume: bool, report: bool = True,
                   reprofile: bool = False, backend: str | None = None, speed_scale: SpeedScale = None,
                   until: until_resolved.Limits | None = None) -> Path:
    """`until`: add replications round by round until the claims are resolved or a limit is met
    (`--until-resolved`: a stored run at `out` is carried on, else one is started). `backend`: where the cluster runs (testbed.backends.KINDS; None: Docker, or on --resume
    the run's own, which a different one given here is refused against). `speed_scale`: the
    cluster's speeds times a number, or "fit" this host (a new run only; stored with it). A
    fitted scale that placement refuses before anything ran is tried one step lower, up to
    FIT_TRIES scales in all."""
    from testbed.speed_fit import MIN_SCALE, SCALE_STEP

    started = time.monotonic()  # --until-resolved's budget runs from here
    if until is not None:
        if target is not None and target.suffix == ".toml" and not cfg.load(target).claims:
            raise cfg.ConfigError(f"--until-resolved: {target} states no claims to resolve")
        resume = resume or _stored_run(target, out) is not None
    scale = speed_scale
    for attempt in range(FIT_TRIES if speed_scale == "fit" and not resume else 1):
        try:
            return _run_once(target, out=out, resume=resume, report=report, reprofile=reprofile, backend=backend,
                             speed_scale=scale, fitted=speed_scale == "fit", until=until, started=started)
        except _FittedScaleRefused as exc:
            lower = round(exc.scale - SCALE_STEP, 6)
            if attempt + 1 == FIT_TRIES or lower < MIN_SCALE - 1e-9:
                raise exc.refusal from None
            console.log(f"placement refused the fitted {exc.scale:g}x ({exc.refusal}): trying {lower:g}x")
            scale = lower
    raise AssertionError("unreachable: the last try returns or raises")


class _FittedScaleRefused(Exception):
    """Placement refused a fitted scale before anything ran (the results file is removed)."""

    def __init__(self, scale: float, refusal: SpeedRefused) -> None:
        super().__init__(str(refusal))
        self.scale, self.refusal = scale, refusal


def _stored_run(target: Path | None, out: Path | None) -> Path | None:
    """The results file `--until-resolved` carries on, when it exists (--out, else the config's default)."""
    if out is None and target is not None and target.suffix == ".toml":
        out = default_out(cfg.load(target))
    return out if out is not None and out.exists() else None


def _run_once(target: Path | None, *, out: Path | None, resume: bool, report: bool, reprofile: bool,
              backend: str | None, speed_scale: SpeedScale, fitted: bool,
              until: until_resolved.Limits | None = None, started: float | None = None) -> Path:
    """One try of `run_experiment`; `fitted`: the scale came from `--speed-scale fit` (a refusal
    of it before anything ran raises _FittedScaleRefused, for a try one step lower)."""
    from testbed.progress import progress_bar

    store, config = open_store(target, out, resume, backend, speed_scale)
    refused = False
    try:
        k = config.speed_scale
        about = f"about {config.minutes:g} min here" if k == 1 else (
            f"speeds at {k:g}x: about {config.minutes:g} min at full speed, up to {config.minutes / k:.0f} at this one")
        console.rule(f"[bold]{config.title}[/] ({config.name}, {about})")
        rounds = None
        if until is not None:
            rounds = UntilResolved(store, config, until, log=console.print, started=started)
            for line in rounds.plan_lines():
                console.print(line)
            if rounds.first_stop() is not None:
                console.print(f"nothing to run: {rounds.first_stop()}")
                return store.path
        with progress_bar() as update:
            runner = Runner(config, store, update=update, log=console.log, reprofile=reprofile)
            if rounds is None:
                runner.run()
            else:
                runner.run(rounds)
        if report:
            post_process(store, None, predict=True)
        else:
            steps.redo(store, console.log)  # the cells' own steps all the same
        return store.path
    except SpecError as exc:  # the cluster could not be placed (its speeds, now): nothing ran
        refused = not resume and store.jobs_frame().empty
        if refused and isinstance(exc, SpeedRefused) and fitted:
            raise _FittedScaleRefused(config.speed_scale, exc) from None
        if refused and isinstance(exc, SpeedRefused) and config.speed_scale == 1:
            raise SpeedRefused(f"{exc}; to run it uniformly slower on this host: --speed-scale fit") from None
        raise
    finally:
        store.close()
        if refused:  # a new results file with nothing in it would only make the retry say "use --resume"
            for path in (store.path, *(store.path.with_name(store.path.name + x) for x in ("-wal", "-shm"))):
                path.unlink(missing_ok=True)


def post_process(store: ResultsStore, out: Path | None, *, predict: bool) -> list[str]:
    """Redo the cells' failed steps, then predict (if asked, or if it failed before) and report.

    Returns one line per step still failing (each already stored and printed); nothing raises.
    """
    steps.redo(store, console.log)
    failed_before = {f.step for f in store.step_failures() if f.cell_id is None}
    if predict or steps.PREDICTIONS in failed_before:
        steps.attempt(store, steps.PREDICTIONS, lambda: replay(store, log=console.log), log=console.log)
    steps.attempt(store, steps.REPORT, lambda: _render(store, out), log=console.log)
    return [f"{f.step} of {f.where}: {f.error}" for f in store.step_failures()]


def _render(store: ResultsStore, out: Path | None) -> None:
    paths = write_report(store.path, out)
    swfs = export(store, paths.out_dir / "swf")
    console.print(error_table_text(store.path))
    console.print(f"SWF exports: {len(swfs)} files in {paths.out_dir / 'swf'}")
    console.print(f"report: {paths.markdown}")


def failed_steps(results: Path) -> list[str]:
    """One line per post-processing step of a stored run still to be redone."""
    with ResultsStore.open(results, readonly=True) as store:
        return [f"{f.step} of {f.where}: {f.error}" for f in store.step_failures()]


def make_report(results: Path, *, out: Path | None, predict: bool) -> list[str]:
    """The report of a stored run, redoing its failed steps; returns the steps still failing."""
    try:
        store = ResultsStore.open(results)
    except (StoreError, sqlite3.DatabaseError) as exc:
        raise ValueError(str(exc)) from None
    try:
        return post_process(store, out, predict=predict)
    finally:
        store.close()


Judge = Callable[[ResultsStore, Sequence[int]], list[Claim]]


class UntilResolved:
    """`--until-resolved`'s rounds (`runner.Rounds`): before each, the claims judged on the store's complete
    replications and the planner's decision (experiments/until_resolved.py); after each, the verdicts and what
    is still unresolved. Each round is timed, for the budget's estimate of the next."""

    def __init__(self, store: ResultsStore, config: cfg.ExperimentConfig, limits: until_resolved.Limits, *,
                 log: Callable[[str], None], judge: Judge = measured_claims, started: float | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if not config.claims:
            raise cfg.ConfigError(f"--until-resolved: {config.name} states no claims to resolve")
        self.store, self.config, self.log, self.judge, self.clock = store, config, log, judge, clock
        self.limits = dataclasses.replace(limits, min_replications=config.arrivals.replications)  # the config's own first
        self.started = clock() if started is None else started
        self.rounds_s: list[float] = []  # each round's seconds, scaled to a whole round
        self.decision: until_resolved.Decision | None = None
        self._round: tuple[float, int] | None = None  # (its start, its cells)
        if config.arrivals.swf is not None:
            log("note: arrivals.swf: every replication replays the same trace, so replications measure the "
                "run's own noise only")

    @property
    def per_round(self) -> int:
        return len(self.config.policies) * len(self.config.arrivals.rates)

    def status(self) -> dict[until_resolved.CellKey, str]:
        cells = self.store.cells_frame()
        return {(str(p), float(r), int(rep)): str(s)
                for p, r, rep, s in zip(cells.policy, cells.rate, cells.replication, cells.status)}

    def stored_seconds_per_replication(self, have: Sequence[int]) -> float:
        cells = self.store.cells_frame()
        return seconds_per_replication(cells[cells.replication.isin(set(have))])

    def _state(self) -> tuple[dict[until_resolved.CellKey, str], list[int], list[Claim]]:
        status = self.status()
        have = until_resolved.complete(self.config.policies, self.config.arrivals.rates, status)
        return status, have, self.judge(self.store, have)

    def plan_lines(self) -> list[str]:
        """The power analysis before the rounds: per claim, what it needs and whether the budget covers it."""
        _, have, claims = self._state()
        return until_resolved.plan_lines(claims, len(have), self.stored_seconds_per_replication(have), self.limits,
                                         self.clock() - self.started)

    def _decide(self) -> until_resolved.Decision:
        status, have, claims = self._state()
        if self._round is not None:
            for line in until_resolved.verdict_lines(claims, len(have)):
                self.log(line)
        estimate = until_resolved.round_estimate(self.rounds_s, self.stored_seconds_per_replication(have))
        return until_resolved.decide(self.config.policies, self.config.arrivals.rates, status,
                                     [c.verdict for c in claims], self.limits,
                                     elapsed_s=self.clock() - self.started, round_s=estimate)

    def first_stop(self) -> str | None:
        """Why nothing would run at all (already resolved, the cap, a failed cell), before the cluster starts."""
        d = self._decide()
        return d.why if d.stop is not None else None

    def __call__(self) -> list[until_resolved.CellKey] | None:
        now = self.clock()
        if self._round is not None:
            t, n = self._round
            self.rounds_s.append((now - t) * self.per_round / max(n, 1))
        d = self.decision = self._decide()
        if d.stop is not None:
            self.log(f"stopped: {d.why}")
            return None
        est = until_resolved.round_estimate(self.rounds_s, math.nan)
        self.log(f"round: {d.why}" + (f" (about {est:.0f} s a round so far)" if math.isfinite(est) else ""))
        self._round = (self.clock(), len(d.cells))
        return list(d.cells)
