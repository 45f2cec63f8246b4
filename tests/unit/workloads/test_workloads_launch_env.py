"""A host launch takes a run's own variables (its manager, its secret) from the launcher's `env`
only: left in the caller's shell, NOWLAB_TIMESHARE would make a dedicated or OS-alone run's ranks
check in with some other run's manager."""
from __future__ import annotations

import gc
import subprocess

import pytest

from workloads.host import launch
from workloads.host.launch import LocalLauncher


class Captured(Exception):
    pass


def launched_env(monkeypatch: pytest.MonkeyPatch, env: dict[str, str] | None) -> dict[str, str]:
    seen: dict[str, str] = {}

    def popen(cmd, **kw):
        seen.update(kw["env"])
        raise Captured

    monkeypatch.setattr(subprocess, "Popen", popen)
    with pytest.raises(Captured):
        LocalLauncher().mpirun_popen(["ws1"], ["python3", "-c", "pass"], env=env)
    return seen


def test_run_scoped_variables_are_not_inherited(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("NOWLAB_TIMESHARE", "ws1=127.0.0.1:9")
    monkeypatch.setenv("NOWLAB_CONTROL_SECRET", "00" * 32)
    monkeypatch.setenv("NOWLAB_TEST_KEEP", "kept")
    env = launched_env(monkeypatch, None)
    assert not set(launch.RUN_SCOPED_ENV) & set(env)
    assert env["NOWLAB_TEST_KEEP"] == "kept" and env["PYTHONPATH"]


def test_run_scoped_variables_given_by_the_run_are_passed(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("NOWLAB_TIMESHARE", "ws1=127.0.0.1:9")
    env = launched_env(monkeypatch, {"NOWLAB_TIMESHARE": "ws1=127.0.0.1:7717"})
    assert env["NOWLAB_TIMESHARE"] == "ws1=127.0.0.1:7717"


@pytest.mark.host_mpi
def test_each_host_mpiexec_has_its_own_session_directory_removed_once_it_exited():
    """Under one shared base, an exiting mpiexec's clean-up removed the directory of one starting
    ("orte_session_dir failed", once in 40 quick launch sets)."""
    handles = [LocalLauncher().mpirun_popen(["ws1", "ws2"], ["true"]) for _ in range(2)]
    bases = [h.session_base for h in handles]
    assert bases[0] != bases[1] and all(b is not None and b.is_dir() for b in bases)
    assert all(h.wait(60).exit_code == 0 for h in handles)
    assert not any(b.exists() for b in bases)


@pytest.mark.host_mpi
def test_a_handle_dropped_unwaited_still_removes_its_session_directory():
    """Two session directories were left per CI run by handles that were terminated, never waited."""
    handle = LocalLauncher().mpirun_popen(["ws1"], ["true"])
    base, process = handle.session_base, handle.process
    process.wait(60)
    del handle
    gc.collect()
    assert base is not None and not base.exists()
