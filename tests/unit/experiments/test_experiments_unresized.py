"""Jobs that kept one partition, against their class's profile: on a hand-made jobs table and
profile (T(p) = 8/p + 1 s, a 0.5 s launch), with the profile's speed drifting half-way."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from experiments.unresized import by_size, drift_text, unresized

CONFIG = {"name": "t", "title": "t", "minutes": 1, "cluster": "x.toml", "policies": ["RA", "FOLDING"],
          "class": {"A": {"workload": "synthetic", "args": {"phases": 4, "work": 0.1}}},
          "arrivals": {"rates": [0.1], "jobs": 3, "mix": {"A": 1.0}}}
PROFILES = {"A": {"W": 8.0, "alpha": 1.0, "beta": 0.0, "phases": 4, "launch_s": 0.5}}


def job(cell: int, jid: int, p: int, execution: float, *, mean_procs: float | None = None, preemptions: int = 0,
        status: str = "done", speed: float | None = 1.0) -> dict:
    return {"cell_id": cell, "policy": "RA", "rate": 0.1, "job_id": jid, "cls": "A", "demand": 1.0,
            "start": 10.0, "finish": 10.0 + execution, "mean_procs": float(mean_procs or p), "max_procs": p,
            "preemptions": preemptions, "status": status, "delivered_speed": speed}


def test_unresized_jobs_against_the_profile():
    # predicted alone: 8/p + 1 + 0.5 (the launch rides in alpha): 5.5 s on 2, 3.5 s on 4
    jobs = pd.DataFrame([
        job(1, 0, 2, 5.5), job(1, 1, 4, 3.5, speed=0.9),
        job(2, 0, 2, 6.05), job(2, 1, 4, 3.85),
        job(2, 2, 4, 9.0, mean_procs=3.0),  # resized: left out
        job(2, 3, 4, 9.0, preemptions=1),  # preempted: left out
        job(2, 4, 4, 9.0, status="failed"),  # failed: left out
    ])
    rows = unresized(jobs, CONFIG, PROFILES)
    # in the run's order: cell by cell, each by finishing time
    assert list(zip(rows.cell_id, rows.job_id)) == [(1, 1), (1, 0), (2, 1), (2, 0)]
    assert list(rows.predicted_s) == pytest.approx([3.5, 5.5, 3.5, 5.5])
    assert list(rows.ratio) == pytest.approx([1.0, 1.0, 1.1, 1.1])
    assert rows.ratio_norm.iloc[0] == pytest.approx(0.9)
    assert drift_text(rows) == "1.05 (1.00 -> 1.10, n 4)"


def test_unresized_without_jobs_or_meter():
    assert unresized(pd.DataFrame(), CONFIG, PROFILES).empty
    rows = unresized(pd.DataFrame([job(1, 0, 2, 5.5, speed=None)]), CONFIG, PROFILES)
    assert math.isnan(rows.ratio_norm.iloc[0])
    assert drift_text(rows) == ""  # too few to say


def test_by_size_tables_each_class_and_partition():
    rows = unresized(pd.DataFrame([job(1, 0, 2, 5.5), job(1, 1, 2, 6.6), job(1, 2, 4, 3.5)]), CONFIG, PROFILES)
    table = by_size(rows)
    assert table.to_dict("records") == [
        {"class": "A", "workstations": 2, "jobs": 2, "measured median (s)": "6.05", "profiled (s)": "5.50",
         "measured / profiled": "1.10"},
        {"class": "A", "workstations": 4, "jobs": 1, "measured median (s)": "3.50", "profiled (s)": "3.50",
         "measured / profiled": "1.00"}]
    assert by_size(rows.iloc[:0]).empty


def test_unresized_is_empty_for_a_config_that_gives_no_model():
    assert unresized(pd.DataFrame([job(1, 0, 2, 5.5)]), {"name": "hand-made"}, PROFILES).empty
