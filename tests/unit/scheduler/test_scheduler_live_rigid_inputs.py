"""A rigid job's live inputs: the arrival's size and walltime, each bad one a one-line error, and the
executor's refusal of a stream it could not run (before anything starts)."""
from __future__ import annotations

import pytest

from scheduler.live import Arrival, LiveExecutor
from scheduler.live.stream import JobClass, PmaxOnlyModel
from scheduler.model import RuntimeModel
from workloads.host.launch import LocalLauncher

RIGID = JobClass("delay", ("python3", "-m", "workloads.rigid", "--sleep", "1"), RuntimeModel(1.0), rigid=True)
MALLEABLE = JobClass("syn", ("python3", "-m", "workloads.synthetic"), PmaxOnlyModel(4))


def test_a_rigid_arrival_is_the_state_machines_rigid_job():
    job = Arrival(7, RIGID, 2.5, size=3, walltime_s=10.0).job()
    assert (job.id, job.arrival, job.size, job.walltime) == (7, 2.5, 3, 10.0)
    assert Arrival(8, MALLEABLE, 0.0).job().size is None


@pytest.mark.parametrize("make, words", [
    (lambda: Arrival(0, RIGID, 0.0), "size: class delay is rigid"),
    (lambda: Arrival(0, MALLEABLE, 0.0, size=2), "size: class syn is malleable"),
    (lambda: Arrival(0, MALLEABLE, 0.0, walltime_s=5.0), "walltime_s: a live run kills only rigid jobs"),
    (lambda: Arrival(0, RIGID, 0.0, size=0), "size must be an integer >= 1"),
    (lambda: Arrival(0, RIGID, 0.0, size=2, walltime_s=0.0), "walltime must be a finite time > 0"),
])
def test_each_bad_field_is_one_line_naming_it(make, words):
    with pytest.raises(ValueError, match=words) as info:
        make()
    assert "\n" not in str(info.value)


def test_a_rigid_job_wider_than_the_cluster_is_refused_before_anything_starts():
    with pytest.raises(ValueError, match="asks for exactly 5 processors; the machine has P=4"):
        LiveExecutor([Arrival(0, RIGID, 0.0, size=5)], "EASY", LocalLauncher(), ["a", "b", "c", "d"], "127.0.0.1")
