"""The live runs' bookkeeping: minima over a set as selection takes them, and the runs CSV that
`nowlab select fit` reads, round-tripped from a planned training set."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from experiments.models.sv_model import SvModel
from experiments.models.sv_store import RUN_COLUMNS, load_model, read_runs
from experiments.studies.sanjay_vadhiyar.live_records import (Minima, TrainingRecord, clamped, cluster_order, during,
                                                              measured_job,
                                                              failed_path, finished_runs, subset_minima,
                                                              training_frames, append_training)
from experiments.studies.sanjay_vadhiyar.load_draws import LoadDraw, plan_training
from nowlab.cli import app
from testbed.load.monitor import Availability

WS = [f"ws{i}" for i in range(1, 9)]
CAPACITY = 100_000_000
TRUTH = SvModel(application="cg", problem_size_range=(1000, 4000), f_comp="N^2", f_comm="N", f_cpu="x", f_bw="x",
                f_pcomp="P", f_pcomm="P/log P", a_comp_s=2e-6, a_comm_s=2e-5)


def availability_under(draw: LoadDraw) -> Availability:
    """What a perfect monitor would read under `draw`: the caps' fractions and each link's share left."""
    cpu = {w: 1.0 for w in WS}
    cpu.update({c.workstation: c.avail_cpu for c in draw.cpu})
    bw = {(a, b): float(CAPACITY) for a in WS for b in WS if a != b}
    bw.update({(link.src, link.dst): CAPACITY - link.traffic_bit_s for link in draw.links})
    return Availability(cpu, bw, min(cpu.values()), min(bw.values()))


def test_minima_over_a_set_are_the_slowest_machine_and_link_inside_it():
    avail = availability_under(LoadDraw())
    cpu = dict(avail.avg_avail_cpu, ws2=0.3, ws5=0.1)
    bw = dict(avail.avg_avail_bw)
    bw[("ws3", "ws4")] = 2e7  # one direction is enough: a link is its lower direction
    bw[("ws1", "ws6")] = 1e7
    avail = Availability(cpu, bw, 0.1, 1e7)
    assert subset_minima(avail, WS, ["ws2", "ws3", "ws4"]) == Minima(0.3, 2e7)
    assert subset_minima(avail, WS, ["ws1", "ws3", "ws7"]) == Minima(1.0, 1e8)  # ws1-ws6 is outside the set
    alone = subset_minima(avail, WS, ["ws6"])  # one machine: the mean of its links, as Figs. 1 and 3 rank it
    assert alone.min_avail_cpu == 1.0 and alone.min_avail_bw_bit_s == pytest.approx((6 * 1e8 + 1e7) / 7)
    with pytest.raises(ValueError, match="workstations: ws9 is not in the cluster"):
        subset_minima(avail, WS, ["ws9"])
    with pytest.raises(ValueError, match="availability: no AvgAvailBW for link ws1-ws2"):
        subset_minima(Availability(cpu, {}, 0.1, math.nan), WS, ["ws1", "ws2"])


def test_hosts_go_to_mpiexec_in_the_clusters_order():
    cluster = [f"ws{i}" for i in range(1, 17)]
    assert cluster_order(cluster, ("ws1", "ws10", "ws2")) == ("ws1", "ws2", "ws10")  # as selection sorts: text
    with pytest.raises(ValueError, match="workstations: ws17 is not in the cluster"):
        cluster_order(cluster, ["ws17"])


def test_clamped_keeps_the_monitor_inside_eq1s_domain():
    raw = Availability({"a": 1.03, "b": 0.0}, {("a", "b"): 0.0}, 0.0, 0.0)
    fixed = clamped(raw)
    assert fixed.avg_avail_cpu["a"] == 1.0 and 0 < fixed.avg_avail_cpu["b"] < 0.01
    assert fixed.avg_avail_bw[("a", "b")] > 0 and fixed.min_avg_avail_cpu == fixed.avg_avail_cpu["b"]


def training_records() -> list[TrainingRecord]:
    rng = np.random.default_rng(5)
    records = []
    for run in plan_training(WS, [1000, 2000, 3000, 4000], 9, seed=11, link_rate=lambda _a, _b: CAPACITY):
        m = subset_minima(availability_under(run.load), WS, run.workstations)
        t = TRUTH.predict_s(run.problem_size, len(run.workstations), m.min_avail_cpu, m.min_avail_bw_bit_s)
        outcome = measured_job("cg", len(run.workstations), "done", compute_s=t * rng.normal(1, 0.01), wall_s=t + 3.0,
                               during=Minima(m.min_avail_cpu, 0.5 * m.min_avail_bw_bit_s))
        records.append(TrainingRecord(run.index, "cg", run.problem_size, run.workstations, run.load.describe(), m, outcome))
    records.append(TrainingRecord(99, "cg", 2000, ("ws1", "ws2"), "-", Minima(1, 1e8),
                                  measured_job("cg", 2, "timeout", error="run still going after 1800 s")))
    return records


def test_the_runs_csv_round_trips_through_select_fit(tmp_path):
    records = training_records()
    out = tmp_path / "runs.csv"
    assert finished_runs(out, "before") == set()
    written = {append_training(r, "before", out) for r in records}
    failed = failed_path(out)
    assert written == {out, failed}
    assert finished_runs(out, "before") == {r.run for r in records[:-1]}  # what --resume skips
    table = pd.read_csv(out)
    assert tuple(table.columns[:len(RUN_COLUMNS)]) == RUN_COLUMNS
    assert len(table) == 36 and pd.read_csv(failed).status.tolist() == ["timeout"]
    runs = read_runs(out)
    assert [r.procs for r in runs] == [len(r.workstations) for r in records[:-1]]
    assert runs[0].min_avail_bw_bit_s == records[0].before.min_avail_bw_bit_s
    fitted = CliRunner().invoke(app, ["select", "fit", str(out), "--application", "cg", "--out", str(tmp_path / "m.json")])
    assert fitted.exit_code == 0, fitted.output
    model = load_model(tmp_path / "m.json", "cg")
    assert (model.f_comp, model.f_cpu, model.f_pcomp) == ("N^2", "x", "P")
    assert model.mape < 0.03 and model.runs == 36


def test_the_window_chooses_which_availability_the_model_columns_carry():
    records = training_records()[:3]
    before, _ = training_frames(records, "before")
    in_run, _ = training_frames(records, "run")
    assert before.min_avail_bw_bit_s.tolist() == [r.before.min_avail_bw_bit_s for r in records]
    assert in_run.min_avail_bw_bit_s.tolist() == [during(r.outcome).min_avail_bw_bit_s for r in records]
    assert in_run.before_min_avail_bw_bit_s.tolist() == before.min_avail_bw_bit_s.tolist()
    with pytest.raises(ValueError, match="--window: 'after' is not one of before, run"):
        training_frames(records, "after")  # type: ignore[arg-type]


def test_resuming_with_another_window_or_a_foreign_file_is_refused(tmp_path):
    out = tmp_path / "runs.csv"
    append_training(training_records()[0], "before", out)
    with pytest.raises(ValueError, match="--window: runs.csv was measured with --window before, not run"):
        finished_runs(out, "run")
    (tmp_path / "other.csv").write_text("problem_size,procs\n1,2\n")
    with pytest.raises(ValueError, match="--out: other.csv was not written by `nowlab select train`"):
        finished_runs(tmp_path / "other.csv", "before")
