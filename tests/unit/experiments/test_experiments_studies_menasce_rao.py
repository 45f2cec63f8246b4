"""Menascé & Rao's Tables 2 and 3: rows, the paper's numbers, and the report's arithmetic."""
from __future__ import annotations

import csv

import pytest

from experiments.studies.menasce_rao.paper import PAPER, TIME_SCALE
from experiments.studies.menasce_rao.report import write
from experiments.studies.menasce_rao.tables import Row, RowResult, rows, scaled_owners


def test_rows_cover_both_tables_and_every_class_size():
    all_rows = rows([2, 3])
    assert len(all_rows) == 18 and all((r.table, r.kind, r.n) in PAPER for r in all_rows)
    with pytest.raises(ValueError, match="^tables: 4 is not one of the paper's validation tables"):
        rows([4])


def test_rows_can_be_limited_to_named_classes_and_an_unknown_class_is_named():
    lx = rows([3], ["LX"])
    assert [(r.table, r.kind, r.n) for r in lx] == [(3, "LX", 1), (3, "LX", 2), (3, "LX", 3)]
    with pytest.raises(ValueError, match="^classes: unknown class 'SPARC10' \\(known: LX, SPARC5, SPARC20\\)"):
        rows([3], ["LX", "SPARC10"])


def test_table3_owners_are_the_papers_scaled_in_time():
    o = scaled_owners()
    assert (o.n, o.z, o.d) == (2, pytest.approx(5.0 * TIME_SCALE), pytest.approx(1.0 * TIME_SCALE))


def test_the_report_gives_each_rows_error_and_the_verdict(tmp_path):
    # measured medians 60 and 40 s, TGS 61.2 (+2%) and 36 (-10%): median |error| 6%, largest 10%
    results = [RowResult(Row(2, "LX", 1), ("lx1",), (59.0, 60.0, 64.0), 61.2, None, None),
               RowResult(Row(2, "LX", 2), ("lx1", "lx2"), (40.0, 39.0, 41.0), 36.0, None, None)]
    assert [r.error for r in results] == [pytest.approx(0.02), pytest.approx(-0.10)]
    md = write(results, tmp_path, "nowlab taskgraph tables --tables 2").read_text()
    assert "| LX | 1 | 60.00 (59.00-64.00) | 61.20 | +2.0% | n/a | n/a | n/a | n/a | n/a | 300.6 | 309.3 | 2.9% |" in md
    assert "median 6.0%, largest 10.0%" in md and "NOT met" in md
    assert "metered kernel speeds: median" not in md  # none metered: no second verdict
    assert "`nowlab taskgraph tables --tables 2`" in md
    with (tmp_path / "tables.csv").open() as f:
        got = list(csv.DictReader(f))
    assert [(g["class"], g["n"], g["measured_median_s"], g["error"]) for g in got] == \
        [("LX", "1", "60.000", "0.0200"), ("LX", "2", "40.000", "-0.1000")]
    assert (tmp_path / "tables.png").stat().st_size > 10_000


def test_the_report_gives_the_metered_kernel_prediction_and_its_verdict(tmp_path):
    # spec speeds predict 10% low; the multiply kernel's metered speeds bring it to -2% and +3%
    results = [RowResult(Row(2, "LX", 1), ("lx1",), (60.0,), 54.0, None, None, 58.8),
               RowResult(Row(2, "LX", 2), ("lx1", "lx2"), (40.0,), 36.0, None, None, 41.2)]
    assert [r.metered_error for r in results] == [pytest.approx(-0.02), pytest.approx(0.03)]
    md = write(results, tmp_path, "cmd").read_text()
    assert "| 54.00 | -10.0% | 58.80 | -2.0% |" in md
    assert "NOT met). With the metered kernel speeds: median 2.5%, largest 3.0% (met)." in md
    with (tmp_path / "tables.csv").open() as f:
        got = list(csv.DictReader(f))
    assert [g["metered_error"] for g in got] == ["-0.0200", "0.0300"]


