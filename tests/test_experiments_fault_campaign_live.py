"""The fault campaign's short mode in the test command (issue 19): a workstation killed
mid-job and the runner killed with SIGKILL, each in its own small live experiment, then
resumed as a user would. No finished job is lost or run twice, the fault is noticed, the
run goes on, the resumed run's report is whole, and `nowlab gc` leaves nothing labelled.
(It took over the killed-runner test and the dead-workstation test's "stop" case from
tests/test_experiments_live.py.)"""
from __future__ import annotations

from pathlib import Path

import pytest

from experiments.fault_campaign import SHORT, Campaign
from experiments.store import ResultsStore

pytestmark = pytest.mark.integration

CONFIG = Path(__file__).resolve().parents[1] / "experiments" / "configs" / "faults" / "tiny.toml"


def test_a_killed_workstation_and_a_killed_runner_lose_nothing_and_leave_nothing(docker_engine, tmp_path):
    results = {r.fault: r for r in Campaign(CONFIG, "x-faults", tmp_path, timeout_s=600).run(SHORT)}
    for fault, r in results.items():
        print(r.row())
        assert r.note == "", (fault, r.note)
        assert (r.lost, r.duplicated, r.leftovers) == (0, 0, []), r
        assert r.recover_s is not None and r.recover_s > 0, r
    killed = results["kill-workstation"]
    assert killed.detect_s is not None and killed.detect_s < 30, killed
    assert killed.failed >= 1  # the victim's job, failed with the reason

    # The resumed run's report has the measured numbers, the figures and the SWF export.
    report = tmp_path / "kill-runner-report"
    md = (report / "report.md").read_text()
    with ResultsStore.open(tmp_path / "kill-runner.sqlite", readonly=True) as store:
        jobs = store.jobs_frame()
    mine = jobs[jobs.job_id >= 1]  # past the warm-up
    assert f"{mine.response.mean():.2f}" in md
    for name in ("response.png", "wait.png", "execution.png", "partition.png", "preemptions.png", "cells.csv"):
        assert (report / name).stat().st_size > 0
    assert len(list((report / "swf").glob("*.swf"))) == 1
