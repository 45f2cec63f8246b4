"""Schedulers for the Batsim-protocol tests, started as real processes on a free port.

`scheduler(argv)` starts one (pybatsim's launcher or a scripted one) bound to a fresh
127.0.0.1 port and yields its endpoint; it is stopped (by its own handle) when the test ends.
Its output goes to a file in the test's folder, to read when a test fails.
"""
from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPTED = HERE / "batsim_scripted_scheduler.py"
PYBATSIM = Path(sys.executable).parent / "pybatsim"
ROOT = HERE.parent


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def scheduler(kind: str, mode: str, workdir: Path) -> Iterator[tuple[str, subprocess.Popen]]:
    """kind "pybatsim" (mode: a bundled scheduler's name), "scripted" (a mode of
    batsim_scripted_scheduler.py) or "nowlab" (a mode of experiments.batsim.scripted)."""
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    if kind == "pybatsim":
        argv = [str(PYBATSIM), mode, "-s", endpoint, "-t", "10000"]
    elif kind == "scripted":
        argv = [sys.executable, str(SCRIPTED), mode, endpoint]
    else:
        argv = [sys.executable, "-m", "experiments.batsim.scripted", mode, "--socket", endpoint]
    log = (workdir / f"scheduler-{mode}.log").open("w")
    proc = subprocess.Popen(argv, cwd=workdir, stdout=log, stderr=subprocess.STDOUT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        yield endpoint, proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)
        log.close()


def write_workload(path: Path, jobs: list[dict], profiles: dict[str, dict], nb_res: int = 4) -> Path:
    path.write_text(json.dumps({"nb_res": nb_res, "jobs": jobs, "profiles": profiles}))
    return path
