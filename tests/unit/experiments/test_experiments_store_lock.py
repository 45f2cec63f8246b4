"""One runner per results file: a second writer is refused in one line naming the holder's PID."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from experiments.store import ResultsStore
from experiments.store.lock import StoreLocked, lock_path
from nowlab.cli import app

ROOT = Path(__file__).resolve().parents[3]
CONFIG = {"name": "lock", "class": {}, "arrivals": {"mix": {}}}
# A second process that opens the store for writing, says so, and holds it until stdin closes.
HOLDER = """
import sys
from experiments.store import ResultsStore
store = ResultsStore.open(sys.argv[1])
print("holding", flush=True)
sys.stdin.read()
store.close()
"""


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    path = tmp_path / "r.sqlite"
    ResultsStore.create(path, CONFIG, "").close()
    return path


def hold(path: Path) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], cwd=ROOT, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == "holding\n"
    return proc


def snapshot(path: Path) -> dict[str, tuple[bytes, int]]:
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(path.parent.iterdir())}


def test_a_second_writer_is_refused_naming_the_holder_and_changes_nothing(store_path):
    holder = hold(store_path)
    try:
        before = snapshot(store_path)
        with pytest.raises(StoreLocked) as err:
            ResultsStore.open(store_path)
        assert str(err.value) == (f"results: {store_path} is in use by another runner (pid {holder.pid}); "
                                  "wait for it to end or stop it, then resume")
        assert snapshot(store_path) == before
        with ResultsStore.open(store_path, readonly=True) as reader:  # a report may still read it
            assert reader.config == CONFIG
    finally:
        holder.communicate("")
    with ResultsStore.open(store_path) as store:  # the holder closed: the next writer gets in
        assert store.config == CONFIG
    assert not lock_path(store_path).exists()  # a clean close leaves no lock file


def test_a_lock_file_left_by_a_killed_runner_blocks_nothing(store_path):
    holder = hold(store_path)
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    assert lock_path(store_path).read_text() == f"{holder.pid}\n"  # left behind, naming a dead process
    with ResultsStore.open(store_path) as store:
        assert store.config == CONFIG
        assert lock_path(store_path).read_text() == f"{os.getpid()}\n"


def test_create_takes_the_lock_too(tmp_path):
    path = tmp_path / "new.sqlite"
    with ResultsStore.create(path, CONFIG, ""):
        with pytest.raises(StoreLocked, match=rf"in use by another runner \(pid {os.getpid()}\)"):
            ResultsStore.open(path)


def test_nowlab_run_resume_on_a_held_file_is_one_line_and_exit_2(store_path):
    holder = hold(store_path)
    try:
        before = snapshot(store_path)
        result = CliRunner().invoke(app, ["run", "--resume", "--out", str(store_path)])
        assert result.exit_code == 2
        assert result.output == (f"error: results: {store_path} is in use by another runner (pid {holder.pid}); "
                               "wait for it to end or stop it, then resume\n")
        assert snapshot(store_path) == before
    finally:
        holder.communicate("")
