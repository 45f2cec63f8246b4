"""The fault campaign's short mode in the test command (issue 19): a workstation killed
mid-job and the runner killed with SIGKILL, each in its own small live experiment. No
finished job is lost or run twice, the fault is noticed, the run goes on, the resumed run's
report is whole, and `nowlab gc` leaves nothing labelled.

Here the killed workstation's run has on_failure = "continue" (the run fails the victim's
job and goes on without ws2); the killed runner's run is resumed as a user would. The
campaign's own config says "stop", and `hardening/fault_campaign.py` resumes that case too:
the test command covers resuming once, through the killed runner. (This test took over the
dead-workstation and killed-runner tests of the former tests/test_experiments_live.py.)"""
from __future__ import annotations

from pathlib import Path

import pytest

from hardening.campaign import SHORT, Campaign
from experiments.store import ResultsStore

# It ends with `nowlab gc --all`: gc_all makes it run before the shared cluster of the other tests exists.
pytestmark = [pytest.mark.integration, pytest.mark.gc_all]

CONFIGS = Path(__file__).resolve().parents[2] / "experiments" / "configs" / "faults"


def every_job_once(path: Path):
    with ResultsStore.open(path, readonly=True) as store:
        cells, jobs = store.cells_frame(), store.jobs_frame()
        for cell in cells.itertuples():
            ids = sorted(jobs[jobs.cell_id == cell.cell_id].job_id)
            assert ids == sorted(j.id for j in store.stream_of(int(cell.cell_id))), f"cell {cell.cell_id}: {ids}"
        hosts = [s["hosts"] for s in store.segments(int(cells.cell_id.iloc[0]))]
    return cells, jobs, hosts


def test_a_killed_workstation_and_a_killed_runner_lose_nothing_and_leave_nothing(docker_engine, tmp_path):
    text = (CONFIGS / "tiny.toml").read_text()
    assert 'on_failure = "stop"' in text and 'cluster = "faults4.toml"' in text
    config = tmp_path / "tiny-continue.toml"
    assert "work = 0.2 " in text
    # half the work a phase: the test command's budget (the jobs still outlast a fault's notice)
    config.write_text(text.replace('on_failure = "stop"', 'on_failure = "continue"')
                      .replace('cluster = "faults4.toml"', f'cluster = "{CONFIGS / "faults4.toml"}"')
                      .replace("work = 0.2 ", "work = 0.1 "))
    results = {r.fault: r for r in Campaign(config, "x-faults", tmp_path, timeout_s=600).run(SHORT)}
    for fault, r in results.items():
        print(r.row())
        assert r.note == "", (fault, r.note)
        assert (r.lost, r.duplicated, r.leftovers) == (0, 0, []), r
        assert r.recover_s is not None and r.recover_s > 0, r

    # The killed workstation: noticed, the victim's job failed naming it, the run went on without it.
    killed = results["kill-workstation"]
    assert killed.detect_s is not None and killed.detect_s < 30, killed
    cells, jobs, hosts = every_job_once(tmp_path / "kill-workstation.sqlite")
    failed = jobs[jobs.status == "failed"]
    assert len(failed) >= 1 and failed.error.str.contains("ws2").all(), failed[["job_id", "error"]]
    assert (jobs.status == "done").sum() == len(jobs) - len(failed)
    assert set(cells.status) == {"done"} and cells.resumed.all()
    assert "ws2" in hosts[0] and "ws2" not in hosts[-1]

    # The killed runner, resumed: every job once, and the report has the measured numbers,
    # the figures and the SWF export.
    cells, jobs, _ = every_job_once(tmp_path / "kill-runner.sqlite")
    assert set(cells.status) == {"done"} and (jobs.status == "done").all()
    report = tmp_path / "kill-runner-report"
    md = (report / "report.md").read_text()
    mine = jobs[jobs.job_id >= 1]  # past the warm-up
    assert f"{mine.response.mean():.2f}" in md
    for name in ("response.png", "wait.png", "execution.png", "partition.png", "preemptions.png", "cells.csv"):
        assert (report / name).stat().st_size > 0
    assert len(list((report / "swf").glob("*.swf"))) == 1
