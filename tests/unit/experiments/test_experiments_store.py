"""The results store: create/open/refuse, resume semantics, no duplicates, no
lost jobs when the runner is killed, and foreign or damaged files left untouched."""
from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from scheduler.jobs import FinishedJob, SubmittedJob
from experiments.store import VERSION, ResultsStore, StoreError

ROOT = Path(__file__).resolve().parents[3]
CONFIG = {"name": "t", "title": "T", "policies": ["RA", "FOLDING"],
          "arrivals": {"rates": [0.1, 0.2], "jobs": 4, "warmup": 1, "replications": 1, "seed": 3}}


def stream(n: int = 4, shift: float = 0.0) -> list[SubmittedJob]:
    return [SubmittedJob(i, "A", 10.0 * i + shift, 1.0 + i / 10, None if i % 2 else 4) for i in range(n)]


def outcome(j: SubmittedJob, wait: float = 1.0, execution: float = 5.0, status: str = "done") -> FinishedJob:
    return FinishedJob(j.id, j.cls, j.demand, j.arrival_s, j.arrival_s + wait, j.arrival_s + wait + execution,
                      2.5, 4, 4, 1, status, "" if status == "done" else "boom")


@pytest.fixture
def store(tmp_path: Path) -> ResultsStore:
    s = ResultsStore.create(tmp_path / "r.db", CONFIG, "name = 't'\n")
    yield s
    s.close()


