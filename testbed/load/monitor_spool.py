"""The monitor's series on disk as it is sampled, so a long run keeps only a recent window in memory.

A two-hour soak run's monitor held every row in memory: 16 dicts a second on four
workstations (four CPU rows, twelve links), its resident memory growing by about 20 MiB an
hour, and every job's availability rebuilt DataFrames from all of them. Here each series is
appended to a CSV file as the rows come (one file per series, a header from the first row),
and read back, filtered by time, for a window older than the memory holds or for the whole
run. Python writes a float's shortest repr, so a row read back equals the row written.
"""
from __future__ import annotations

import csv
import math
import shutil
import tempfile
import threading
import weakref
from pathlib import Path
from typing import IO, Any

import pandas as pd


class Spool:
    """CSV files in a private temporary folder, removed when the spool is garbage-collected."""

    def __init__(self, names: tuple[str, ...], prefix: str = "nowlab-monitor-") -> None:
        self.folder = Path(tempfile.mkdtemp(prefix=prefix))
        self._finalizer = weakref.finalize(self, shutil.rmtree, self.folder, ignore_errors=True)
        self._files: dict[str, IO[str]] = {}
        self._writers: dict[str, Any] = {}  # csv writers
        self._names = names
        self._lock = threading.Lock()  # appends (the sampling thread) against reads (any other)

    def append(self, name: str, rows: list[dict]) -> None:
        """Rows of one series, all with the first row's keys in its order (the monitor's rows are)."""
        if not rows:
            return
        with self._lock:
            if name not in self._writers:
                fh = open(self.folder / f"{name}.csv", "w", newline="")  # noqa: SIM115 - held for the spool's life
                self._files[name] = fh
                self._writers[name] = csv.writer(fh)
                self._writers[name].writerow(list(rows[0]))
            self._writers[name].writerows([r.values() for r in rows])
            self._files[name].flush()

    def read(self, name: str, t0: float = -math.inf, t1: float = math.inf) -> pd.DataFrame:
        """The rows of `name` with t0 <= t <= t1 (an empty frame before the first row)."""
        with self._lock:
            if name not in self._files:
                return pd.DataFrame()
            frame = pd.read_csv(self.folder / f"{name}.csv")
        if math.isfinite(t0) or math.isfinite(t1):
            frame = frame[(frame["t"] >= t0) & (frame["t"] <= t1)].reset_index(drop=True)
        return frame

    def close(self) -> None:
        for fh in self._files.values():
            fh.close()
        self._finalizer()
