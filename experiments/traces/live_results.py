"""A live run's results written as CSV files: the timeline, the jobs and, on request, the decisions,
resizes and runs (the executor hands them over as DataFrames; the scheduler writes no files)."""
from __future__ import annotations

from pathlib import Path

from scheduler.live.result import LiveResult


def write_live_result(result: LiveResult, timeline: Path, jobs: Path, extras: Path | None = None) -> list[Path]:
    """The timeline and per-job CSVs; with `extras` (a folder) also decisions, resizes and runs CSVs."""
    result.timeline_dataframe().to_csv(timeline, index=False)
    result.to_dataframe().to_csv(jobs, index=False)
    paths = [Path(timeline), Path(jobs)]
    if extras is not None:
        extras = Path(extras)
        extras.mkdir(parents=True, exist_ok=True)
        for name, df in (("decisions.csv", result.decisions_dataframe()), ("resizes.csv", result.resizes_dataframe()),
                         ("runs.csv", result.runs_dataframe())):
            df.to_csv(extras / name, index=False)
            paths.append(extras / name)
    return paths