def test_create_then_open_keeps_config(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "r.db"
    with ResultsStore.create(path, CONFIG, "raw text") as s:
        assert s.path == path and s.config == CONFIG
    with ResultsStore.open(path) as s:
        assert s.config == CONFIG and s.config_text == "raw text"
    assert sorted(p.name for p in path.parent.iterdir()) == ["r.db"]  # no temp file left behind


def test_create_refuses_an_existing_path(tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    path.write_text("precious")
    with pytest.raises(StoreError, match="exists; use --resume to continue it or choose another --out"):
        ResultsStore.create(path, CONFIG, "")
    assert path.read_text() == "precious"


def test_cells_streams_and_resume(store: ResultsStore) -> None:
    cid = store.ensure_cell("RA", 0.1, 0, stream())
    assert store.ensure_cell("RA", 0.1, 0, stream()) == cid  # resume finds the same cell
    assert store.ensure_cell("RA", 0.1, 1, stream()) != cid
    assert store.stream_of(cid) == stream()
    with pytest.raises(StoreError, match="the config or seed changed"):
        store.ensure_cell("RA", 0.1, 0, stream(shift=0.5))
    with pytest.raises(StoreError, match="config or seed changed"):
        store.ensure_cell("RA", 0.1, 0, stream(3))
    assert store.cell_status(cid) == "pending"
    store.set_cell_status(cid, "running")
    store.heartbeat(cid, 12.5)
    assert store.cell_elapsed(cid) == 12.5
    with pytest.raises(StoreError, match="unknown cell status"):
        store.set_cell_status(cid, "finished")
    cal = store.add_calibration({"time": 1.0, "cpu": []})
    assert store.start_segment(cid, 0.0, ["ws1", "ws2"], cal) == 1
    store.add_job(cid, outcome(stream()[0]), 1)
    store.set_cell_status(cid, "interrupted", "ws2 died")
    assert store.start_segment(cid, 12.5, ["ws1"], cal) == 2
    store.add_job(cid, outcome(stream()[1]), 2)
    assert store.finished_ids(cid) == {0, 1}
    segs = store.segments(cid)
    assert [(g["seq"], g["offset_s"], g["hosts"], g["calibration_id"]) for g in segs] == \
        [(1, 0.0, ["ws1", "ws2"], cal), (2, 12.5, ["ws1"], cal)]
    cells = store.cells_frame().set_index("cell_id")
    assert cells.loc[cid, "segments"] == 2 and bool(cells.loc[cid, "resumed"])
    assert cells.loc[cid, "interruptions"] == 1 and cells.loc[cid, "error"] == "ws2 died"
    assert not cells.drop(index=cid).resumed.any()


def test_duplicate_and_unknown_jobs_are_refused(store: ResultsStore) -> None:
    cid = store.ensure_cell("EQUI", 0.05, 2, stream())
    store.start_segment(cid, 0.0, ["ws1"], None)
    store.add_job(cid, outcome(stream()[2]), 1)
    with pytest.raises(StoreError, match=r"job 2 of cell \d+ \(EQUI at 0.05/s, replication 2\) is already stored"):
        store.add_job(cid, outcome(stream()[2], wait=9.0), 1)
    with pytest.raises(StoreError, match="not in the cell's stream"):
        store.add_job(cid, outcome(SubmittedJob(99, "A", 1.0)), 1)
    with pytest.raises(StoreError, match="segment 5 was never started"):
        store.add_job(cid, outcome(stream()[3]), 5)
    assert store.finished_ids(cid) == {2}
    assert store.jobs_frame().wait.tolist() == [1.0]  # the first copy stays


def test_frames_predictions_and_side_tables(store: ResultsStore) -> None:
    cid = store.ensure_cell("RA", 0.2, 0, stream())
    seg = store.start_segment(cid, 0.0, ["ws1"], None)
    store.add_job(cid, outcome(stream()[0], wait=2.0, execution=3.0), seg)
    store.add_job(cid, FinishedJob(1, "A", 1.1, 10.0, 11.0, float("nan"), 1.0, 1, 4, 0, "failed", "ws1 died"), seg)
    store.set_predictions(cid, [outcome(j, wait=0.5) for j in stream()])
    store.set_predictions(cid, [outcome(j, wait=0.25) for j in stream()[:2]])  # replaces
    jobs = store.jobs_frame()
    assert {"policy", "rate", "replication", "segment", "wait", "execution", "response", "warmup"} <= set(jobs)
    first = jobs.iloc[0]
    assert (first.policy, first.rate, first.replication, first.wait, first.execution, first.response) == \
        ("RA", 0.2, 0, 2.0, 3.0, 5.0)
    assert jobs.warmup.tolist() == [True, False]  # warmup = 1 in the config
    assert jobs.status.tolist() == ["done", "failed"] and jobs.error.tolist() == ["", "ws1 died"]
    preds = store.predictions_frame()
    assert preds.job_id.tolist() == [0, 1] and preds.wait.tolist() == [0.25, 0.25] and "segment" not in preds
    store.set_profile("A", {"W": 100.0, "alpha": 0.1})
    store.set_profile("A", {"W": 120.0})
    assert store.profiles() == {"A": {"W": 120.0}}
    assert store.latest_calibration() is None
    store.add_calibration({"time": 5.0, "n": 1})
    store.add_calibration({"time": 6.0, "n": 2})
    assert store.latest_calibration()["n"] == 2
    store.set_availability(cid, {"ws1": 0.9})
    assert store.availability(cid) == {"ws1": 0.9}
    store.add_artifact(cid, "decisions.csv", "t,job\n")
    store.add_artifact(cid, "decisions.csv", "t,job\n0,1\n")  # replaces
    store.add_artifact(None, "monitor_cpu.csv", "t,ws1\n")  # the whole run's
    store.add_artifact(None, "monitor_cpu.csv", "t,ws1\n0,0.9\n")
    assert store.artifacts(cid) == {"decisions.csv": "t,job\n0,1\n"}
    assert store.artifacts(None) == {"monitor_cpu.csv": "t,ws1\n0,0.9\n"}
    assert issubclass(StoreError, ValueError)  # the CLI prints ValueErrors as one line


def test_readonly_open_refuses_writes(store: ResultsStore) -> None:
    cid = store.ensure_cell("RA", 0.1, 0, stream())
    with ResultsStore.open(store.path, readonly=True) as ro:
        assert ro.stream_of(cid) == stream()  # sees the writer's committed rows
        with pytest.raises(StoreError, match="read-only"):
            ro.heartbeat(cid, 1.0)


def _side(path: Path) -> list[str]:
    return sorted(p.name[len(path.name):] for p in path.parent.glob(path.name + "-*"))


def test_a_read_only_look_leaves_no_side_files(store: ResultsStore) -> None:
    """A finished store read (a report, `nowlab summary`) is left as it was, with no -wal/-shm beside
    it; while its writer is still open, the reader's close leaves the writer's files alone."""
    cid = store.ensure_cell("RA", 0.1, 0, stream())
    with ResultsStore.open(store.path, readonly=True) as ro:
        assert ro.stream_of(cid) == stream()
    assert _side(store.path) == ["-shm", "-wal"]  # the writer's, still open
    store.close()
    assert _side(store.path) == []
    before = (store.path.read_bytes(), store.path.stat().st_mtime_ns)
    with ResultsStore.open(store.path, readonly=True) as ro:
        assert ro.stream_of(cid) == stream()
        assert _side(store.path) == ["-shm", "-wal"]  # SQLite's, for a WAL-mode file read
    assert _side(store.path) == []
    assert (store.path.read_bytes(), store.path.stat().st_mtime_ns) == before


def test_concurrent_writers_lose_nothing(store: ResultsStore) -> None:
    """The runner's worker threads store jobs while the main thread beats the heartbeat."""
    jobs = stream(200)
    cells = [store.ensure_cell("RA", 0.1, k, jobs) for k in range(4)]
    for cid in cells:
        store.start_segment(cid, 0.0, ["ws1"], None)
    errors: list[BaseException] = []

    def work(cid: int, part: int) -> None:
        try:
            for j in jobs[part::2]:
                store.add_job(cid, outcome(j), 1)
                store.heartbeat(cid, j.arrival_s)
        except BaseException as exc:  # noqa: BLE001 - reported below, in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(cid, part)) for cid in cells for part in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert all(store.finished_ids(cid) == set(range(200)) for cid in cells)
    assert len(store.jobs_frame()) == 800


def test_a_killed_runner_keeps_every_stored_job(tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    script = f"""
import os, signal, sys
sys.path.insert(0, {str(ROOT)!r})
from scheduler.jobs import FinishedJob, SubmittedJob
from experiments.store import ResultsStore
s = ResultsStore.create({str(path)!r}, {{"arrivals": {{"warmup": 0}}}}, "")
jobs = [SubmittedJob(i, "A", float(i)) for i in range(10)]
cid = s.ensure_cell("RA", 0.1, 0, jobs)
seg = s.start_segment(cid, 0.0, ["ws1"], None)
for j in jobs[:7]:
    s.add_job(cid, FinishedJob(j.id, "A", 1.0, j.arrival_s, j.arrival_s, j.arrival_s + 1, 1.0, 1, 1, 0), seg)
os.kill(os.getpid(), signal.SIGKILL)
"""
    proc = subprocess.run([sys.executable, "-c", script], check=False, capture_output=True, text=True, timeout=60)
    assert proc.returncode == -9, proc.stderr
    with ResultsStore.open(path) as s:
        (cid,) = s.cells_frame().cell_id
        assert s.finished_ids(cid) == set(range(7))
        seg = s.start_segment(cid, 7.0, ["ws1"], None)  # resume: the rest in a new segment
        assert seg == 2


def _refused(path: Path, match: str) -> None:
    """Opening refuses with one line and leaves the file exactly as it was."""
    before = (path.read_bytes(), path.stat().st_mtime_ns)
    with pytest.raises(StoreError, match=match) as info:
        ResultsStore.open(path)
    assert "\n" not in str(info.value) and str(path) in str(info.value)
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before
    assert sorted(p.name for p in path.parent.glob(path.name + "*")) == [path.name]  # no -wal/-shm left


def test_open_refuses_missing_and_foreign_files(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="does not exist"):
        ResultsStore.open(tmp_path / "none.db")
    text = tmp_path / "notes.txt"
    text.write_text("name = 'fig4'\n" * 50)
    _refused(text, "is not a nowlab results database")
    noise = tmp_path / "noise.db"
    noise.write_bytes(os.urandom(8192))
    _refused(noise, "is not a nowlab results database")
    foreign = tmp_path / "other.db"
    conn = sqlite3.connect(foreign)
    conn.execute("CREATE TABLE people (name TEXT)")
    conn.execute("INSERT INTO people VALUES ('ada')")
    conn.commit()
    conn.close()
    _refused(foreign, r"is not a nowlab results database \(no meta table\)")
    lookalike = tmp_path / "lookalike.db"
    conn = sqlite3.connect(lookalike)
    conn.execute("CREATE TABLE meta (key TEXT, value TEXT)")
    conn.execute("INSERT INTO meta VALUES ('format', 'something-else')")
    conn.commit()
    conn.close()
    _refused(lookalike, "is not a nowlab results database .format 'something-else'")


def test_open_refuses_newer_versions_and_damaged_copies(tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    with ResultsStore.create(path, CONFIG, "") as s:
        for k in range(6):
            cid = s.ensure_cell("RA", 0.1, k, stream(300))
            s.start_segment(cid, 0.0, ["ws1"], None)
            for j in stream(300):
                s.add_job(cid, outcome(j), 1)
    newer = tmp_path / "newer.db"
    newer.write_bytes(path.read_bytes())
    conn = sqlite3.connect(newer)
    conn.execute("UPDATE meta SET value = ? WHERE key = 'version'", (str(VERSION + 1),))
    conn.commit()
    conn.close()
    _refused(newer, f"written by a newer nowlab .format version {VERSION + 1}")
    data = path.read_bytes()
    assert len(data) > 64 * 1024
    for size in (len(data) // 2, len(data) - 4096, 50):
        cut = tmp_path / f"cut{size}.db"
        cut.write_bytes(data[:size])
        _refused(cut, "corrupt|not a nowlab results database")
    with ResultsStore.open(path) as s:  # the original still opens
        assert len(s.jobs_frame()) == 1800


def test_a_config_read_back_gives_the_same_stream(tmp_path: Path) -> None:
    """--resume rebuilds each cell's stream from the stored config; the demo's mix
    (syn before cg) came back sorted and drew a different stream."""
    from experiments.config import load
    from experiments.runner import stream_for
    from experiments.config import ExperimentConfig
    path = Path(__file__).resolve().parents[3] / "experiments" / "configs" / "demo.toml"
    config = load(path)
    assert list(config.arrivals.mix) == ["syn", "cg"]  # not alphabetical: the case that broke
    s = ResultsStore.create(tmp_path / "r.sqlite", config.dump(), path.read_text())
    again = ExperimentConfig.model_validate(ResultsStore.open(tmp_path / "r.sqlite", readonly=True).config)
    assert stream_for(again, 0.25, 0) == stream_for(config, 0.25, 0)
    s.close()


def _resize(job: int, at: float) -> "ResizeRecord":
    from workloads.host.records import ResizeRecord
    r = ResizeRecord(job, requested_at=at, from_procs=(0, 1, 2), to_procs=(0, 1), from_hosts=("ws1", "ws2", "ws3"),
                     to_hosts=("ws1", "ws2"), kind="loser", iteration=3, sent_at=at + 0.1, ack_at=at + 0.5,
                     partition_at=at + 0.6, released_at=at + 0.9, exited_at=at + 1.0, relaunched_at=at + 1.1,
                     running_at=at + 2.0)
    r.add_report({"bytes_moved": 4096, "redistribution_s": 0.2, "checkpoint_s": 0.0})
    return r


def test_resizes_are_a_typed_table_on_the_stream_clock(store: ResultsStore) -> None:
    cell = store.ensure_cell("RA", 0.1, 0, stream())
    seg = store.start_segment(cell, 30.0, ["ws1", "ws2", "ws3"], None)
    store.add_resizes(cell, seg, 30.0, [_resize(1, 5.0), _resize(2, 7.0)])
    store.add_resizes(cell, seg, 30.0, [_resize(1, 5.0), _resize(2, 7.0)])  # a redone step counts once
    got = store.resizes(cell)
    assert [r.job for r in got] == [1, 2] and got[0].requested_at == pytest.approx(35.0)
    assert got[0].from_procs == (0, 1, 2) and got[0].to_hosts == ("ws1", "ws2") and got[0].exited_at == pytest.approx(36.0)
    assert got[0].reconfig_s == pytest.approx(1.4) and got[0].bytes_moved == 4096 and got[0].relaunched_at == pytest.approx(36.1)
    assert store.artifacts(cell) == {}  # no CSV copy to parse back


def test_an_older_store_keeps_its_resizes(tmp_path: Path) -> None:
    """A version-2 store kept each segment's resizes as a CSV artifact (segment clock, Batsim interval
    sets): read-only it answers from them, opened for writing they become the table's rows."""
    import pandas as pd
    path = tmp_path / "old.db"
    with ResultsStore.create(path, CONFIG, "") as s:
        cell = s.ensure_cell("RA", 0.1, 0, stream())
        s.start_segment(cell, 0.0, ["ws1"], None)
        seg = s.start_segment(cell, 30.0, ["ws1", "ws2", "ws3"], None)
        legacy = {**_resize(1, 5.0).row(), "from_procs": "0-2", "to_procs": "0-1"}
        legacy.pop("from_hosts"), legacy.pop("to_hosts")
        s.add_artifact(cell, f"resizes-{seg}.csv", pd.DataFrame([legacy]).to_csv(index=False))
    conn = sqlite3.connect(path)
    conn.execute("DROP TABLE resizes")
    conn.execute("UPDATE meta SET value = '2' WHERE key = 'version'")
    conn.commit()
    conn.close()
    with ResultsStore.open(path, readonly=True) as s:
        (r,) = s.resizes(cell)
        assert r.from_procs == (0, 1, 2) and r.requested_at == pytest.approx(35.0) and r.reconfig_s == pytest.approx(1.4)
    with ResultsStore.open(path) as s:
        assert [(x.job, x.from_procs, x.to_procs, x.bytes_moved) for x in s.resizes(cell)] == [(1, (0, 1, 2), (0, 1), 4096)]
        assert s.artifacts(cell) == {}


def test_a_job_killed_at_its_walltime_is_stored_as_such(tmp_path):
    """A rigid job stopped at start + walltime is its own outcome (not done, not failed)."""
    from experiments.store import results as store_results
    from scheduler.jobs import Outcome
    conn = sqlite3.connect(":memory:")
    conn.executescript(store_results._SCHEMA)
    conn.execute("PRAGMA foreign_keys = OFF")
    conn.execute("INSERT INTO jobs (cell_id, job_id, segment, cls, demand, arrival, max_procs, requested, "
                 "preemptions, status, error, recorded_at) VALUES (1, 1, 0, 'r', 1, 0, 1, 1, 0, ?, '', 0)",
                 (Outcome.WALLTIME,))
    assert conn.execute("SELECT status FROM jobs").fetchone() == ("walltime",)
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute("INSERT INTO jobs (cell_id, job_id, segment, cls, demand, arrival, max_procs, requested, "
                     "preemptions, status, error, recorded_at) VALUES (1, 2, 0, 'r', 1, 0, 1, 1, 0, 'gone', '', 0)")
