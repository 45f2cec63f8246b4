"""The results of one live experiment run, in one SQLite file.

A live run takes hours and may be killed at any moment (a workstation dies,
the machine reboots, someone presses Ctrl-C). So every finished job is its
own committed transaction, the whole arrival stream of a cell is stored when
the cell is created (a resumed run replays exactly the same jobs), and a
UNIQUE(cell, job) constraint makes it impossible to count a job twice.

Opening checks the file before anything writes to it: a file that is not
ours (a text file, another program's database, a truncated copy) is refused
with one line and left byte-for-byte as it was. One process writes a store at
a time: opening for writing takes its lock (experiments/store/lock.py), so a
second runner on the same file is refused before it touches anything.
"""
from __future__ import annotations

import json
import math
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

import pandas as pd

from experiments.store import resizes as store_resizes
from experiments.store.lock import WriterLock
from scheduler.jobs import STORED_COLUMNS, FinishedJob, SubmittedJob
from workloads.host.records import ResizeRecord

FORMAT = "nowlab-results"
VERSION = 4  # 2: step_failures; 3: resizes; 4: prediction_bands (an older store gains each table when opened for writing)
CELL_STATUSES = ("pending", "running", "done", "interrupted", "failed")
_SQLITE_MAGIC = b"SQLite format 3\x00"

# A finished job's columns as stored after its job_id (derived wait/execution/response are computed on read).
_OUTCOME_COLS = tuple(STORED_COLUMNS)[1:]

# A failed post-processing step; cell_id NULL: the whole run's (predictions, report), segment NULL:
# the cell's. `payload` holds what redoing it needs and nothing else keeps (e.g. the segment's record).
_STEPS_SCHEMA = """
CREATE TABLE IF NOT EXISTS step_failures (
    cell_id INTEGER REFERENCES cells(id), segment INTEGER, step TEXT NOT NULL,
    error TEXT NOT NULL, payload BLOB, failed_at REAL NOT NULL);
CREATE UNIQUE INDEX IF NOT EXISTS step_failures_key
    ON step_failures (COALESCE(cell_id, -1), COALESCE(segment, -1), step);
CREATE TABLE IF NOT EXISTS prediction_bands (  -- each statistic over the replays of experiments.predict.ensemble
    cell_id INTEGER PRIMARY KEY REFERENCES cells(id), replicas INTEGER NOT NULL, json TEXT NOT NULL);
"""

_SCHEMA = f"""
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE calibrations (
    id INTEGER PRIMARY KEY AUTOINCREMENT, taken_at REAL NOT NULL, json TEXT NOT NULL);
CREATE TABLE profiles (cls TEXT PRIMARY KEY, json TEXT NOT NULL, updated_at REAL NOT NULL);
CREATE TABLE cells (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    policy TEXT NOT NULL, rate REAL NOT NULL, replication INTEGER NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ({", ".join(f"'{s}'" for s in CELL_STATUSES)})),
    elapsed_s REAL NOT NULL DEFAULT 0,   -- heartbeat: stream time reached
    error TEXT NOT NULL DEFAULT '',
    interruptions INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL, updated_at REAL NOT NULL,
    UNIQUE (policy, rate, replication));
CREATE TABLE segments (
    cell_id INTEGER NOT NULL REFERENCES cells(id), seq INTEGER NOT NULL,
    offset_s REAL NOT NULL, hosts TEXT NOT NULL,
    calibration_id INTEGER REFERENCES calibrations(id), started_at REAL NOT NULL,
    PRIMARY KEY (cell_id, seq));
CREATE TABLE stream (
    cell_id INTEGER NOT NULL REFERENCES cells(id), job_id INTEGER NOT NULL,
    cls TEXT NOT NULL, arrival REAL NOT NULL, demand REAL NOT NULL, requested INTEGER,
    PRIMARY KEY (cell_id, job_id));
CREATE TABLE jobs (
    cell_id INTEGER NOT NULL, job_id INTEGER NOT NULL, segment INTEGER NOT NULL,
    cls TEXT NOT NULL, demand REAL NOT NULL, arrival REAL NOT NULL, start REAL, finish REAL,
    mean_procs REAL, max_procs INTEGER NOT NULL, requested INTEGER NOT NULL, preemptions INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('done', 'failed', 'walltime')), error TEXT NOT NULL,
    delivered_speed REAL,
    recorded_at REAL NOT NULL,
    UNIQUE (cell_id, job_id),
    FOREIGN KEY (cell_id, job_id) REFERENCES stream(cell_id, job_id),
    FOREIGN KEY (cell_id, segment) REFERENCES segments(cell_id, seq));
CREATE TABLE predictions (
    cell_id INTEGER NOT NULL, job_id INTEGER NOT NULL,
    cls TEXT NOT NULL, demand REAL NOT NULL, arrival REAL NOT NULL, start REAL, finish REAL,
    mean_procs REAL, max_procs INTEGER NOT NULL, requested INTEGER NOT NULL, preemptions INTEGER NOT NULL,
    status TEXT NOT NULL, error TEXT NOT NULL, delivered_speed REAL,
    PRIMARY KEY (cell_id, job_id),
    FOREIGN KEY (cell_id, job_id) REFERENCES stream(cell_id, job_id));
CREATE TABLE availability (cell_id INTEGER PRIMARY KEY REFERENCES cells(id), json TEXT NOT NULL);
CREATE TABLE artifacts (  -- cell_id NULL: the whole run's (e.g. the monitor's series)
    cell_id INTEGER REFERENCES cells(id), name TEXT NOT NULL, text TEXT NOT NULL);
CREATE UNIQUE INDEX artifacts_name ON artifacts (COALESCE(cell_id, -1), name);
""" + _STEPS_SCHEMA + store_resizes.SCHEMA