def test_metered_speeds_replace_the_spec_speeds_and_change_the_prediction():
    from experiments.models.tgs import Network, tgs
    from experiments.studies.menasce_rao.tables import POLICY, with_speeds
    from experiments.studies.menasce_rao.files import load_graph
    from scheduler.taskgraph.placement import get_policy
    from scheduler.taskgraph.workstations import Workstation

    ws = [Workstation(name="lx1", speed=0.1)]
    slower = with_speeds(ws, {"lx1": 0.08})
    assert slower[0].speed_ref_cores == 0.08 and ws[0].speed_ref_cores == 0.1
    graph, policy, net = load_graph("wavefront"), get_policy(POLICY), Network(bandwidth_bit_s=10_000_000)
    assert tgs(graph, slower, policy, net).makespan_s > 1.2 * tgs(graph, ws, policy, net).makespan_s


def test_the_report_gives_the_task_profiled_prediction_and_its_verdict(tmp_path):
    # spec speeds 10% low, metered +8% and +15%, the task profile +1% and -4%: three columns, three verdicts
    results = [RowResult(Row(2, "LX", 1), ("lx1",), (60.0,), 54.0, None, None, 64.8, 60.6),
               RowResult(Row(2, "LX", 2), ("lx1", "lx2"), (40.0,), 36.0, None, None, 46.0, 38.4)]
    assert [r.profiled_error for r in results] == [pytest.approx(0.01), pytest.approx(-0.04)]
    md = write(results, tmp_path, "cmd").read_text()
    assert "| 54.00 | -10.0% | 64.80 | +8.0% | 60.60 | +1.0% |" in md
    assert ("With the metered kernel speeds: median 11.5%, largest 15.0% (NOT met). "
            "With the task-profiled speeds: median 2.5%, largest 4.0% (met).") in md
    with (tmp_path / "tables.csv").open() as f:
        got = list(csv.DictReader(f))
    assert [g["profiled_error"] for g in got] == ["0.0100", "-0.0400"]
    # a row without a profile leaves the column empty and the verdict out
    bare = write(results[:1] + [RowResult(Row(2, "LX", 2), ("lx1", "lx2"), (40.0,), 36.0, None, None)], tmp_path,
                 "cmd").read_text()
    assert "task-profiled speeds: median" not in bare and "| n/a | n/a |" in bare


def test_profile_speeds_refuses_no_runs():
    from experiments.studies.menasce_rao.tables import profile_speeds
    with pytest.raises(ValueError, match="task profile reps: at least 1"):
        profile_speeds(None, 0)


def test_every_task_of_every_rep_is_written_beside_its_prediction(tmp_path):
    from experiments.models.tgs import TaskTiming
    from experiments.studies.menasce_rao.live import TaskPlace, task_run

    runs = (task_run("T1", "g", 0.0, 7.5, TaskPlace("lx1", 7.6)), task_run("T2", "g", 7.6, 15.2, TaskPlace("lx1", 15.3)))
    predicted = (TaskTiming("T1", "lx1", 0.0, 6.8, 1), TaskTiming("T2", "lx1", 6.8, 13.6, 1))
    result = RowResult(Row(2, "LX", 1), ("lx1",), (15.2, 15.0), 13.6, None, None, None, 15.0,
                       (runs, runs), predicted)
    write([result], tmp_path, "cmd")
    with (tmp_path / "task_runs.csv").open() as f:
        got = list(csv.DictReader(f))
    assert [(g["rep"], g["task"], g["done_s"], g["predicted_finish_s"], g["predicted_guests"]) for g in got] == [
        ("0", "T1", "7.500", "6.800", "1"), ("0", "T2", "15.200", "13.600", "1"),
        ("1", "T1", "7.500", "6.800", "1"), ("1", "T2", "15.200", "13.600", "1")]


