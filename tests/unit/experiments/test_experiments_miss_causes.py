"""Each cause a miss can have, on hand-made cells: chance, host speed, schedule and job time,
and the split of the single replay's error into its schedule and job-time parts."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from experiments import miss_causes
from experiments.predict import ClassModel

#: T(p) = 8/p seconds, no launch or start-up: a job on 8 takes 1 s, on 4 takes 2 s.
MODELS = {"c": ClassModel(name="c", W=8.0, alpha=0.0, beta=0.0)}
TARGETS = {"response_rel": 0.10, "execution_rel": 0.05}


def jobs_frames(live: list[tuple[float, float, float]], replay: list[tuple[float, float, float]],
                cell_id: int = 1) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(jobs, predictions) of one cell: each job as (partition, wait, execution)."""
    jobs = pd.DataFrame([{"cell_id": cell_id, "job_id": i, "policy": "RA", "rate": 0.1, "cls": "c", "demand": 1.0,
                          "arrival": float(i), "mean_procs": p, "status": "done", "wait": w, "execution": x,
                          "response": w + x} for i, (p, w, x) in enumerate(live)])
    preds = pd.DataFrame([{"cell_id": cell_id, "job_id": i, "status": "done", "start": float(i) + w, "wait": w,
                           "execution": x, "response": w + x, "mean_procs": p, "max_procs": int(p)}
                          for i, (p, w, x) in enumerate(replay)])
    return jobs, preds


def compared(jobs: pd.DataFrame, preds: pd.DataFrame, *, band: tuple[float, float] = (0.9, 1.1),
             norm: float = math.nan) -> pd.DataFrame:
    """The cell's comparison as reporting.run_stats makes it, with the single replay as the prediction."""
    m_resp, p_resp = jobs.response.mean(), preds.response.mean()
    m_med, p_med = jobs.execution.median(), preds.execution.median()
    return pd.DataFrame([{
        "policy": "RA", "rate": 0.1,
        "measured_response": m_resp, "predicted_response": p_resp, "err_response": (p_resp - m_resp) / m_resp,
        "measured_median_execution": m_med, "predicted_median_execution": p_med,
        "err_median_execution": (p_med - m_med) / m_med,
        "measured_median_execution_norm": norm, "err_median_execution_norm": (p_med - norm) / norm,
        "measured_response_norm": math.nan, "err_response_norm": math.nan,
        "band_response_lo": p_resp * band[0], "band_response_hi": p_resp * band[1],
        "band_median_execution_lo": p_med * band[0], "band_median_execution_hi": p_med * band[1]}])


def one(frame: pd.DataFrame, statistic: str) -> pd.Series:
    rows = frame[frame.statistic == statistic]
    assert len(rows) == 1, frame
    return rows.iloc[0]


def test_a_job_placed_on_fewer_workstations_is_the_schedule():
    # Replay: both jobs on 8 (1 s each). Live: the second got 4, waited 1 s, and ran the model's 2 s.
    jobs, preds = jobs_frames([(8, 0.0, 1.0), (4, 1.0, 2.0)], [(8, 0.0, 1.0), (8, 0.0, 1.0)])
    out = miss_causes.misses(compared(jobs, preds), jobs, preds, MODELS, TARGETS, warmup=0)
    ex = one(out, "median execution")
    # measured median 1.5, replay 1.0, repriced (job 1 at 4: 2.0) 1.5: all of it is the schedule
    assert ex.error == pytest.approx(-1 / 3)
    assert (ex.schedule_part, ex.job_time_part) == (pytest.approx(-1 / 3), pytest.approx(0.0))
    assert (ex.cause, ex.placed_differently, ex.jobs) == ("schedule", 1, 2)
    assert (ex.workstations_live, ex.workstations_replay) == (6.0, 8.0)
    assert ex.first_divergence == "replication 1, job 1: 4 live, 8 replayed"
    resp = one(out, "response")
    # response 2.0 measured, 1.0 replayed; repriced 1.5, and the 0.5 s of extra waiting follows the placement
    assert (resp.schedule_part, resp.job_time_part) == (pytest.approx(-0.5), pytest.approx(0.0))
    assert resp.schedule_part + resp.job_time_part == pytest.approx(resp.error)
    assert resp.cause == "schedule"