@dataclass(frozen=True)
class StepFailure:
    """A post-processing step that failed and is still to be redone."""

    cell_id: int | None  # None: a step of the whole run
    segment: int | None  # None: a step of the whole cell (or run)
    step: str
    error: str
    payload: bytes | None
    failed_at: float

    @property
    def where(self) -> str:
        if self.cell_id is None:
            return "the run"
        return f"cell {self.cell_id}" + (f" segment {self.segment}" if self.segment is not None else "")


class StoreError(ValueError):
    """A results-file problem, as one line naming the file (a ValueError, like ConfigError,
    so the CLI prints it as one line)."""


class ResultsStore:
    """One experiment run's results. Thread-safe: one connection, one lock.

    Use `create` for a new run and `open` to resume or report one; never the
    constructor directly.
    """

    def __init__(self, path: Path, conn: sqlite3.Connection, readonly: bool, lock: WriterLock | None = None) -> None:
        self.path = path
        self.readonly = readonly
        self._conn = conn
        self._writer = lock  # held until close: one writer per file (experiments/store/lock.py)
        self._side_made = False  # a read-only look made the -wal/-shm files: its close removes them
        self._lock = threading.RLock()
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        self.config: dict[str, Any] = json.loads(meta["config"])
        self.config_text: str = meta.get("config_text", "")
        self.created_at: float = float(meta.get("created_at", "nan"))
        self.backend: str = meta.get("backend", "docker")  # where the cluster runs (testbed.backends.KINDS)
        self._has_speed = "delivered_speed" in _columns(conn, "jobs")  # read-only older store: NULLs
        self._has_steps = _has_table(conn, "step_failures")
        self._has_resizes = _has_table(conn, "resizes")  # read-only older store: its CSV artifacts

    # ---- opening ---------------------------------------------------------------------------------

    @classmethod
    def create(cls, path: str | Path, config: dict[str, Any], config_text: str,
               backend: str = "docker") -> ResultsStore:
        """A new, empty store; refuses an existing path so a finished run is never overwritten.

        The schema is built in a temporary file and moved into place, so a
        crash during creation never leaves a half-made store at `path`.
        """
        path = Path(path)
        if path.exists():
            raise StoreError(f"results: {path} exists; use --resume to continue it or choose another --out")
        path.parent.mkdir(parents=True, exist_ok=True)
        lock = WriterLock.acquire(path)  # before the check below: two creators must not both pass it
        try:
            return cls._create(path, config, config_text, lock, backend)
        except BaseException:
            lock.release()
            raise

    @classmethod
    def _create(cls, path: Path, config: dict[str, Any], config_text: str, lock: WriterLock,
                backend: str = "docker") -> ResultsStore:
        if path.exists():
            raise StoreError(f"results: {path} exists; use --resume to continue it or choose another --out")
        try:
            # key order kept: the arrival stream draws classes in the mix's order, so a
            # sorted mix read back for --resume gave a different stream
            config_json = json.dumps(config)
        except (TypeError, ValueError) as exc:
            raise StoreError(f"results: the config is not JSON-able ({exc})") from None
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.unlink(missing_ok=True)
        try:
            conn = sqlite3.connect(tmp)
            try:
                with conn:
                    conn.executescript(_SCHEMA)
                    conn.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", [
                        ("format", FORMAT), ("version", str(VERSION)), ("created_at", repr(time.time())),
                        ("created", time.strftime("%Y-%m-%dT%H:%M:%S%z")),
                        ("config", config_json), ("config_text", config_text), ("backend", backend)])
            finally:
                conn.close()
            if path.exists():  # someone else created it meanwhile
                raise StoreError(f"results: {path} exists; use --resume to continue it or choose another --out")
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
        return cls._open(path, readonly=False, lock=lock)

    @classmethod
    def open(cls, path: str | Path, *, readonly: bool = False) -> ResultsStore:
        """An existing store, checked read-only first so a foreign or damaged file is never written.

        `readonly=True` keeps that read-only connection (for reports made
        while a run is still writing). Opening for writing takes the file's
        writer lock first: a second writer is refused (StoreLocked, one line
        naming the holder's PID) before it reads or writes anything.
        """
        path = Path(path)
        if readonly:
            return cls._open(path, readonly=True, lock=None)
        if not path.exists():
            raise StoreError(f"results: {path} does not exist")
        lock = WriterLock.acquire(path)
        try:
            return cls._open(path, readonly=False, lock=lock)
        except BaseException:
            lock.release()
            raise

    @classmethod
    def _open(cls, path: Path, *, readonly: bool, lock: WriterLock | None) -> ResultsStore:
        had_side = any(f.exists() for f in side_files(path))
        _check(path)
        if readonly:
            conn = _connect(path, readonly=True)
        else:
            conn = _connect(path, readonly=False)
            try:
                conn.execute("PRAGMA journal_mode = WAL")  # readers (a report) don't block the runner
                conn.execute("PRAGMA synchronous = FULL")  # a committed job survives a power cut too
                with conn:  # an older store gains the step_failures table and the delivered_speed columns
                    conn.executescript(_STEPS_SCHEMA)
                    _migrate_resizes(conn)
                    for table in ("jobs", "predictions"):
                        if "delivered_speed" not in _columns(conn, table):
                            conn.execute(f"ALTER TABLE {table} ADD COLUMN delivered_speed REAL")
                    conn.execute("UPDATE meta SET value = ? WHERE key = 'version' AND CAST(value AS INTEGER) < ?",
                                 (str(VERSION), VERSION))
            except sqlite3.DatabaseError as exc:
                conn.close()
                raise StoreError(f"results: {path}: cannot open for writing ({exc})") from None
        try:
            store = cls(path, conn, readonly, lock)
            store._side_made = readonly and not had_side
            return store
        except (sqlite3.DatabaseError, KeyError, ValueError) as exc:
            conn.close()
            raise StoreError(f"results: {path}: unreadable meta table ({exc})") from None

    def close(self) -> None:
        with self._lock:
            self._conn.close()
            if self._writer is not None:
                self._writer.release()
            if self._side_made:
                _leave_no_side_files(self.path)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        """One committed transaction under the lock (rolled back on any error)."""
        with self._lock:
            if self.readonly:
                raise StoreError(f"results: {self.path} was opened read-only")
            with self._conn:
                yield self._conn

    def _query(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._conn.execute(sql, args).fetchall()

    # ---- calibrations and profiles ---------------------------------------------------------------

    def add_calibration(self, data: dict[str, Any]) -> int:
        """Store a calibration; segments refer to the one in force when they started."""
        with self._tx() as c:
            cur = c.execute("INSERT INTO calibrations (taken_at, json) VALUES (?, ?)",
                            (float(data.get("time", time.time())), json.dumps(data, sort_keys=True)))
            return int(cur.lastrowid)

    def latest_calibration(self) -> dict[str, Any] | None:
        rows = self._query("SELECT id, json FROM calibrations ORDER BY id DESC LIMIT 1")
        return {**json.loads(rows[0][1]), "calibration_id": rows[0][0]} if rows else None

    def set_profile(self, cls: str, data: dict[str, Any]) -> None:
        """Store (or replace) a class's profile, e.g. its Sevcik fit."""
        with self._tx() as c:
            c.execute("INSERT OR REPLACE INTO profiles (cls, json, updated_at) VALUES (?, ?, ?)",
                      (cls, json.dumps(data, sort_keys=True), time.time()))

    def update_profile(self, cls: str, data: dict[str, Any]) -> None:
        """Replace a stored profile's data, keeping the time it was stored (when it was measured or
        reused: the estimate's check reads it), e.g. with a check between cells added."""
        with self._tx() as c:
            if c.execute("UPDATE profiles SET json = ? WHERE cls = ?", (json.dumps(data, sort_keys=True), cls)).rowcount != 1:
                raise ValueError(f"no profile stored for class {cls!r}")

    def profiles(self) -> dict[str, dict[str, Any]]:
        return {cls: json.loads(text) for cls, text in self._query("SELECT cls, json FROM profiles ORDER BY cls")}

    # ---- cells -----------------------------------------------------------------------------------

    def ensure_cell(self, policy: str, rate: float, replication: int, stream: Sequence[SubmittedJob]) -> int:
        """The cell's id, created with its stream; an existing cell must have the very same stream.

        A different stream means the config or seed changed since the run
        started, and mixing the two would make the results meaningless.
        """
        with self._tx() as c:
            row = c.execute("SELECT id FROM cells WHERE policy = ? AND rate = ? AND replication = ?",
                            (policy, float(rate), int(replication))).fetchone()
            if row is None:
                now = time.time()
                cur = c.execute("INSERT INTO cells (policy, rate, replication, created_at, updated_at) "
                                "VALUES (?, ?, ?, ?, ?)", (policy, float(rate), int(replication), now, now))
                cell_id = int(cur.lastrowid)
                c.executemany("INSERT INTO stream (cell_id, job_id, cls, arrival, demand, requested) "
                              "VALUES (?, ?, ?, ?, ?, ?)",
                              [(cell_id, j.id, j.cls, j.arrival_s, j.demand, j.requested_procs) for j in stream])
                return cell_id
            cell_id = int(row[0])
        stored = self.stream_of(cell_id)
        given = list(stream)
        if stored != given:
            diff = next((f"job {a.id}: stored {a}, now {b}" for a, b in zip(stored, given) if a != b),
                        f"{len(stored)} jobs stored, {len(given)} now")
            raise StoreError(f"results: {self.path}: cell {policy} at {rate:g}/s replication {replication} "
                             f"has a different stream ({diff}); the config or seed changed since this run "
                             "started; choose another --out")
        return cell_id

    def _cell_name(self, cell_id: int) -> str:
        rows = self._query("SELECT policy, rate, replication FROM cells WHERE id = ?", (cell_id,))
        if not rows:
            raise StoreError(f"results: {self.path}: no cell {cell_id}")
        policy, rate, rep = rows[0]
        return f"cell {cell_id} ({policy} at {rate:g}/s, replication {rep})"

    def cell_status(self, cell_id: int) -> str:
        rows = self._query("SELECT status FROM cells WHERE id = ?", (cell_id,))
        if not rows:
            raise StoreError(f"results: {self.path}: no cell {cell_id}")
        return str(rows[0][0])

    def set_cell_status(self, cell_id: int, status: str, error: str = "") -> None:
        """Set the status; 'interrupted' is also counted, so the report can flag the cell."""
        if status not in CELL_STATUSES:
            raise StoreError(f"results: unknown cell status {status!r} (one of {', '.join(CELL_STATUSES)})")
        with self._tx() as c:
            cur = c.execute("UPDATE cells SET status = ?, error = ?, updated_at = ?, "
                            "interruptions = interruptions + ? WHERE id = ?",
                            (status, error, time.time(), int(status == "interrupted"), cell_id))
            if cur.rowcount == 0:
                raise StoreError(f"results: {self.path}: no cell {cell_id}")

    def interrupt_running(self, reason: str) -> list[int]:
        """Mark every cell still `running` as interrupted (a runner that died without clean-up:
        SIGKILL, a power cut); returns their ids."""
        with self._tx() as c:
            ids = [int(r[0]) for r in c.execute("SELECT id FROM cells WHERE status = 'running'").fetchall()]
            c.execute("UPDATE cells SET status = 'interrupted', error = ?, updated_at = ?, "
                      "interruptions = interruptions + 1 WHERE status = 'running'", (reason, time.time()))
        return ids

    def heartbeat(self, cell_id: int, elapsed_s: float) -> None:
        """Record the stream time reached, so a killed run shows how far it got."""
        with self._tx() as c:
            c.execute("UPDATE cells SET elapsed_s = ?, updated_at = ? WHERE id = ?",
                      (float(elapsed_s), time.time(), cell_id))

    def cell_elapsed(self, cell_id: int) -> float:
        rows = self._query("SELECT elapsed_s FROM cells WHERE id = ?", (cell_id,))
        if not rows:
            raise StoreError(f"results: {self.path}: no cell {cell_id}")
        return float(rows[0][0])

    def start_segment(self, cell_id: int, offset_s: float, hosts: Sequence[str],
                      calibration_id: int | None) -> int:
        """A new segment of the cell (1, 2, ...): its clock starts at `offset_s` of stream time."""
        with self._tx() as c:
            (seq,) = c.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM segments WHERE cell_id = ?",
                               (cell_id,)).fetchone()
            try:
                c.execute("INSERT INTO segments (cell_id, seq, offset_s, hosts, calibration_id, started_at) "
                          "VALUES (?, ?, ?, ?, ?, ?)",
                          (cell_id, seq, float(offset_s), json.dumps(list(hosts)), calibration_id, time.time()))
            except sqlite3.IntegrityError as exc:
                raise StoreError(f"results: {self.path}: cannot start segment of cell {cell_id} "
                                 f"(no such cell or calibration: {exc})") from None
            return int(seq)

    def segments(self, cell_id: int) -> list[dict[str, Any]]:
        """The cell's segments in order: seq, offset_s, hosts, calibration_id, started_at."""
        rows = self._query("SELECT seq, offset_s, hosts, calibration_id, started_at FROM segments "
                           "WHERE cell_id = ? ORDER BY seq", (cell_id,))
        return [{"seq": seq, "offset_s": off, "hosts": json.loads(hosts), "calibration_id": cal, "started_at": t}
                for seq, off, hosts, cal, t in rows]

    # ---- jobs ------------------------------------------------------------------------------------

    def add_job(self, cell_id: int, outcome: FinishedJob, segment: int) -> None:
        """Store one finished (or failed) job at once, in its own committed transaction."""
        job_id, *values = outcome.stored()
        row = (cell_id, job_id, segment, *map(_value, values), time.time())
        try:
            with self._tx() as c:
                c.execute(f"INSERT INTO jobs (cell_id, job_id, segment, {', '.join(_OUTCOME_COLS)}, recorded_at) "
                          f"VALUES ({', '.join('?' * len(row))})", row)
        except sqlite3.IntegrityError as exc:
            what = self._cell_name(cell_id)
            if "UNIQUE" in str(exc):
                raise StoreError(f"results: job {outcome.id} of {what} is already stored") from None
            raise StoreError(f"results: job {outcome.id} of {what}: not in the cell's stream, "
                             f"or segment {segment} was never started ({exc})") from None

    def finished_ids(self, cell_id: int) -> set[int]:
        """Jobs already stored (done or failed): a resumed cell does not run them again."""
        return {int(r[0]) for r in self._query("SELECT job_id FROM jobs WHERE cell_id = ?", (cell_id,))}

    def stream_of(self, cell_id: int) -> list[SubmittedJob]:
        rows = self._query("SELECT job_id, cls, arrival, demand, requested FROM stream WHERE cell_id = ? "
                           "ORDER BY job_id", (cell_id,))
        return [SubmittedJob(int(i), cls, arr, dem, None if req is None else int(req)) for i, cls, arr, dem, req in rows]

    # ---- resizes ---------------------------------------------------------------------------------

    def add_resizes(self, cell_id: int, segment: int, offset_s: float, records: Sequence[ResizeRecord]) -> None:
        """A segment's measured preemptions (times on the segment's clock, stored on the cell's
        stream clock); replaces the segment's earlier copy, so a redone step counts once."""
        rows = [store_resizes.to_row(r, offset_s) for r in records]
        with self._tx() as c:
            store_resizes.insert(c, cell_id, segment, rows)

    def resizes(self, cell_id: int) -> list[ResizeRecord]:
        """The cell's measured preemptions, every segment's, in order; times on the stream clock."""
        if not self._has_resizes:
            offsets = {s["seq"]: s["offset_s"] for s in self.segments(cell_id)}
            return [store_resizes.from_row(row) for seg, text in _legacy_artifacts(self.artifacts(cell_id))
                    for row in store_resizes.legacy_rows(text, offsets.get(seg, 0.0))]
        rows = self._query(f"SELECT {', '.join(store_resizes.COLUMNS)} FROM resizes WHERE cell_id = ? "
                           "ORDER BY segment, seq", (cell_id,))
        return [store_resizes.from_row(row) for row in rows]

    def set_predictions(self, cell_id: int, outcomes: Sequence[FinishedJob]) -> None:
        """Replace the cell's predicted outcomes (one simulator replay of its stream)."""
        rows = [(cell_id, *map(_value, o.stored())) for o in outcomes]
        try:
            with self._tx() as c:
                c.execute("DELETE FROM predictions WHERE cell_id = ?", (cell_id,))
                c.executemany(f"INSERT INTO predictions (cell_id, job_id, {', '.join(_OUTCOME_COLS)}) "
                              f"VALUES ({', '.join('?' * (2 + len(_OUTCOME_COLS)))})", rows)
        except sqlite3.IntegrityError as exc:
            raise StoreError(f"results: predictions of {self._cell_name(cell_id)}: a job twice or "
                             f"not in the stream ({exc})") from None

    def set_band(self, cell_id: int, values: dict[str, list[float]], sigma: dict[str, float | str]) -> None:
        """The cell's ensemble prediction (replaces an earlier one): each statistic's value in
        every replay, and the run-to-run noise (log-sd) each class was drawn with."""
        lengths = {len(v) for v in values.values()}
        if len(lengths) != 1 or 0 in lengths:
            raise StoreError(f"results: band of {self._cell_name(cell_id)}: statistics of unequal or no replays")
        with self._tx() as c:
            c.execute("INSERT OR REPLACE INTO prediction_bands (cell_id, replicas, json) VALUES (?, ?, ?)",
                      (cell_id, lengths.pop(), json.dumps({"values": values, "sigma": sigma}, sort_keys=True)))

    def bands(self) -> dict[int, dict[str, list[float]]]:
        """Each cell's ensemble prediction, statistic -> one value per replay (none in a store
        from before version 4)."""
        with self._lock:
            if not _has_table(self._conn, "prediction_bands"):
                return {}
        return {int(cell): json.loads(text)["values"]
                for cell, text in self._query("SELECT cell_id, json FROM prediction_bands")}

    def band_notes(self) -> dict[int, dict[str, Any]]:
        """Each cell's band's record of what it was drawn with: the noise model in words
        ("noise") and each class's profiled run_sigma (empty before version 4)."""
        with self._lock:
            if not _has_table(self._conn, "prediction_bands"):
                return {}
        return {int(cell): json.loads(text).get("sigma", {})
                for cell, text in self._query("SELECT cell_id, json FROM prediction_bands")}

    def set_availability(self, cell_id: int, data: dict[str, Any]) -> None:
        """The monitor's summary of the cell (replaces an earlier one)."""
        with self._tx() as c:
            c.execute("INSERT OR REPLACE INTO availability (cell_id, json) VALUES (?, ?)",
                      (cell_id, json.dumps(data, sort_keys=True)))

    def availability(self, cell_id: int) -> dict[str, Any] | None:
        rows = self._query("SELECT json FROM availability WHERE cell_id = ?", (cell_id,))
        return json.loads(rows[0][0]) if rows else None

    def add_artifact(self, cell_id: int | None, name: str, text: str) -> None:
        """A text dump of a cell (decisions.csv, resizes.csv, ...) or, with cell_id None, of the
        whole run; a same-named one is replaced, so name them per segment when every copy matters."""
        with self._tx() as c:
            c.execute("DELETE FROM artifacts WHERE cell_id IS ? AND name = ?", (cell_id, name))
            c.execute("INSERT INTO artifacts (cell_id, name, text) VALUES (?, ?, ?)", (cell_id, name, text))

    def artifacts(self, cell_id: int | None) -> dict[str, str]:
        """A cell's artifacts by name (cell_id None: the whole run's)."""
        return dict(self._query("SELECT name, text FROM artifacts WHERE cell_id IS ? ORDER BY name", (cell_id,)))

    # ---- failed steps ----------------------------------------------------------------------------

    def add_step_failure(self, cell_id: int | None, segment: int | None, step: str, error: str,
                         payload: bytes | None = None) -> None:
        """Keep a failed step's error (and what redoing it needs); replaces an earlier failure of it."""
        with self._tx() as c:
            c.execute("DELETE FROM step_failures WHERE cell_id IS ? AND segment IS ? AND step = ?",
                      (cell_id, segment, step))
            c.execute("INSERT INTO step_failures (cell_id, segment, step, error, payload, failed_at) "
                      "VALUES (?, ?, ?, ?, ?, ?)", (cell_id, segment, step, error, payload, time.time()))

    def clear_step_failure(self, cell_id: int | None, segment: int | None, step: str) -> None:
        """The step has now succeeded."""
        if self.readonly:
            return
        with self._tx() as c:
            c.execute("DELETE FROM step_failures WHERE cell_id IS ? AND segment IS ? AND step = ?",
                      (cell_id, segment, step))

    def step_failures(self) -> list[StepFailure]:
        """Every failed step still to be redone, the run's last."""
        if not self._has_steps:
            return []
        rows = self._query("SELECT cell_id, segment, step, error, payload, failed_at FROM step_failures "
                           "ORDER BY cell_id IS NULL, cell_id, segment, failed_at")
        return [StepFailure(None if cid is None else int(cid), None if seg is None else int(seg), step, error,
                            payload, float(t)) for cid, seg, step, error, payload, t in rows]

    def timeline(self) -> dict[str, Any]:
        """When the run's steps happened (epoch seconds), for the plan estimate beside the real run:
        its start, its calibrations, each class's profile stored, each cell's creation and last update."""
        return {
            "created_at": self.created_at,
            "calibrations": [float(t) for (t,) in self._query("SELECT taken_at FROM calibrations ORDER BY id")],
            "profiles": {cls: float(t) for cls, t in self._query("SELECT cls, updated_at FROM profiles")},
            "cells": [{"cell_id": int(i), "policy": p, "rate": float(r), "replication": int(rep), "status": s,
                       "created_at": float(c), "updated_at": float(u)}
                      for i, p, r, rep, s, c, u in self._query(
                          "SELECT id, policy, rate, replication, status, created_at, updated_at FROM cells "
                          "ORDER BY id")],
        }

    # ---- frames ----------------------------------------------------------------------------------

    def cells_frame(self) -> pd.DataFrame:
        """One row per cell: status, heartbeat, segments, whether it was resumed, and its failed steps."""
        with self._lock:
            df = pd.read_sql_query(
                "SELECT c.id AS cell_id, c.policy, c.rate, c.replication, c.status, c.elapsed_s, c.error, "
                "c.interruptions, COUNT(s.seq) AS segments, "
                "(SELECT COUNT(*) FROM stream t WHERE t.cell_id = c.id) AS stream_jobs, "
                "(SELECT COUNT(*) FROM jobs j WHERE j.cell_id = c.id) AS stored_jobs, "
                f"{_FAILED_STEPS if self._has_steps else _NO_FAILED_STEPS} AS failed_steps "
                "FROM cells c LEFT JOIN segments s ON s.cell_id = c.id GROUP BY c.id ORDER BY c.id", self._conn)
        df["resumed"] = df.segments > 1
        return df

    def jobs_frame(self) -> pd.DataFrame:
        """Every measured job with its cell's policy, rate and replication, derived times and warm-up flag."""
        return self._outcomes("jobs", "j.segment, ")

    def predictions_frame(self) -> pd.DataFrame:
        """Every predicted job, in the same shape as `jobs_frame` (without segment)."""
        return self._outcomes("predictions", "")

    def _outcomes(self, table: str, extra: str) -> pd.DataFrame:
        cols = ", ".join(f"j.{k}" if k != "delivered_speed" or self._has_speed else f"NULL AS {k}"
                         for k in _OUTCOME_COLS)
        with self._lock:
            df = pd.read_sql_query(
                f"SELECT c.policy, c.rate, c.replication, j.cell_id, j.job_id, {extra}{cols} "
                f"FROM {table} j JOIN cells c ON c.id = j.cell_id ORDER BY j.cell_id, j.job_id", self._conn)
        for k in ("demand", "arrival", "start", "finish", "mean_procs", "delivered_speed"):
            df[k] = df[k].astype(float)
        df["wait"] = df.start - df.arrival
        df["execution"] = df.finish - df.start
        df["response"] = df.finish - df.arrival
        df["warmup"] = df.job_id < int(self.config.get("arrivals", {}).get("warmup", 0))
        return df


