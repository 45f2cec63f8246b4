"""Post-processing steps fail softly and are redone; a cell is never left `running` (no containers).

The stores here are real results stores of the tiny experiment (tests/data/exp_tiny.toml) with
every cell's real stream; the jobs' times are made up, since what is checked is that nothing
is lost and every step is redone, not the numbers.
"""
from __future__ import annotations

from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from experiments import config as cfg
from experiments import live, steps
from scheduler.jobs import FinishedJob
from experiments.runner import Runner, RunStopped, cells, stream_for
from experiments.store import ResultsStore
from scheduler.live.executor import LiveExecutor
from nowlab.commands import experiments as experiments_cli
from testbed import lifecycle
from testbed.backends.local import LocalBackend, local_spec

DATA = Path(__file__).resolve().parents[2] / "data"
HOSTS = ["ws1", "ws2", "ws3", "ws4"]
app = typer.Typer()
experiments_cli.register(app)  # `nowlab run` and `nowlab report` as the nowlab command has them
PROFILE = {"W": 6.0, "alpha": 0.05, "beta": 0.2, "pmax": None, "phases": 10, "launch_s": 1.5,
           "launch_per_proc_s": 0.1, "teardown_s": 0.3, "key": "test"}


def quiet(*_args: object) -> None:
    return None


def tiny() -> cfg.ExperimentConfig:
    return cfg.load(DATA / "exp_tiny.toml")


def finished_run(path: Path) -> cfg.ExperimentConfig:
    """A store of the tiny experiment whose every cell ran to the end (one segment each)."""
    config = tiny()
    with ResultsStore.create(path, config.dump(), (DATA / "exp_tiny.toml").read_text()) as s:
        cal = s.add_calibration({"time": 1.7e9, "cpu": [{"workstation": ws, "measured": 0.15, "error": 0.0}
                                                         for ws in HOSTS]})
        s.set_profile("syn", PROFILE)
        for policy, rate, rep in cells(config):
            stream = stream_for(config, rate, rep)
            cid = s.ensure_cell(policy, rate, rep, stream)
            seg = s.start_segment(cid, 0.0, HOSTS, cal)
            s.set_cell_status(cid, "running")
            for j in stream:
                s.add_job(cid, FinishedJob(j.id, j.cls, j.demand, j.arrival_s, j.arrival_s + 1.0, j.arrival_s + 9.0,
                                          2.0, 2, 4, 0, "done", ""), seg)
            s.set_cell_status(cid, "done")
    return config


def snapshot(path: Path):
    with ResultsStore.open(path, readonly=True) as s:
        return s.jobs_frame(), s.cells_frame()