def test_owner_shares_are_taken_of_the_nominal_cap_and_of_the_quota_the_governor_wrote():
    from experiments.studies.menasce_rao.owner_use import OwnerUse, mean_of_quota
    from experiments.studies.menasce_rao.tables import owner_shares

    # nominal cap 0.13 core (the factor at `up`); the governor wrote 0.2 and 0.16 core to sp20a, 0.2 to sp20b
    uses = [OwnerUse("sp20a", 1.8, 30.0, 0.13, 0.2), OwnerUse("sp20a", 1.2, 30.0, 0.13, 0.16),
            OwnerUse("sp20b", 1.5, 30.0, 0.13, 0.2)]
    nominal, of_quota = owner_shares(uses)
    assert nominal == pytest.approx((1.8 + 1.2 + 1.5) / 3 / 30 / 0.13)
    assert of_quota == {"sp20a": pytest.approx((0.3 + 0.25) / 2), "sp20b": pytest.approx(0.25)}
    assert mean_of_quota(uses) == pytest.approx((0.3 + 0.25 + 0.25) / 3)
    # a workstation with no quota record leaves the share of the quota unknown, not guessed
    unrecorded = [*uses, OwnerUse("lx1", 1.0, 30.0, 0.05)]
    assert owner_shares(unrecorded)[1] is None and mean_of_quota(unrecorded) is None


def test_the_owners_share_of_the_quota_is_read_from_the_meters_record(tmp_path, monkeypatch):
    from types import SimpleNamespace

    from experiments.studies.menasce_rao import owner_use
    from testbed import meter, state

    monkeypatch.setenv("NOWLAB_HOME", str(tmp_path))
    folder = state.cluster_dir("mr")
    folder.mkdir(parents=True)
    # 0.25 core for the first half of the run, 0.15 for the second: a mean of 0.2
    meter.append_quotas(folder / meter.QUOTAS_CSV, [meter.QuotaRow(900.0, "sp20b", 1, 0.25, 1.1, 0.265, 1.0, False),
                                                    meter.QuotaRow(1050.0, "sp20b", 1, 0.15, 1.8, 0.265, 1.0, False)])
    cluster = SimpleNamespace(name="mr", spec=SimpleNamespace(nominal_cpu=lambda _n: 0.13))
    [use] = owner_use.between(cluster, owner_use.Snapshot(1000.0, {"sp20b": 0}),
                              owner_use.Snapshot(1100.0, {"sp20b": 4_000_000_000}))
    assert (use.quota_cores, use.of_quota) == (pytest.approx(0.2), pytest.approx(0.2))
    assert use.utilisation == pytest.approx(4.0 / 100 / 0.13)


def test_the_report_gives_the_owners_measured_use_and_the_prediction_at_it(tmp_path):
    owned = RowResult(Row(3, "SPARC20", 2), ("sp20a", "sp20b"), (30.0, 32.0, 31.0), 23.0, 24.0, 0.3, None, 27.0,
                      owner_u_nominal=0.41, owner_u_quota=0.38, tgs_owner_u_s=29.76)
    assert owned.owner_u_error == pytest.approx(-0.04)
    md = write([owned], tmp_path, "cmd").read_text()
    assert "| SPARC20 | 2 | 0.324 | 0.410 | 0.380 | 29.76 | -4.0% |" in md
    assert "With the task-profiled speeds and the owners' measured U: median 4.0%, largest 4.0% (met)." in md
    with (tmp_path / "tables.csv").open() as f:
        got = next(csv.DictReader(f))
    assert (got["owner_u_model"], got["owner_u_quota"], got["owner_u_error"]) == ("0.3243", "0.3800", "-0.0400")
    # Table 2 has no owners: no such table, empty columns
    bare = write([RowResult(Row(2, "LX", 1), ("lx1",), (60.0,), 54.0, None, None)], tmp_path, "cmd").read_text()
    assert "U, of the quota" not in bare