_NO_FAILED_STEPS = "''"  # a version-1 store read-only: no such table
# A cell's failed steps as one text, e.g. "availability: ValueError: ...; artifacts (segment 2): ..."
_FAILED_STEPS = ("COALESCE((SELECT GROUP_CONCAT(f.step || COALESCE(' (segment ' || f.segment || ')', '') "
                 "|| ': ' || f.error, '; ') FROM step_failures f WHERE f.cell_id = c.id), '')")


def _has_table(conn: sqlite3.Connection, table: str) -> bool:
    return bool(conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone())


def _legacy_artifacts(artifacts: dict[str, str]) -> list[tuple[int, str]]:
    """(segment, text) of the `resizes-<segment>.csv` artifacts a version-2 store kept resizes in."""
    out = []
    for name, text in artifacts.items():
        stem = name.removeprefix("resizes-").removesuffix(".csv")
        if name.startswith("resizes-") and stem.isdigit() and text.strip():
            out.append((int(stem), text))
    return sorted(out)


def _migrate_resizes(conn: sqlite3.Connection) -> None:
    """A version-2 store opened for writing: its resizes CSV artifacts become rows of the table."""
    had = _has_table(conn, "resizes")
    conn.executescript(store_resizes.SCHEMA)
    if had:
        return
    offsets = {(int(c), int(s)): float(o) for c, s, o in conn.execute("SELECT cell_id, seq, offset_s FROM segments")}
    by_cell: dict[int, dict[str, str]] = {}
    for cell_id, name, text in conn.execute("SELECT cell_id, name, text FROM artifacts WHERE name LIKE 'resizes-%'"):
        if cell_id is not None:
            by_cell.setdefault(int(cell_id), {})[name] = text
    for cell_id, artifacts in by_cell.items():
        for seg, text in _legacy_artifacts(artifacts):
            store_resizes.insert(conn, cell_id, seg,
                                 store_resizes.legacy_rows(text, offsets.get((cell_id, seg), 0.0)))
        conn.execute("DELETE FROM artifacts WHERE cell_id = ? AND name LIKE 'resizes-%'", (cell_id,))


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in conn.execute(f"PRAGMA table_info({table})").fetchall()}


