"""`nowlab run` end to end on real containers: a dead workstation is survived and the run goes on.

Each test runs the CLI as a separate process, as a user would, and checks the
results database: every job of every cell's stream is there exactly once.
"""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from experiments.store import ResultsStore

pytestmark = pytest.mark.integration

DATA = Path(__file__).resolve().parent / "data"
NOWLAB = str(Path(sys.executable).parent / "nowlab")


def start(*args: str) -> subprocess.Popen:
    return subprocess.Popen([NOWLAB, "run", *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def finish(proc: subprocess.Popen, timeout: float = 600) -> str:
    out, _ = proc.communicate(timeout=timeout)
    return out


def stored(path: Path) -> int:
    if not path.exists():
        return 0
    try:
        with ResultsStore.open(path, readonly=True) as store:
            return len(store.jobs_frame())
    except ValueError:
        return 0  # being created


def wait_for(what, predicate, proc: subprocess.Popen, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        if proc.poll() is not None:
            pytest.fail(f"the run ended before {what}:\n{proc.stdout.read()[-3000:]}")
        time.sleep(0.5)
    proc.kill()
    pytest.fail(f"timed out waiting for {what}")


def every_job_once(path: Path) -> tuple:
    with ResultsStore.open(path, readonly=True) as store:
        cells = store.cells_frame()
        jobs = store.jobs_frame()
        for cell in cells.itertuples():
            ids = sorted(jobs[jobs.cell_id == cell.cell_id].job_id)
            assert ids == sorted(j.id for j in store.stream_of(int(cell.cell_id))), f"cell {cell.cell_id}: {ids}"
        return cells, jobs


def test_dead_workstation_fails_its_job_and_the_run_goes_on_without_it(docker_engine, tmp_path):
    """on_failure = "continue". The "stop" case, resumed, is the fault campaign's test."""
    config = tmp_path / "fail.toml"
    text = (DATA / "exp_tiny_fail.toml").read_text()
    text = text.replace('"exp_tiny4.toml"', f'"{DATA / "exp_tiny4.toml"}"')
    config.write_text(text.replace('on_failure = "stop"', 'on_failure = "continue"'))
    out = tmp_path / "fail.sqlite"
    proc = start(str(config), "--out", str(out))
    wait_for("a finished job", lambda: stored(out) >= 1, proc)
    victim = "nowlab-x-tiny-fail-ws2"

    def running_job() -> bool:
        # a pool rank takes its workload's name while it runs one (workloads/pool.py)
        probe = subprocess.run(["docker", "exec", victim, "pgrep", "-x", "synthetic"],
                               capture_output=True, text=True)
        return probe.returncode == 0

    wait_for("a job on ws2", running_job, proc)
    subprocess.run(["docker", "kill", victim], check=True, capture_output=True)
    text = finish(proc)
    assert "results:" in text, text[-3000:]
    cells, jobs = every_job_once(out)
    failed = jobs[jobs.status == "failed"]
    assert len(failed) >= 1 and failed.error.str.contains("ws2").all(), failed[["job_id", "error"]]
    assert (jobs.status == "done").sum() == len(jobs) - len(failed)
    assert set(cells.status) == {"done"} and cells.resumed.all()
    with ResultsStore.open(out, readonly=True) as store:
        hosts = [s["hosts"] for s in store.segments(int(cells.cell_id[0]))]
    assert "ws2" in hosts[0]
    assert "ws2" not in hosts[-1]  # went on without it
