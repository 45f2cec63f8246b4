"""Time sharing on an arrival stream (experiments/studies/zhou_brent/stream.py): live replanning at arrivals and ends.

On this host: three local managers as host processes, a large synthetic job from t = 0 and a
short one arriving 1.5 s later; the global manager replans at the arrival and at the short
job's end, and each replan takes over at a round boundary of the tables before it.
"""
from __future__ import annotations

import math

import pytest

from experiments.studies.zhou_brent.host import HostBackend
from experiments.studies.zhou_brent.global_manager import LiveSetup
from experiments.studies.zhou_brent.live import TimeshareRunError
from experiments.studies.zhou_brent.spec import TimeshareSpec
from experiments.studies.zhou_brent.stream import StreamRunner
from experiments.studies.zhou_brent.stream_report import (StreamFilesError, compare_streams_markdown, error, read_stream_rows,
                                                  record_stream, write_stream_report)
from scheduler.timeshare.tables import Resync, ResyncPlan

ROUND_S = 0.4


def stream_spec(replan: bool = True) -> TimeshareSpec:
    return TimeshareSpec.model_validate({
        "name": "stream", "workstations": ["ws1", "ws2", "ws3"], "round_s": ROUND_S,
        "allocation": {"gamma": 1.0, "short_beta": 0.5, "short_t1_s": 2.0},
        "job": [{"id": "L", "demand_ref_s": 20.0}, {"id": "S", "demand_ref_s": 1.0, "arrival_s": 1.5}],
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

    large, short = run.jobs["L"].extra, run.jobs["S"].extra
    assert large.hosts == ("ws1", "ws2", "ws3") and large.beta == 1.0
    assert short.hosts == ("ws1", "ws2") and short.beta == 0.5
    assert run.runs["L"].result["data_intact"] and run.runs["S"].result["data_intact"]
    assert short.admitted_s >= run.started_s + 1.5 and run.response_s("S") > 0
    print(f"L: response {run.response_s('L'):.2f} s; S: arrived +1.5 s, response {run.response_s('S'):.2f} s; "
          f"plans {[(round(t - run.started_s, 2), jobs) for t, jobs in run.plans]}")

    # the plans: L alone, L and S, L alone again once S is done
    assert [jobs for _, jobs in run.plans] == [("L",), ("L", "S"), ("L",)]
    epochs = run.live.epochs
    assert len(epochs) == 3
    first = epochs[0].anchor_s
    for e in epochs[1:]:  # each replan on a boundary of the tables before it
        laps = (e.anchor_s - first) / ROUND_S
        assert laps == pytest.approx(round(laps), abs=1e-6) and laps >= 1
    assert epochs[1].anchor_s >= short.admitted_s and epochs[2].anchor_s >= run.runs["S"].done_s - ROUND_S
    assert [s.process for s in epochs[1].tables["ws1"].slots] == ["L", "S"]
    assert [s.process for s in epochs[1].tables["ws3"].slots] == ["L", None]

    # who ran when on ws1: L alone, then L and S by turns, then L alone
    timeline = run.live.timelines["ws1"]
    ran_s = [t for t, job in timeline if job == "S"]
    assert ran_s and min(ran_s) >= epochs[1].anchor_s - 0.05 and max(ran_s) <= epochs[2].anchor_s + 0.05
    assert all(job in ("L", None) for t, job in timeline if t < epochs[1].anchor_s - 0.05)
    assert not math.isnan(run.runs["L"].done_s) and run.runs["L"].done_s > run.runs["S"].done_s

    # the report: every job measured beside the simulator's prediction, redone from its CSVs alone
    written = record_stream(run, spec, tmp_path)
    assert {p.name for p in written} == {"stream.csv", "jobs.csv", "tables.csv", "timeline.csv", "owners.csv",
                                         "report.md", "timeline.png"}
    assert rows_policy(tmp_path) == ("dedicated", "ws3:1")
    rows = read_stream_rows(tmp_path)
    by_job = {j.id: j for j in rows.jobs}
    short, large = by_job["S"].extra, by_job["L"].extra
    assert short.short and not large.short and short.workstations == "ws1 ws2"
    assert by_job["S"].response_s == pytest.approx(run.response_s("S"))
    assert short.predicted_response_s > 0 and short.predicted_p == 2 and by_job["S"].max_procs == 2
    assert error(by_job["S"]) == pytest.approx(run.response_s("S") / short.predicted_response_s - 1)
    assert {t.epoch for t in rows.tables} == {0, 1, 2} and rows.run.plans == 3
    md = (tmp_path / "report.md").read_text()
    assert by_job["S"].start_s == pytest.approx(epochs[1].anchor_s - run.started_s)  # scheduled: its tables took over
    assert short.predicted_start_s >= 1.5
    assert "| S | yes | 1.5 |" in md and "Mean response of the 1 short jobs" in md
    assert "## Owners' response" in md and "| ws3 | " in md
    (tmp_path / "report.md").unlink()
    write_stream_report(tmp_path)
    assert (tmp_path / "report.md").read_text() == md
    side = compare_streams_markdown([("a", rows, None), ("b", rows, None)])
    assert side.count(f"| {by_job['S'].response_s:.1f} ({short.predicted_response_s:.1f}) |") == 2


def rows_policy(run_dir) -> tuple[str, str]:
    r = read_stream_rows(run_dir).run
    return r.policy, r.owners


def test_a_damaged_stream_directory_is_one_line_naming_the_file(tmp_path):
    with pytest.raises(StreamFilesError, match=r"stream.csv: missing"):
        read_stream_rows(tmp_path)
    (tmp_path / "stream.csv").write_text("spec,resync\nx,loose\n")
    with pytest.raises(StreamFilesError, match=r"^stream.csv: columns \['spec', 'resync'\], expected"):
        read_stream_rows(tmp_path)


def recorded_rows(spec: TimeshareSpec, t0_epoch: float = math.nan):
    """A run's rows as if measured 10% slower than the simulator at the spec's speed, with no meter noted."""
    from experiments.studies.zhou_brent.stream_report import StreamRow, StreamRows, StreamShare, predict, stream_job
    from scheduler.timeshare.simulate import LocalPolicy

    pred = predict(spec, LocalPolicy.PROPER_SHARE, ResyncPlan(Resync.LOOSE, 1), {"ws3": 1})
    jobs = tuple(stream_job(j, r.cls, r.arrival_s, r.start_s, r.arrival_s + r.response_s * 1.1, r.max_procs,
                            StreamShare(j == "S", r.arrival_s, "ws1", 0.5, r.start_s, r.max_procs, r.response_s))
                 for j, r in pred.items())
    run = StreamRow(spec.name, "loose", 1, ROUND_S, "proper-share", "ws3:1", 20.0, 3, 0, t0_epoch=t0_epoch)
    return StreamRows(run, jobs, (), ())


def test_predictions_at_the_metered_speed_and_runs_written_before_it(tmp_path):
    """A stream run predicted again at the speed its jobs' kernel was delivered (the keeper's
    meter), and a run directory written before those columns existed read as unmetered."""
    from experiments.studies.zhou_brent.stream_report import (jobs_kernel, metered_error, remeter_stream, with_metered,
                                                     write_stream_rows)

    spec = stream_spec()
    assert jobs_kernel(spec) == "multiply"
    rows = recorded_rows(spec)
    half = with_metered(rows, spec, spec.speed_ref_cores / 2, "multiply")
    for before, after in zip(rows.jobs, half.jobs):  # half the speed: the work takes twice as long, the rest not
        assert before.extra.predicted_response_s < after.extra.metered_response_s < 2.05 * before.extra.predicted_response_s
        assert metered_error(after) == pytest.approx(after.response_s / after.extra.metered_response_s - 1)
    assert half.run.metered_speed == spec.speed_ref_cores / 2 and half.run.kernel == "multiply"

    # an old directory: no t0_epoch, kernel, metered_* columns
    write_stream_rows(tmp_path, rows)
    for name, cols in (("stream.csv", ["t0_epoch", "kernel", "metered_speed"]),
                       ("jobs.csv", ["metered_response_s", "metered_error"])):
        import pandas as pd
        pd.read_csv(tmp_path / name).drop(columns=cols).to_csv(tmp_path / name, index=False)
    old = read_stream_rows(tmp_path)
    assert math.isnan(old.run.metered_speed) and old.run.kernel == "" and math.isnan(metered_error(old.jobs[0]))

    # the keeper's CSVs: multiply delivered at 0.5 of the spec's speed (quota 0.5, factor 1.0 for it)
    meter = tmp_path / "meter"
    meter.mkdir()
    (meter / "meter.csv").write_text("t,core,kernel,factor,cpu_s\n" + "".join(
        f"{t}.0,0,multiply,1.0,0.01\n{t}.5,0,matvec,3.0,0.01\n" for t in range(100, 130)))
    (meter / "quotas.csv").write_text("t,workstation,core,quota_cores,factor,target,scale,stale\n" + "".join(
        f"{t}.0,{w},0,0.5,2.0,1.0,1.0,0\n" for t in range(100, 130) for w in spec.workstations))
    remeter_stream(tmp_path, spec, meter)
    got = read_stream_rows(tmp_path)
    assert got.run.metered_speed == pytest.approx(0.5) and got.run.kernel == "multiply"
    assert [j.extra.metered_response_s for j in got.jobs] == pytest.approx(
        [j.extra.metered_response_s for j in half.jobs])
    write_stream_report(tmp_path)
    md = (tmp_path / "report.md").read_text()
    assert "delivered at 0.500 reference cores over the cluster's whole meter record" in md
    assert "at metered speed s" in md
    j = got.jobs[0]
    side = compare_streams_markdown([("a", got, None)])
    assert f"| {j.response_s:.1f} ({j.extra.predicted_response_s:.1f} / {j.extra.metered_response_s:.1f}) |" in side
    with pytest.raises(ValueError, match="^--spec: 'other'"):
        remeter_stream(tmp_path, spec.model_copy(update={"name": "other"}), meter)


def test_the_keepers_record_over_the_run_is_kept_beside_it(tmp_path):
    from experiments.studies.zhou_brent.stream_report import keep_meter, metered_speed

    src = tmp_path / "cluster"
    src.mkdir()
    (src / "meter.csv").write_text("t,core,kernel,factor,cpu_s\n" + "".join(
        f"{t}.0,0,multiply,{1.0 if t < 120 else 2.0},0.01\n" for t in range(100, 140)))
    (src / "quotas.csv").write_text("t,workstation,core,quota_cores,factor,target,scale,stale\n"
                                    "90.0,ws1,0,0.25,1.0,0.3,1.0,0\n125.0,ws1,0,0.3,1.0,0.3,1.0,0\n")
    out = tmp_path / "run"
    kept = keep_meter(src, out, 110.0, 119.0)
    assert [p.name for p in kept] == ["meter.csv", "quotas.csv"]
    assert len((out / "meter.csv").read_text().splitlines()) == 1 + 10
    assert (out / "quotas.csv").read_text().splitlines()[1].startswith("90.000,ws1")  # in force at t0
    assert metered_speed(out, ["ws1"], 110.0, 119.0, "multiply") == pytest.approx(0.25)


def test_the_committed_stream_reports_render_again_from_their_csvs(tmp_path):
    """Each committed stream run's report.md is what its CSVs render to now (figure aside), and its
    jobs.csv reads back to the same jobs' records and writes back byte for byte."""
    from pathlib import Path

    from experiments.studies.zhou_brent.owners import owners_markdown, read_owner_commands
    from experiments.studies.zhou_brent.stream_report import render_stream_markdown, write_stream_rows

    root = Path(__file__).resolve().parents[3] / "experiments" / "results" / "zhou-brent" / "stream"
    runs = sorted(p.parent for p in root.glob("*/stream.csv"))
    assert len(runs) >= 4
    for d in runs:
        rows = read_stream_rows(d)
        md = render_stream_markdown(rows) + "\n" + "\n".join(owners_markdown(read_owner_commands(d), rows.run.policy))
        assert md == (d / "report.md").read_text(), d.name
        write_stream_rows(tmp_path / d.name, rows)
        assert (tmp_path / d.name / "jobs.csv").read_bytes() == (d / "jobs.csv").read_bytes(), d.name