def _value(v: Any) -> Any:
    """NaN becomes NULL (a failed job may have no finish time)."""
    return None if isinstance(v, float) and not math.isfinite(v) else v


def _connect(path: Path, *, readonly: bool) -> sqlite3.Connection:
    if readonly:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False, timeout=30)
    else:
        conn = sqlite3.connect(path, check_same_thread=False, timeout=30)
        conn.execute("PRAGMA foreign_keys = ON")
    return conn


def _check(path: Path) -> None:
    """Refuse, in one line, anything but an intact store of a version we read; writes nothing."""
    if not path.exists():
        raise StoreError(f"results: {path} does not exist")
    if not path.is_file():
        raise StoreError(f"results: {path} is not a file")
    with path.open("rb") as f:
        head = f.read(len(_SQLITE_MAGIC))
    if head != _SQLITE_MAGIC:
        raise StoreError(f"results: {path} is not a nowlab results database (not SQLite)")
    side = side_files(path)
    had_side = [f.exists() for f in side]
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise StoreError(f"results: {path} cannot be opened ({exc})") from None
    try:
        try:
            has_meta = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").fetchone()
            if not has_meta:
                raise StoreError(f"results: {path} is not a nowlab results database (no meta table)")
            meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
            if meta.get("format") != FORMAT:
                raise StoreError(f"results: {path} is not a nowlab results database "
                                 f"(format {meta.get('format')!r}, expected {FORMAT!r})")
            try:
                version = int(meta.get("version", ""))
            except ValueError:
                raise StoreError(f"results: {path}: unreadable format version {meta.get('version')!r}") from None
            if version > VERSION:
                raise StoreError(f"results: {path} was written by a newer nowlab (format version {version}; "
                                 f"this one reads up to {VERSION})")
            problems = [r[0] for r in conn.execute("PRAGMA quick_check").fetchall()]
            if problems != ["ok"]:
                raise StoreError(f"results: {path} is corrupt ({problems[0]}"
                                 f"{f' and {len(problems) - 1} more problems' if len(problems) > 1 else ''})")
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"results: {path} is corrupt or not a database ({exc})") from None
    except StoreError:
        conn.close()
        _remove_own_side_files(side, had_side)
        raise
    conn.close()


