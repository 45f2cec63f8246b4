"""Post-processing steps of a live run, which may fail without ending it.

A live run's jobs are its only irreplaceable data. Everything else is derived
from what was measured: a segment's CSV artifacts (from the executor's
record), a cell's availability (from the monitor's series), the monitor's
series themselves, the predictions (from the stored streams, profiles and
calibration) and the report. An error in any of those must not kill a run
that has hours of jobs behind it and ahead of it (the demo died at its end on
one). So each runs through `attempt`: an error is stored in the results
store's `step_failures` table together with what redoing the step needs and
nothing else keeps (the segment's record, the availability window, the
monitor's rows), printed as one line, and the run goes on. A cell whose jobs
are all stored is `done` even if a step of it failed; the report lists the
failed steps. `redo` retries every stored failure of a cell or a session;
`nowlab report R` and `nowlab run --resume --out R` call it, and a step that
succeeds is cleared.
"""
from __future__ import annotations

import io
import json
import pickle
from dataclasses import asdict, dataclass
from typing import Callable

import pandas as pd

from experiments.store import ResultsStore, StepFailure
from scheduler.live.result import LiveResult
from testbed.load.monitor import summarize

Log = Callable[[str], None]

ARTIFACTS = "artifacts"  # a segment's timeline, decisions and runs CSVs, and its resizes table rows
AVAILABILITY = "availability"  # a cell's AvgAvailCPU / AvgAvailBW over its last segment
MONITOR = "monitor"  # a runner session's monitor series (step name: monitor-<session>)
PREDICTIONS = "predictions"  # every cell replayed through the engine
REPORT = "report"  # report.md, figures, CSVs, SWF exports


def one_line(exc: BaseException) -> str:
    """`Type: first line of the message`, as stored and printed."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def attempt(store: ResultsStore, step: str, fn: Callable[[], object], *, log: Log, cell: int | None = None,
            segment: int | None = None, payload: Callable[[], bytes] | None = None) -> bool:
    """Run one step; on an error store it (with `payload()`, what redoing needs) and say so in one line.

    Returns whether the step succeeded; a success clears an earlier failure of the same step.
    """
    try:
        fn()
    except Exception as exc:  # broad on purpose: no analysis error may end a run; it is stored and redone
        error = one_line(exc)
        data = None
        if payload is not None:
            try:
                data = payload()
            except Exception as keep_exc:  # e.g. an unpicklable record: say the step cannot be redone
                error += f" (what redoing it needs could not be kept: {one_line(keep_exc)})"
        store.add_step_failure(cell, segment, step, error, data)
        where = StepFailure(cell, segment, step, error, data, 0.0).where
        log(f"{step} of {where} failed: {error}; stored in {store.path}, redo with `nowlab report {store.path}`")
        return False
    store.clear_step_failure(cell, segment, step)
    return True


# ---- the steps themselves -----------------------------------------------------------------------

def segment_artifacts(store: ResultsStore, cell: int, seg: int, offset: float, result: LiveResult) -> None:
    """The segment's timeline (on the cell's stream clock), decisions and physical runs as CSV
    artifacts, and its resizes into the store's resizes table."""
    tl = result.timeline_dataframe()
    tl["time"] = tl["time"] + offset
    store.add_artifact(cell, f"timeline-{seg}.csv", tl.to_csv(index=False))
    store.add_artifact(cell, f"decisions-{seg}.csv", result.decisions_dataframe().to_csv(index=False))
    store.add_resizes(cell, seg, offset, result.resizes)
    store.add_artifact(cell, f"runs-{seg}.csv", result.runs_dataframe().to_csv(index=False))


def segment_payload(offset: float, result: LiveResult) -> bytes:
    """The executor's record of a segment (only in memory otherwise), to redo its artifacts."""
    return pickle.dumps((offset, result))


@dataclass(frozen=True)
class Window:
    """Where in a runner session's monitor series a cell's availability is averaged."""

    session: int  # the calibration id of the runner session (its monitor's clock)
    hosts: tuple[str, ...]
    t0: float  # seconds on that monitor's clock
    t1: float

    def payload(self) -> bytes:
        return json.dumps(asdict(self)).encode()

    @classmethod
    def from_payload(cls, data: bytes) -> Window:
        d = json.loads(data)
        return cls(int(d["session"]), tuple(d["hosts"]), float(d["t0"]), float(d["t1"]))


