"""Time sharing on an arrival stream (experiments/timeshare_stream.py): live replanning at arrivals and ends.

On this host: three local managers as host processes, a large synthetic job from t = 0 and a
short one arriving 1.5 s later; the global manager replans at the arrival and at the short
job's end, and each replan takes over at a round boundary of the tables before it.
"""
from __future__ import annotations

import math

import pytest

from experiments.timeshare_host import HostBackend
from experiments.timeshare_live import LiveSetup
from experiments.timeshare_run import TimeshareRunError
from experiments.timeshare_spec import TimeshareSpec
from experiments.timeshare_stream import StreamRunner
from experiments.timeshare_stream_report import (StreamFilesError, compare_streams_markdown, read_stream_rows,
                                                  record_stream, write_stream_report)
from scheduler.timeshare.tables import Resync, ResyncPlan

ROUND_S = 0.4


def stream_spec(replan: bool = True) -> TimeshareSpec:
    return TimeshareSpec.model_validate({
        "name": "stream", "workstations": ["ws1", "ws2", "ws3"], "round_s": ROUND_S,
        "allocation": {"gamma": 1.0, "short_beta": 0.5, "short_t1_s": 2.0},
        "job": [{"id": "L", "demand_ref_s": 12.0}, {"id": "S", "demand_ref_s": 1.0, "arrival_s": 1.5}],
        "simulate": {"replan": replan, "resync": "loose", "owners": {"ws3": 1}},
        "owner": {"think_s": 0.3, "demand_s": 0.05}})


def test_a_stream_needs_the_manager_to_allocate():
    with pytest.raises(TimeshareRunError, match=r"^simulate.replan: a stream run"):
        StreamRunner(stream_spec(replan=False), HostBackend(), LiveSetup(ResyncPlan(Resync.LOOSE)))


@pytest.mark.host_mpi
def test_a_short_job_arriving_gets_its_beta_at_the_next_boundary_and_leaves_it_to_the_large_one(tmp_path):
    backend = HostBackend(nice=19, client_timeout_s=0.5)
    setup = LiveSetup(ResyncPlan(Resync.LOOSE, 1), lead_s=1.0, timeline_poll_s=0.5, watchdog_poll_s=0.3,
                      policy="dedicated")  # a lead the loaded host of a CI run keeps
    spec = stream_spec()
    run = StreamRunner(spec, backend, setup, phase_ref_s=0.25, job_timeout_s=120.0, owners=spec.live_owners()).run()
    assert not backend._procs and not backend._owners  # every manager and owner stopped
    # an owner on ws3 the whole time: its commands logged, each at least its CPU time long
    assert run.owner_commands and {c.workstation for c in run.owner_commands} == {"ws3"}
    assert all(c.response_s >= c.cpu_s * 0.9 for c in run.owner_commands)

    large, short = run.jobs["L"], run.jobs["S"]
    assert large.hosts == ("ws1", "ws2", "ws3") and large.beta == 1.0
    assert short.hosts == ("ws1", "ws2") and short.beta == 0.5
    assert large.run.result["data_intact"] and short.run.result["data_intact"]
    assert short.admitted_s >= run.started_s + 1.5 and short.response_s > 0
    print(f"L: response {large.response_s:.2f} s; S: arrived +1.5 s, response {short.response_s:.2f} s; "
          f"plans {[(round(t - run.started_s, 2), jobs) for t, jobs in run.plans]}")

    # the plans: L alone, L and S, L alone again once S is done
    assert [jobs for _, jobs in run.plans] == [("L",), ("L", "S"), ("L",)]
    epochs = run.live.epochs
    assert len(epochs) == 3
    first = epochs[0].anchor_s
    for e in epochs[1:]:  # each replan on a boundary of the tables before it
        laps = (e.anchor_s - first) / ROUND_S
        assert laps == pytest.approx(round(laps), abs=1e-6) and laps >= 1
    assert epochs[1].anchor_s >= short.admitted_s and epochs[2].anchor_s >= short.run.done_s - ROUND_S
    assert [s.process for s in epochs[1].tables["ws1"].slots] == ["L", "S"]
    assert [s.process for s in epochs[1].tables["ws3"].slots] == ["L", None]

    # who ran when on ws1: L alone, then L and S by turns, then L alone
    timeline = run.live.timelines["ws1"]
    ran_s = [t for t, job in timeline if job == "S"]
    assert ran_s and min(ran_s) >= epochs[1].anchor_s - 0.05 and max(ran_s) <= epochs[2].anchor_s + 0.05
    assert all(job in ("L", None) for t, job in timeline if t < epochs[1].anchor_s - 0.05)
    assert not math.isnan(large.run.done_s) and large.run.done_s > short.run.done_s

    # the report: every job measured beside the simulator's prediction, redone from its CSVs alone
    written = record_stream(run, spec, tmp_path)
    assert {p.name for p in written} == {"stream.csv", "jobs.csv", "tables.csv", "timeline.csv", "owners.csv",
                                         "report.md", "timeline.png"}
    assert rows_policy(tmp_path) == ("dedicated", "ws3:1")
    rows = read_stream_rows(tmp_path)
    by_job = {j.job: j for j in rows.jobs}
    assert by_job["S"].short and not by_job["L"].short and by_job["S"].workstations == "ws1 ws2"
    assert by_job["S"].response_s == pytest.approx(short.response_s)
    assert by_job["S"].predicted_response_s > 0 and by_job["S"].predicted_p == 2
    assert by_job["S"].error == pytest.approx(short.response_s / by_job["S"].predicted_response_s - 1)
    assert {t.epoch for t in rows.tables} == {0, 1, 2} and rows.run.plans == 3
    md = (tmp_path / "report.md").read_text()
    assert by_job["S"].scheduled_s == pytest.approx(epochs[1].anchor_s - run.started_s)
    assert by_job["S"].predicted_start_s >= 1.5
    assert "| S | yes | 1.5 |" in md and "Mean response of the 1 short jobs" in md
    assert "## Owners' response" in md and "| ws3 | " in md
    (tmp_path / "report.md").unlink()
    write_stream_report(tmp_path)
    assert (tmp_path / "report.md").read_text() == md
    side = compare_streams_markdown([("a", rows, None), ("b", rows, None)])
    assert side.count(f"| {by_job['S'].response_s:.1f} ({by_job['S'].predicted_response_s:.1f}) |") == 2


def rows_policy(run_dir) -> tuple[str, str]:
    r = read_stream_rows(run_dir).run
    return r.policy, r.owners


def test_a_damaged_stream_directory_is_one_line_naming_the_file(tmp_path):
    with pytest.raises(StreamFilesError, match=r"stream.csv: missing"):
        read_stream_rows(tmp_path)
    (tmp_path / "stream.csv").write_text("spec,resync\nx,loose\n")
    with pytest.raises(StreamFilesError, match=r"^stream.csv: columns \['spec', 'resync'\], expected"):
        read_stream_rows(tmp_path)