def side_files(path: Path) -> list[Path]:
    """A WAL-mode store's -wal and -shm files (SQLite's, beside it)."""
    return [path.with_name(path.name + suffix) for suffix in ("-wal", "-shm")]


def _leave_no_side_files(path: Path) -> None:
    """After a read-only look: the -wal/-shm files it made go, as a writer's close removes its own.

    A read-only connection to a WAL-mode file makes them and cannot remove them (a report or
    `nowlab summary` left them beside every committed store). A plain connection that reads and
    closes removes them when it is the last one (SQLite's rule: it takes the file's exclusive lock
    first, so a runner still writing keeps them); the WAL is empty, so the store's bytes do not
    change. Only called when the look made them: side files there before may hold a crashed
    writer's transactions, which a read-only look must not write into the store.
    """
    if not any(f.exists() for f in side_files(path)):
        return
    try:
        conn = sqlite3.connect(path, timeout=0)
    except sqlite3.Error:
        return
    try:
        conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
    except sqlite3.Error:
        pass  # busy or read-only: whoever holds it removes them at its close
    finally:
        conn.close()


def _remove_own_side_files(side: list[Path], had: list[bool]) -> None:
    """A read-only look at a WAL-mode file creates empty -wal/-shm files; when the file is
    refused, remove the ones this look created (and only while the -wal is still empty)."""
    wal, _ = side
    if had[0] or not wal.exists() or wal.stat().st_size != 0:
        return
    for f, existed in zip(side, had):
        if not existed:
            f.unlink(missing_ok=True)
