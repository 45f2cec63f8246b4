"""A live replay's window, worked by hand: which jobs, scaled how, wider ones scaled down or skipped,
each bad option one line naming it. (The run itself: tests/integration/test_nowlab_replay_live_local.py.)"""
from __future__ import annotations

import pytest

from experiments.trace_replay_live import LiveWindow, run_timeout_s, window
from experiments.traces.swf_rigid import read_rigid

TRACE = """; MaxProcs: 8
1 100 -1 100 2 -1 -1 2 200 -1 1 1 1 -1 1 -1 -1 -1
2 110 -1  50 8 -1 -1 8  -1 -1 1 2 1 -1 1 -1 -1 -1
3 130 -1  30 1 -1 -1 1  40 -1 1 3 1 -1 1 -1 -1 -1
4 150 -1  80 1 -1 -1 1 100 -1 1 5 1 -1 1 -1 -1 -1
"""


@pytest.fixture
def trace(tmp_path):
    path = tmp_path / "t.swf"
    path.write_text(TRACE)
    return read_rigid(path)


def test_the_window_is_scaled_from_its_first_submit(trace):
    w = window(trace, LiveWindow(first=0, jobs=3, scale_time=0.1, P=4))
    assert [(a.id, a.arrival, a.size, a.walltime_s) for a in w.arrivals] == [
        (1, 0.0, 2, pytest.approx(20.0)), (2, pytest.approx(1.0), 4, None), (3, pytest.approx(3.0), 1, pytest.approx(4.0))]
    assert (w.scaled_down, w.skipped_wide) == (1, 0)
    assert w.arrivals[0].job_class.argv == ("python3", "-m", "workloads.rigid", "--sleep", "10.000000")
    assert w.arrivals[0].job_class.rigid and w.jobs[1].size == 4 and w.jobs[2].model.T(1) == pytest.approx(3.0)
    assert run_timeout_s(w.jobs) == pytest.approx((3.0 + 20.0 + 5.0 + 4.0) * 2 + 60.0)


def test_wider_jobs_skipped_and_work_programs(trace):
    w = window(trace, LiveWindow(first=1, jobs=3, scale_time=1.0, P=4, wide="skip", program="work", iterations=5))
    assert [a.id for a in w.arrivals] == [3, 4] and (w.scaled_down, w.skipped_wide) == (0, 1)
    assert w.arrivals[0].arrival == 20.0  # from the window's first submit (job 2's, skipped)
    assert w.arrivals[1].job_class.argv[3:] == ("--work", "80.000000", "--iterations", "5")


@pytest.mark.parametrize("kwargs, words", [
    ({"first": -1}, "--first must be >= 0"), ({"jobs": 0}, "--jobs must be >= 1"),
    ({"scale_time": 0.0}, "--scale-time must be a finite factor > 0"), ({"P": 0}, "--max-procs must be >= 1"),
    ({"wide": "squash"}, "--wide: unknown 'squash'"), ({"program": "spin"}, "--program: unknown 'spin'"),
])
def test_each_bad_option_is_one_line_naming_it(kwargs, words):
    with pytest.raises(ValueError, match=words):
        LiveWindow(**{"first": 0, "jobs": 2, "scale_time": 1.0, "P": 4, **kwargs})


def test_a_window_past_the_trace_is_one_line(trace):
    with pytest.raises(ValueError, match="--first: the trace keeps 4 jobs, none from 9"):
        window(trace, LiveWindow(first=9, jobs=2, scale_time=1.0, P=4))