def test_jobs_slower_on_the_same_partitions_are_job_time():
    jobs, preds = jobs_frames([(8, 0.0, 1.2), (8, 0.3, 1.2)], [(8, 0.0, 1.0), (8, 0.1, 1.0)])
    out = miss_causes.misses(compared(jobs, preds), jobs, preds, MODELS, TARGETS, warmup=0)
    ex, resp = one(out, "median execution"), one(out, "response")
    assert (ex.cause, ex.placed_differently, ex.first_divergence) == ("job time", 0, "")
    assert (ex.schedule_part, ex.job_time_part) == (pytest.approx(0.0), pytest.approx(1.0 / 1.2 - 1))
    # nothing placed differently, so the waiting behind slower jobs is job time too
    assert resp.schedule_part == pytest.approx(0.0)
    assert resp.job_time_part == pytest.approx(resp.error)
    assert resp.cause == "job time"


def test_inside_the_band_is_chance_and_normalised_within_target_is_host_speed():
    jobs, preds = jobs_frames([(8, 0.0, 1.2), (8, 0.0, 1.2)], [(8, 0.0, 1.0), (8, 0.0, 1.0)])
    wide = compared(jobs, preds, band=(0.7, 1.3))
    assert set(miss_causes.misses(wide, jobs, preds, MODELS, TARGETS, 0).cause) == {"chance"}
    # the meter says they ran 14% slow: at the profile's speed, 1.03 s, outside a narrow band but within 5%
    metered = compared(jobs, preds, band=(0.99, 1.01), norm=1.03)
    ex = one(miss_causes.misses(metered, jobs, preds, MODELS, TARGETS, 0), "median execution")
    assert (ex.cause, bool(ex.in_band)) == ("host speed", False)
    assert ex.error_normalised == pytest.approx(1 / 1.03 - 1)
    # the band judges the normalised figure where there is one: 1.03 lies inside 0.9-1.1
    inside = one(miss_causes.misses(compared(jobs, preds, norm=1.03), jobs, preds, MODELS, TARGETS, 0),
                 "median execution")
    assert (inside.cause, bool(inside.in_band)) == ("chance", True)


def test_met_targets_and_warm_up_are_left_out():
    jobs, preds = jobs_frames([(8, 0.0, 1.01), (8, 0.0, 1.0)], [(8, 0.0, 1.0), (8, 0.0, 1.0)])
    assert miss_causes.misses(compared(jobs, preds), jobs, preds, MODELS, TARGETS, 0).empty
    jobs, preds = jobs_frames([(4, 0.0, 2.0), (8, 0.0, 1.2), (8, 0.0, 1.2)], [(8, 0.0, 1.0)] * 3)
    out = miss_causes.misses(compared(jobs.iloc[1:], preds.iloc[1:]), jobs, preds, MODELS, TARGETS, warmup=1)
    assert set(out.placed_differently) == {0} and set(out.jobs) == {2}


def test_a_class_without_a_model_is_not_repriced():
    jobs, preds = jobs_frames([(8, 0.0, 1.0), (4, 1.0, 2.0)], [(8, 0.0, 1.0), (8, 0.0, 1.0)])
    out = miss_causes.misses(compared(jobs, preds), jobs, preds, {}, TARGETS, warmup=0)
    ex = one(out, "median execution")
    assert (ex.schedule_part, ex.job_time_part, ex.cause) == (pytest.approx(0.0), pytest.approx(-1 / 3), "job time")


def test_a_resized_job_is_priced_at_its_mean_partition_between_whole_sizes():
    # mean partition 6 live against 8 replayed: T between 8/6 (exact W/p) and the line from T(6) to T(7)
    jobs, preds = jobs_frames([(6.5, 0.0, 1.3)], [(8, 0.0, 1.0)])
    row = miss_causes.paired(jobs, preds, MODELS, 0).iloc[0]
    assert row.repriced == pytest.approx((8 / 6 + (8 / 7 - 8 / 6) * 0.5) / 1.0)


def test_counts_and_table_text():
    frame = pd.DataFrame([{**{c: np.nan for c in miss_causes.COLUMNS}, "policy": "RA", "rate": 0.1,
                           "statistic": "response", "cause": cause, "in_band": None, "placed_differently": 0,
                           "jobs": 4, "first_divergence": "", "workstations_live": 8.0,
                           "workstations_replay": 8.0, "error": -0.2}
                          for cause in ("job time", "schedule", "job time")])
    assert miss_causes.counts_text(frame) == "job time 2, schedule 1"
    assert miss_causes.counts_text(frame.iloc[:0]) == ""
    shown = miss_causes.table(frame)
    assert list(shown["in band"]) == ["n/a"] * 3 and list(shown["error"]) == ["-20.0%"] * 3
    assert list(shown["schedule part"]) == ["n/a"] * 3