def availability(store: ResultsStore, cell: int, cpu: pd.DataFrame, links: pd.DataFrame, window: Window) -> None:
    """Sanjay & Vadhiyar's averages over the window, as the cell's availability."""
    av = summarize(cpu, links, window.hosts, window.t0, window.t1)
    store.set_availability(cell, {"t0": window.t0, "t1": window.t1, "avg_avail_cpu": av.avg_avail_cpu,
                                  "min_avg_avail_cpu": av.min_avg_avail_cpu,
                                  "avg_avail_bw": {f"{s}->{d}": v for (s, d), v in av.avg_avail_bw.items()},
                                  "min_avg_avail_bw": av.min_avg_avail_bw})


def monitor_names(session: int) -> tuple[str, str]:
    """The run-wide artifacts of one runner session's monitor (each resume is a new session and clock)."""
    return f"monitor_cpu-{session}.csv", f"monitor_links-{session}.csv"


def save_monitor(store: ResultsStore, session: int, cpu: pd.DataFrame, links: pd.DataFrame) -> None:
    cpu_name, links_name = monitor_names(session)
    store.add_artifact(None, cpu_name, cpu.to_csv(index=False))
    store.add_artifact(None, links_name, links.to_csv(index=False))


def monitor_payload(cpu_rows: list[dict], link_rows: list[dict]) -> bytes:
    """The monitor's raw rows (plain dicts), to redo its series."""
    return pickle.dumps((list(cpu_rows), list(link_rows)))


def stored_monitor(store: ResultsStore, session: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A session's monitor series from the store; refuses, in one line, a session whose series is missing."""
    texts = store.artifacts(None)
    cpu_name, links_name = monitor_names(session)
    if cpu_name not in texts:
        raise ValueError(f"the monitor series of session {session} is not stored (see its monitor step)")

    def frame(text: str) -> pd.DataFrame:
        return pd.read_csv(io.StringIO(text)) if text.strip() else pd.DataFrame()

    return frame(texts[cpu_name]), frame(texts.get(links_name, ""))


# ---- redoing ------------------------------------------------------------------------------------

def redo(store: ResultsStore, log: Log) -> list[StepFailure]:
    """Retry every stored failure of a cell or a monitor (the monitor first: availability reads it);
    returns those still failing. Predictions and the report are the caller's (experiments/live.py)."""
    failures = store.step_failures()
    order = {MONITOR: 0, ARTIFACTS: 1, AVAILABILITY: 2}
    for f in sorted(failures, key=lambda f: order.get(_kind(f.step), 9)):
        kind = _kind(f.step)
        if kind not in order:
            continue
        if f.payload is None:
            log(f"{f.step} of {f.where} cannot be redone: {f.error}")
            continue
        log(f"redoing {f.step} of {f.where}")
        attempt(store, f.step, _redo_fn(store, f), log=log, cell=f.cell_id, segment=f.segment,
                payload=lambda data=f.payload: data)
    return [f for f in store.step_failures() if _kind(f.step) in order]


def _kind(step: str) -> str:
    return MONITOR if step.startswith(f"{MONITOR}-") else step


def _redo_fn(store: ResultsStore, f: StepFailure) -> Callable[[], None]:
    kind = _kind(f.step)
    if kind == MONITOR:
        session = int(f.step.split("-", 1)[1])

        def monitor() -> None:
            cpu_rows, link_rows = pickle.loads(f.payload)
            save_monitor(store, session, pd.DataFrame(cpu_rows), pd.DataFrame(link_rows))
        return monitor
    if kind == ARTIFACTS:
        def artifacts() -> None:
            offset, result = pickle.loads(f.payload)
            segment_artifacts(store, f.cell_id, f.segment, offset, result)
        return artifacts

    def avail() -> None:
        window = Window.from_payload(f.payload)
        cpu, links = stored_monitor(store, window.session)
        availability(store, f.cell_id, cpu, links, window)
    return avail
