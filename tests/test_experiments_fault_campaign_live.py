"""The fault campaign's short mode in the test command (issue 19): a workstation killed
mid-job and the runner killed with SIGKILL, each in its own small live experiment, then
resumed as a user would. No finished job is lost or run twice, the fault is noticed, the
run goes on, and `nowlab gc` leaves nothing labelled."""
from __future__ import annotations

from pathlib import Path

import pytest

from experiments.fault_campaign import SHORT, Campaign

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