def test_a_run_whose_report_step_fails_can_be_resumed_and_loses_nothing(tmp_path, monkeypatch):
    path = tmp_path / "tiny.sqlite"
    finished_run(path)
    jobs_before, cells_before = snapshot(path)
    real_render = live._render

    def broken(_store, _out):
        raise OSError("No space left on device: 'tiny-report/response.png'")

    monkeypatch.setattr(live, "_render", broken)
    result = CliRunner().invoke(app, ["run", "--resume", "--out", str(path)])
    assert result.exit_code == 1, result.output
    lines = [ln for ln in result.output.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1 and "report of the run" in lines[0] and f"nowlab report {path}" in lines[0], lines
    assert f"results: {path}" in result.output
    with ResultsStore.open(path, readonly=True) as s:
        failures = s.step_failures()
        assert [(f.cell_id, f.step) for f in failures] == [(None, "report")]
        assert failures[0].error == "OSError: No space left on device: 'tiny-report/response.png'"
        assert len(s.predictions_frame()) == len(jobs_before)  # the step before it went through
    jobs_after, cells_after = snapshot(path)
    assert jobs_after.equals(jobs_before) and (cells_after.status == "done").all()
    assert not (tmp_path / "tiny-report").exists()

    monkeypatch.setattr(live, "_render", real_render)  # fixed: resuming redoes the report
    result = CliRunner().invoke(app, ["run", "--resume", "--out", str(path)])
    assert result.exit_code == 0, result.output
    md = (tmp_path / "tiny-report" / "report.md").read_text()
    assert "Folding's response time is below RA's" in md
    with ResultsStore.open(path, readonly=True) as s:
        assert s.step_failures() == []
    jobs_after, cells_after = snapshot(path)
    assert jobs_after.equals(jobs_before)
    assert cells_after.drop(columns="failed_steps").equals(cells_before.drop(columns="failed_steps"))


def test_failed_predictions_are_stored_and_redone_by_nowlab_report(tmp_path, monkeypatch):
    path = tmp_path / "tiny.sqlite"
    finished_run(path)
    real_replay = live.replay

    def broken(_store, log):
        raise KeyError("alpha")

    monkeypatch.setattr(live, "replay", broken)
    result = CliRunner().invoke(app, ["report", str(path)])  # --predict not asked: nothing to redo yet
    assert result.exit_code == 0, result.output
    result = CliRunner().invoke(app, ["report", str(path), "--predict"])
    assert result.exit_code == 0, result.output  # the report is written; the failure is one warning line
    assert "predictions of the run failed: KeyError: 'alpha'" in " ".join(result.output.split())
    assert [ln for ln in result.output.splitlines() if ln.startswith(("warning:", "error:"))] == [
        f"warning: 1 post-processing step(s) failed, every job is kept (predictions of the run: KeyError: "
        f"'alpha'); redo with `nowlab report {path}`"]
    monkeypatch.setattr(live, "replay", real_replay)
    result = CliRunner().invoke(app, ["report", str(path)])  # the stored failure is redone unasked
    assert result.exit_code == 0, result.output
    with ResultsStore.open(path, readonly=True) as s:
        assert s.step_failures() == [] and len(s.predictions_frame()) == len(s.jobs_frame()) > 0


def test_a_failed_cell_step_is_in_the_report_and_the_cell_stays_done(tmp_path):
    path = tmp_path / "tiny.sqlite"
    finished_run(path)
    window = steps.Window(1, tuple(HOSTS), 0.0, 30.0)
    with ResultsStore.open(path) as s:
        ok = steps.attempt(s, steps.AVAILABILITY, lambda: steps.availability(s, 1, *steps.stored_monitor(s, 1),
                                                                             window),
                           log=quiet, cell=1, payload=window.payload)
        assert not ok
        assert s.cell_status(1) == "done"
        # redone: still no monitor series for session 1, so it fails again, and stays stored
        assert [f.step for f in steps.redo(s, quiet)] == ["availability"]
    failing = live.make_report(path, out=tmp_path / "r", predict=True)
    assert failing == ["availability of cell 1: ValueError: the monitor series of session 1 is not stored "
                       "(see its monitor step)"]
    md = (tmp_path / "r" / "report.md").read_text()
    assert "done, but failed steps (redo with `nowlab report`): availability: ValueError" in md


def test_availability_is_redone_from_the_stored_monitor_series(tmp_path):
    path = tmp_path / "tiny.sqlite"
    finished_run(path)
    cpu_rows = [{"t": t, "workstation": ws, "cap_cores": 0.15, "owner_cores": 0.03 * k, "avail_cores": 0.15 - 0.03 * k,
                 "avail_cpu": (0.15 - 0.03 * k) / 0.15} for t in (2.0, 4.0, 6.0) for k, ws in enumerate(HOSTS)]
    window = steps.Window(7, tuple(HOSTS), 1.0, 7.0)
    with ResultsStore.open(path) as s:
        assert not steps.attempt(s, steps.AVAILABILITY, lambda: steps.availability(s, 2, *steps.stored_monitor(s, 7),
                                                                                   window),
                                 log=quiet, cell=2, payload=window.payload)

        def frames_fail():
            raise ValueError("Length of values (2872) does not match length of index (2880)")

        assert not steps.attempt(s, "monitor-7", frames_fail, log=quiet,
                                 payload=lambda: steps.monitor_payload(cpu_rows, []))
        assert steps.redo(s, quiet) == []  # the monitor series first, then the availability from it
        av = s.availability(2)
    assert av["avg_avail_cpu"] == pytest.approx({ws: 1.0 - 0.2 * k for k, ws in enumerate(HOSTS)})
    assert av["t0"] == 1.0 and av["t1"] == 7.0


@pytest.mark.parametrize("exc, reason", [(RuntimeError("control channel closed"), "stopped by an error: "
                                          "RuntimeError: control channel closed"),
                                         (KeyboardInterrupt(), "stopped by Ctrl-C or SIGTERM")])
def test_a_cell_cut_short_by_an_exception_is_interrupted_and_resumable(tmp_path, monkeypatch, exc, reason):
    config = tiny()
    path = tmp_path / "tiny.sqlite"
    monkeypatch.setenv("NOWLAB_HOME", str(tmp_path / "home"))
    with ResultsStore.create(path, config.dump(), "") as store, \
            lifecycle.cluster(local_spec(len(HOSTS)), backend=LocalBackend(pool=False)) as here:
        runner = Runner(config, store, update=quiet, log=quiet)
        runner.cluster = here  # this host, a job an mpiexec: the executor never launches, its run raises at once
        runner.hosts = list(HOSTS)
        runner.calibration_id = store.add_calibration({"time": 1.7e9})
        runner.profiles = {"syn": PROFILE}

        def run(_self):
            raise exc

        monkeypatch.setattr(LiveExecutor, "run", run)
        with pytest.raises(type(exc)):
            runner.run_cells(cells(config))
        frame = store.cells_frame()
        assert frame.status.tolist() == ["interrupted"] and frame.error.tolist() == [reason]
        assert frame.interruptions.tolist() == [1] and frame.stored_jobs.tolist() == [0]
        assert store.segments(1)[0]["hosts"] == HOSTS
        assert frame.elapsed_s.tolist() == [0.0]  # no clock had started: a resume replays the stream from 0


def test_a_cell_left_running_by_a_killed_runner_is_marked_interrupted(tmp_path):
    path = tmp_path / "tiny.sqlite"
    config = tiny()
    with ResultsStore.create(path, config.dump(), "") as s:
        cid = s.ensure_cell("RA", 0.15, 0, stream_for(config, 0.15, 0))
        s.set_cell_status(cid, "running")
        assert s.interrupt_running("the runner stopped without clean-up (killed or crashed)") == [cid]
        assert s.cell_status(cid) == "interrupted" and s.interrupt_running("again") == []


def test_a_version_1_store_gains_the_step_failures_table(tmp_path):
    import sqlite3

    path = tmp_path / "old.sqlite"
    finished_run(path)
    conn = sqlite3.connect(path)
    conn.execute("DROP TABLE step_failures")
    for table in ("jobs", "predictions"):
        conn.execute(f"ALTER TABLE {table} DROP COLUMN delivered_speed")
    conn.execute("UPDATE meta SET value = '1' WHERE key = 'version'")
    conn.commit()
    conn.close()
    with ResultsStore.open(path, readonly=True) as s:  # read-only: no table, no failures, no speeds
        assert s.step_failures() == [] and set(s.cells_frame().failed_steps) == {""}
        assert s.jobs_frame().delivered_speed.isna().all()
    with ResultsStore.open(path) as s:
        s.add_step_failure(None, None, "report", "OSError: disk full")
        assert [f.step for f in s.step_failures()] == ["report"]
        jobs = s.jobs_frame()
        assert len(jobs) == 10 and jobs.delivered_speed.isna().all()  # the old rows: NULL
    # the report of an old store is written, which redoes (and clears) the stored report failure
    assert live.make_report(path, out=tmp_path / "r", predict=True) == []
    assert (tmp_path / "r" / "report.md").is_file()


def test_a_job_s_delivered_speed_is_stored(tmp_path):
    path = tmp_path / "tiny.sqlite"
    config = tiny()
    with ResultsStore.create(path, config.dump(), "") as s:
        stream = stream_for(config, 0.15, 0)
        cid = s.ensure_cell("RA", 0.15, 0, stream)
        s.start_segment(cid, 0.0, HOSTS, None)
        j = stream[0]
        s.add_job(cid, FinishedJob(j.id, j.cls, j.demand, j.arrival_s, j.arrival_s + 1, j.arrival_s + 5, 2.0, 2, 4, 0,
                                  delivered_speed=0.9), 1)
        assert s.jobs_frame().delivered_speed.tolist() == [0.9]


def test_owner_schedules_on_a_backend_without_caps_stop_the_run_naming_the_capability(tmp_path, monkeypatch):
    """The runner holds one Cluster whatever the backend; what this one cannot do (cap and hold
    workstations for the owners' bursts) it refuses in one line, not by asking what type it holds."""
    demo = cfg.load("experiments/configs/demo.toml")
    assert demo.load.owner_mode == "schedule" and demo.load.owner
    monkeypatch.setenv("NOWLAB_HOME", str(tmp_path / "home"))
    with ResultsStore.create(tmp_path / "demo.sqlite", demo.dump(), "") as store, \
            lifecycle.cluster(local_spec(8), backend=LocalBackend(pool=False)) as here:
        runner = Runner(demo, store, update=quiet, log=quiet)
        runner.cluster = here
        with pytest.raises(RunStopped, match=r"^load.owner_mode: schedule: the local backend has no CPU caps "
                                             r"\(cpu_caps\)$"):
            runner._owner_caps(0, 0.0)
        assert runner._alive("ws3") and not runner._paused("ws3")  # this host: up while the runner is
        assert runner.cluster.meter_dir is None  # no keeper, so no meter to keep with the run
