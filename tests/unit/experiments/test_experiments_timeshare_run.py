"""The time-sharing runner and its report (experiments/studies/zhou_brent/live.py, measure.py, report.py).

Pure parts first (the resync option, the programs, bad input, the CSV round trip); then the
whole path on this host: three local managers as host processes, two CG jobs of three ranks on
the host's Open MPI, dedicated runs for S_d, the time-shared run under loose gang scheduling,
and the report, whose numbers are checked against the timelines it wrote. Why coscheduling
matters: the wait knob in the argv, and the OS-alone arm (no managers) measured, reported and run.
"""
from __future__ import annotations

import csv
import math
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from experiments.studies.zhou_brent.cluster import manager_argv as cluster_manager_argv
from experiments.studies.zhou_brent.cluster import parent_pid
from experiments.studies.zhou_brent.files import RunFilesError, read_rows, write_rows
from experiments.studies.zhou_brent.host import HostBackend
from experiments.studies.zhou_brent.global_manager import LiveSetup
from experiments.studies.zhou_brent.measure import IntervalRow, RunRows
from experiments.studies.zhou_brent.report import SPEEDUP_TOLERANCE, record_run, render_markdown
from experiments.studies.zhou_brent.live import (JobProgram, JobRun, OsAlone, TimeshareRun, TimeshareRunError, TimeshareRunner,
                                       job_argv, parse_resync, parse_variant, programs, same_answer, wait_of)
from experiments.studies.zhou_brent.spec import TimeshareSpec, load_timeshare_spec
from experiments.studies.zhou_brent.timeline import shares, whole_rounds
from scheduler.timeshare.tables import Resync, ResyncPlan

ROOT = Path(__file__).resolve().parents[3]
FIG3 = ROOT / "experiments" / "studies" / "zhou_brent" / "configs" / "zhou-brent-fig3.toml"
WORKSTATIONS = ("ws1", "ws2", "ws3")
ROUND_S = 0.4


def two_job_spec() -> TimeshareSpec:
    return TimeshareSpec.model_validate({
        "name": "two-cg", "workstations": list(WORKSTATIONS), "round_s": ROUND_S,
        "job": [{"id": "A", "workstations": list(WORKSTATIONS), "beta": 0.5, "demand_ref_s": 2.0},
                {"id": "B", "workstations": list(WORKSTATIONS), "beta": 0.5, "demand_ref_s": 2.0}],
        "simulate": {"resync": "loose", "every_rounds": 2}})


def cg(job: str, n: int, iterations: int, ckpt: Path) -> JobProgram:
    return JobProgram(job, WORKSTATIONS, 0.5, ("python3", "-m", "workloads.cg", "--n", str(n), "--iterations",
                                               str(iterations), "--print-x", "--ckpt-root", str(ckpt)))


# --- pure ------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, plan", [("strict", ResyncPlan(Resync.STRICT)), ("none", ResyncPlan(Resync.NONE)),
                                        ("loose", ResyncPlan(Resync.LOOSE, 1)), ("Loose:3", ResyncPlan(Resync.LOOSE, 3))])
def test_the_resync_option_names_a_plan(text, plan):
    assert parse_resync(text) == plan


@pytest.mark.parametrize("text, message", [("gang", r"^resync: unknown 'gang'"), ("strict:2", r"^resync: only loose"),
                                           ("loose:0", r"^resync: K in loose:K"), ("loose:x", r"^resync: K in loose:K")])
def test_a_bad_resync_option_is_one_line(text, message):
    with pytest.raises(TimeshareRunError, match=message):
        parse_resync(text)


def test_programs_carry_each_jobs_demand_hosts_and_beta():
    spec = load_timeshare_spec(FIG3)
    by_job = {p.job: p for p in programs(spec, phase_ref_s=0.5)}
    assert set(by_job) == {"J1", "J2", "J3", "J4", "J5", "J6"}
    j6 = by_job["J6"]
    assert j6.hosts == ("ws1", "ws2", "ws3", "ws4") and j6.beta == 0.3
    phases = int(j6.argv[j6.argv.index("--phases") + 1])
    work = float(j6.argv[j6.argv.index("--work") + 1])
    assert phases == 320 and phases * work == pytest.approx(160.0)
    assert j6.argv_on(("ws1",), "J6-d")[-4:] == ["--job", "J6-d", "--hosts", "ws1"]
    with pytest.raises(TimeshareRunError, match=r"^phase_ref_s: must be > 0"):
        programs(spec, phase_ref_s=0.0)


def test_a_cg_job_of_the_spec_runs_cg_of_its_size_and_prints_its_answer(tmp_path):
    spec_file = tmp_path / "cg.toml"
    spec_file.write_text('workstations = ["ws1", "ws2"]\nround_s = 4.0\n'
                         '[[job]]\nid = "C"\nworkstations = ["ws1", "ws2"]\nbeta = 0.5\ndemand_ref_s = 3.0\n'
                         'workload = "cg"\ncg = { n = 400, iterations = 50 }\n'
                         '[[job]]\nid = "S"\nworkstations = ["ws1", "ws2"]\nbeta = 0.5\ndemand_ref_s = 3.0\n')
    by_job = {p.job: p for p in programs(load_timeshare_spec(spec_file), phase_ref_s=0.5)}
    assert by_job["C"].argv == ("python3", "-m", "workloads.cg", "--n", "400", "--iterations", "50", "--print-x")
    assert by_job["S"].argv[:3] == ("python3", "-m", "workloads.synthetic") and by_job["S"].beta == 0.5


def test_programs_that_do_not_match_the_tables_are_one_line_naming_the_job(tmp_path):
    spec = two_job_spec()
    setup = LiveSetup(ResyncPlan(Resync.LOOSE))
    a = cg("A", 40, 5, tmp_path)
    with pytest.raises(TimeshareRunError, match=r"^programs: no program for job B$"):
        TimeshareRunner(spec, (a,), HostBackend(), setup)
    with pytest.raises(TimeshareRunError, match=r"^programs: job C is not in the spec"):
        TimeshareRunner(spec, (a, cg("B", 40, 5, tmp_path), cg("C", 40, 5, tmp_path)), HostBackend(), setup)
    moved = JobProgram("B", ("ws1", "ws2"), 0.5, a.argv)
    with pytest.raises(TimeshareRunError, match=r"^programs: job B runs on \['ws1', 'ws2'\], the tables put it on"):
        TimeshareRunner(spec, (a, moved), HostBackend(), setup)


def test_answers_compare_on_the_keys_both_give():
    assert same_answer({"x": [1.0, 2.0], "iterations": 5}, {"x": [1.0, 2.0], "iterations": 5, "n": 3})
    assert not same_answer({"x": [1.0, 2.0]}, {"x": [1.0, 2.0000001]})
    assert not same_answer({"n": 3}, {"n": 3})  # nothing to compare is no evidence


def test_the_managers_pid_in_a_workstation_is_its_guardians_parent():
    assert parent_pid("4242 (python3) S 4240 4240 1 0 -1") == 4240
    assert parent_pid("17 (odd ) name) S 9 9 9") == 9
    assert parent_pid("garbage") is None
    assert cluster_manager_argv("ws2") == ["python3", "/opt/nowlab/agents/timeshare_manager.py", "--name", "ws2",
                                           "--port", "7717"]
    assert cluster_manager_argv("ws2", drift_ppm=200.0)[-2:] == ["--drift-ppm", "200.0"]  # its clock run off


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["", "A", "B"]), st.floats(0.01, 1.0)), min_size=1, max_size=12))
def test_timeline_rows_survive_the_csv_round_trip(tmp_path_factory, pieces):
    rows = _minimal_rows()
    t, ivs = 0.0, []
    for job, width in pieces:
        ivs.append(IntervalRow("ws1", job, t, t + width))
        t += width
    rows = RunRows(rows.run, rows.jobs, rows.shares, tuple(ivs), rows.tables, rows.skews, rows.managers)
    out = tmp_path_factory.mktemp("rows")
    write_rows(out, rows)
    assert read_rows(out) == rows


def test_a_damaged_run_directory_is_one_line_naming_the_file(tmp_path):
    write_rows(tmp_path, _minimal_rows())
    (tmp_path / "skew.csv").unlink()
    with pytest.raises(RunFilesError, match=r"skew.csv: missing"):
        read_rows(tmp_path)
    write_rows(tmp_path, _minimal_rows())
    text = (tmp_path / "jobs.csv").read_text().splitlines()
    (tmp_path / "jobs.csv").write_text("\n".join([text[0], text[1].replace(",3,", ",three,", 1)]) + "\n")
    with pytest.raises(RunFilesError, match=r"^jobs.csv line 2 p: expected int, got 'three'$"):
        read_rows(tmp_path)


def _minimal_rows() -> RunRows:
    from experiments.studies.zhou_brent.measure import JobRow, ManagerRow, RunRow, ShareRow, SkewRow, TableRow
    return RunRows(RunRow("s", "loose", 2, 0.4, 5.0, 0.5, 1.0, ""),
                   (JobRow("A", "ws1 ws2 ws3", 3, 0.5, 3.0, 1.5, 3.1, 2.0, 1.0, 0.97, -0.03, "yes"),),
                   (ShareRow("ws1", "A", 0.5, 0.49, 6),), (IntervalRow("ws1", "A", 0.0, 0.2),),
                   (TableRow("ws1", 1, "A", 0.0, 0.2, 0.0), TableRow("ws1", 2, "", 0.2, 0.0, 0.2)),
                   (SkewRow("ws1", "sample", 1.0, -0.001, 0.002),),
                   (ManagerRow("ws1", 10, 0.0004, 0.003, 0.007, 0.0002, 0.1, math.nan, False),))


def test_the_markdown_names_the_target_and_every_job():
    md = render_markdown(_minimal_rows())
    assert "1 of 1 jobs" in md and "| A | ws1 ws2 ws3 | 3 | 0.5 |" in md and "-3.0%" in md
    assert "![who ran when](timeline.png)" in md and "| ws1 | 2 | (dummy) |" in md


# --- the whole path on this host ---------------------------------------------------------------

def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


@pytest.mark.host_mpi
def test_two_cg_jobs_time_shared_on_three_host_workstations_end_to_end_with_their_report(tmp_path):
    spec = two_job_spec()
    programs = (cg("A", 200, 300, tmp_path / "ckpt"), cg("B", 240, 300, tmp_path / "ckpt"))
    backend = HostBackend(nice=19, client_timeout_s=0.5)
    setup = LiveSetup(ResyncPlan(Resync.LOOSE, 2), lead_s=0.3, timeline_poll_s=0.5, watchdog_poll_s=0.3)
    stages: list[tuple[str, int, int]] = []
    run = TimeshareRunner(spec, programs, backend, setup, job_timeout_s=60.0,
                          progress=lambda *a: stages.append(a)).run()
    out = tmp_path / "report"
    written = record_run(run, out)

    assert {p.name for p in written} >= {"report.md", "timeline.png", "skew.png", "speedup.png", "jobs.csv"}
    assert all(p.stat().st_size > 0 for p in written)
    assert ("dedicated", 4, 4) in stages and ("time-shared", 2, 2) in stages
    assert not backend._procs  # every manager stopped

    # the answers: equal to the dedicated runs; the reported speedups follow from the reported times
    jobs = {r["job"]: r for r in read_csv(out / "jobs.csv")}
    for job, r in jobs.items():
        assert r["same_answer"] == "yes", job
        t_d1, t_dp, t_e = float(r["t_d1_s"]), float(r["t_dp_s"]), float(r["t_e_s"])
        assert float(r["s_d"]) == pytest.approx(t_d1 / t_dp)
        assert float(r["s_e_predicted"]) == pytest.approx(0.5 * t_d1 / t_dp)
        assert float(r["s_e_measured"]) == pytest.approx(t_d1 / t_e)
        print(f"{job}: T_d(1) {t_d1:.2f} s, T_d(3) {t_dp:.2f} s, T_e {t_e:.2f} s, S_e error {float(r['error']):+.1%} "
              f"(target {SPEEDUP_TOLERANCE:.0%}; this host is shared, so only a loose bound is asserted)")
        assert abs(float(r["error"])) < 0.4, r

    # the reported shares: recomputed from the reported timeline, and near each job's β
    timeline = read_csv(out / "timeline.csv")
    for s in read_csv(out / "shares.csv"):
        w, job, rounds = s["workstation"], s["job"], int(s["rounds"])
        mine = [(float(iv["start_s"]), iv["job"] or None) for iv in timeline if iv["workstation"] == w]
        assert rounds >= 3, s
        start_s, end_s = whole_rounds(0.0, ROUND_S, 0.0, rounds * ROUND_S)
        assert shares(mine, start_s, end_s).get(job, 0.0) == pytest.approx(float(s["share"]), abs=1e-6), s
        assert float(s["share"]) == pytest.approx(0.5, abs=0.05 * 0.5 * 2), s  # a job's last slot may be cut short
    assert {(s["workstation"], s["job"]) for s in read_csv(out / "shares.csv")} == \
        {(w, j) for w in WORKSTATIONS for j in ("A", "B")}

    # the intervals tile each workstation's time from round 0, A and B by turns, each slot 0.2 s
    for w in WORKSTATIONS:
        mine = [iv for iv in timeline if iv["workstation"] == w]
        assert all(float(a["end_s"]) == pytest.approx(float(b["start_s"])) for a, b in zip(mine, mine[1:]))
        full = [iv["job"] for iv in mine[:4]]
        assert full in (["A", "B", "A", "B"], ["B", "A", "B", "A"]), mine[:4]

    # loose gang every 2 rounds: corrections at even rounds only; switch cost and CPU reported per manager
    assert {int(r["every_rounds"]) for r in read_csv(out / "run.csv")} == {2}
    assert {s.round % 2 for s in run.live.syncs} == {0}
    managers = read_csv(out / "managers.csv")
    assert [m["workstation"] for m in managers] == list(WORKSTATIONS)
    for m in managers:
        assert int(m["switches"]) >= 6 and 0 < float(m["switch_median_s"]) < 0.1 and float(m["cpu_s"]) > 0
    md = (out / "report.md").read_text()
    assert "Effective speedup" in md and "loose every 2 rounds" in md
    # the report is redone from the CSVs alone, to the same text
    (out / "report.md").unlink()
    from experiments.studies.zhou_brent.report import write_report
    write_report(out)
    assert (out / "report.md").read_text() == md


@pytest.mark.host_mpi
def test_two_cg_jobs_under_the_os_alone_start_no_manager_and_give_their_answers(tmp_path):
    """The OS-alone arm on this host: no manager asked for (the backend would fail the run), one job polite and
    one spinning."""
    polite, spinning = cg("A", 200, 300, tmp_path / "ckpt"), cg("B", 200, 300, tmp_path / "ckpt")
    spinning = replace(spinning, argv=(*spinning.argv, "--wait", "spin"))

    class NoManagers(HostBackend):
        def start_managers(self, workstations):
            raise AssertionError(f"a manager was asked for on {list(workstations)}")

    run = TimeshareRunner(two_job_spec(), (polite, spinning), NoManagers(nice=19), OsAlone(), dedicated=False,
                          job_timeout_s=60.0).run()
    assert run.live is None and set(run.shared) == {"A", "B"}
    # the same problem, so the same answer, however the kernel interleaved them and however they waited
    assert same_answer(run.shared["A"].result, run.shared["B"].result)
    record_run(run, tmp_path / "report")
    md = (tmp_path / "report" / "report.md").read_text()
    assert "No managers: the OS scheduled the ranks." in md and "A:polite B:spin" in md


@pytest.mark.host_mpi
def test_a_job_that_never_checks_in_fails_the_run_in_one_line_and_every_manager_is_stopped(tmp_path):
    spec = two_job_spec()
    good = cg("A", 100, 2000, tmp_path)
    broken = JobProgram("B", WORKSTATIONS, 0.5, ("python3", "-m", "workloads.cg", "--n", "not-a-number"))
    backend = HostBackend(nice=19, client_timeout_s=0.5)
    setup = LiveSetup(ResyncPlan(Resync.NONE), checkin_timeout_s=3.0)
    with pytest.raises(TimeoutError, match=r"^check-in: after 3 s ws1 still has no B$"):
        TimeshareRunner(spec, (good, broken), backend, setup, dedicated=False).run()
    assert not backend._procs


def test_runs_side_by_side_give_each_variants_skew_and_worst_errors():
    loose = _minimal_rows()
    strict = replace(loose, run=replace(loose.run, resync="strict", every_rounds=1), skews=())
    from experiments.studies.zhou_brent.report import compare_markdown
    md = compare_markdown([("a", loose, None), ("b", strict, None)])
    assert "| a | loose every 2 | yes | polite | A 3.1 | 1 | 1.00 | 1.00 | 1.00 | 0 | - | - | -3.0% | -2.0% | 0.40 |" in md
    assert "| b | strict | yes | polite | A 3.1 | 0 | - | - | - | 0 |" in md


# --- why coscheduling matters: the wait knob and the OS alone ----------------------------------

def test_a_spinning_job_says_so_in_its_argv_and_a_polite_one_runs_as_before(tmp_path):
    spec_file = tmp_path / "cg.toml"
    spec_file.write_text('workstations = ["ws1", "ws2"]\nround_s = 4.0\n'
                         '[[job]]\nid = "C"\nworkstations = ["ws1", "ws2"]\nbeta = 0.5\ndemand_ref_s = 3.0\n'
                         'workload = "cg"\ncg = { n = 400, iterations = 50 }\n'
                         '[[job]]\nid = "S"\nworkstations = ["ws1", "ws2"]\nbeta = 0.5\ndemand_ref_s = 3.0\n')
    spec = load_timeshare_spec(spec_file)
    polite = {e.id: job_argv(e) for e in spec.job}
    spinning = {e.id: job_argv(e) for e in spec.with_wait("spin").job}
    assert polite["C"] == ("python3", "-m", "workloads.cg", "--n", "400", "--iterations", "50", "--print-x")
    assert "--wait" not in polite["S"]
    for job in ("C", "S"):
        assert spinning[job] == (*polite[job], "--wait", "spin")
        assert (wait_of(polite[job]), wait_of(spinning[job])) == ("polite", "spin")
    assert wait_of(("python3", "-m", "workloads.cg", "--wait", "spin", "--wait", "polite")) == "polite"  # the last


@pytest.mark.parametrize("text", ["os", " OS"])
def test_the_os_variant_is_no_managers_and_the_rest_are_resync_plans(text):
    assert parse_variant(text) == OsAlone()
    assert parse_variant("loose:2") == ResyncPlan(Resync.LOOSE, 2)
    with pytest.raises(TimeshareRunError, match=r"^resync: unknown 'oss'"):
        parse_variant("oss")


def test_the_os_alone_arm_starts_no_owners_for_want_of_managers(tmp_path):
    from experiments.studies.zhou_brent.owners import OwnerSetup
    with pytest.raises(TimeshareRunError, match=r"^simulate.owners: owners check in with the local managers"):
        TimeshareRunner(two_job_spec(), (cg("A", 40, 5, tmp_path), cg("B", 40, 5, tmp_path)), HostBackend(), OsAlone(),
                        owners=OwnerSetup({"ws1": 1}, 1.0, 0.1))


def os_alone_run(waits: tuple[str, str] = ("spin", "spin")) -> TimeshareRun:
    """What the runner returns for two jobs under the OS alone (no live record), A's dedicated runs beside it."""
    progs = tuple(replace(cg(job, 200, 300, Path("/tmp")), argv=(*cg(job, 200, 300, Path("/tmp")).argv, "--wait", w))
                  for job, w in zip("AB", waits))
    answer = {"x": [1.0, 2.0]}
    dedicated = {("A", 1): JobRun("A", ("ws1",), 0.0, 4.0, {"compute_s": 3.0, **answer}),
                 ("A", 3): JobRun("A", WORKSTATIONS, 5.0, 7.0, {"compute_s": 1.5, **answer})}
    shared = {"A": JobRun("A", WORKSTATIONS, 10.0, 16.5, {"compute_s": 6.0, **answer}),
              "B": JobRun("B", WORKSTATIONS, 10.1, 17.0, {"compute_s": 6.5, **answer})}
    return TimeshareRun("two-cg", progs, dedicated, shared, None, {"A": True, "B": None}, 10.0)


def test_a_run_with_no_managers_reports_each_jobs_times_and_nothing_it_did_not_measure(tmp_path):
    from experiments.studies.zhou_brent.measure import measure
    from experiments.studies.zhou_brent.report import write_report
    rows = measure(os_alone_run())
    assert (rows.run.resync, rows.run.managers, rows.run.wait, rows.run.run_s) == ("os", False, "spin", 7.0)
    assert math.isnan(rows.run.round_s) and math.isnan(rows.run.lead_before_round0_s)
    assert (rows.shares, rows.intervals, rows.tables, rows.skews, rows.managers) == ((), (), (), (), ())
    a, b = rows.jobs
    # A: S_d = 3 / 1.5 = 2, S_e against β·S_d = 1, measured 3 / 6 = 0.5; B ran no dedicated runs
    assert (a.s_d, a.s_e_predicted, a.s_e_measured, a.error, a.same_answer) == (2.0, 1.0, 0.5, -0.5, "yes")
    assert math.isnan(b.s_e_measured) and b.t_e_s == 6.5 and b.same_answer == "-"

    written = record_run(os_alone_run(), tmp_path)
    assert {p.name for p in written} >= {"report.md", "speedup.png", "run.csv", "jobs.csv"}
    assert not (tmp_path / "timeline.png").exists() and not (tmp_path / "skew.png").exists()
    md = (tmp_path / "report.md").read_text()
    assert md.startswith("# Time sharing live: two-cg with no managers, the OS alone")
    assert "No managers: the OS scheduled the ranks." in md and "Waits on MPI: spin." in md
    assert "| A | ws1 ws2 ws3 | 3 | 0.5 | 3 | 1.5 | 6 | 2 | 1 | 0.5 | -50.0% | yes |" in md
    assert "The simulator has no prediction for this arm" in md
    assert "timeline.png" not in md and "skew.png" not in md and "## Skew" not in md and "## Each job's share" not in md
    back = read_rows(tmp_path)  # the CSVs hold it all: the report is redone from them alone
    assert (back.run, back.jobs[0], back.jobs[1].t_e_s, back.shares) == (rows.run, a, 6.5, ())
    (tmp_path / "report.md").unlink()
    write_report(tmp_path)
    assert (tmp_path / "report.md").read_text() == md


def test_a_run_whose_jobs_waited_differently_names_each_jobs_wait():
    from experiments.studies.zhou_brent.measure import measure
    assert measure(os_alone_run(("spin", "polite"))).run.wait == "A:spin B:polite"


def test_the_2x2_reads_as_one_table_managers_and_waits_in_their_columns():
    from experiments.studies.zhou_brent.measure import measure
    from experiments.studies.zhou_brent.report import compare_markdown
    loose = _minimal_rows()
    spinning = replace(loose, run=replace(loose.run, resync="loose", every_rounds=1, wait="spin"))
    os_polite = measure(os_alone_run(("polite", "polite")))
    md = compare_markdown([("loose1-polite", replace(loose, run=replace(loose.run, every_rounds=1)), None),
                           ("loose1-spin", spinning, None), ("os-polite", os_polite, None),
                           ("os-spin", measure(os_alone_run()), None)])
    rows = {line.split(" | ")[0].removeprefix("| "): line.split(" | ") for line in md.splitlines()
            if line.startswith("| loose1-") or line.startswith("| os-")}
    assert {name: cells[1:4] for name, cells in rows.items()} == {
        "loose1-polite": ["loose every 1", "yes", "polite"], "loose1-spin": ["loose every 1", "yes", "spin"],
        "os-polite": ["os", "no", "polite"], "os-spin": ["os", "no", "spin"]}
    assert rows["os-spin"][4:8] == ["A 6, B 6.5", "0", "-", "-"]  # T_e; no skew without managers
    assert rows["os-spin"][12] == "-50.0%"  # A's S_e error, the worst


def test_a_result_line_cut_in_two_is_joined_and_one_that_stays_broken_is_one_line():
    from experiments.studies.zhou_brent.live import result_of
    whole = 'NOWLAB_RESULT {"job": "A", "x": [1.5, 2.5], "compute_s": 1.0}'
    assert result_of("noise\n" + whole + "\n", "A")["x"] == [1.5, 2.5]
    assert result_of("noise\n" + whole[:30] + "\n" + whole[30:] + "\n", "A")["compute_s"] == 1.0
    with pytest.raises(TimeshareRunError, match=r"^job A: its result line is not JSON \("):
        result_of(whole[:30] + "\n", "A")
    with pytest.raises(TimeshareRunError, match=r"^job B: no NOWLAB_RESULT line"):
        result_of("nothing here\n", "B")


def test_a_failed_job_names_its_cause_not_open_mpis_notice_and_keeps_its_output(tmp_path):
    import json

    from experiments.studies.zhou_brent.files import write_failure
    from experiments.studies.zhou_brent.live import JobFailed, failure_cause
    notice = ("--------------------------------------------------------------------------\n"
              "MPI_ABORT was invoked on rank 1 in communicator MPI_COMM_WORLD\nwith errorcode 1.\n"
              "You may or may not see output from other processes, depending on\n"
              "exactly when Open MPI kills them.\n"
              "--------------------------------------------------------------------------\n")
    traceback = ('Traceback (most recent call last):\n  File "cg.py", line 3, in <module>\n'
                 "workloads.polite.Cancelled: the host cancelled the job\n")
    assert failure_cause(traceback + notice) == "workloads.polite.Cancelled: the host cancelled the job"
    killed = "mpiexec noticed that process rank 2 with PID 0 on node ws3 exited on signal 9 (Killed).\n"
    assert failure_cause(notice + killed) == killed.strip()
    assert failure_cause("a\nb\nc\nd\n") == "b | c | d"  # nothing telling: the tail, as before
    exc = JobFailed("CGA", 1, traceback + notice)
    assert str(exc) == "job CGA: exit code 1: workloads.polite.Cancelled: the host cancelled the job"
    kept = write_failure(tmp_path / "run", "CGA", exc.output, [{"job": "CGA", "p": 1, "compute_s": 220.0}])
    assert [k.name for k in kept] == ["failed-CGA.log", "dedicated-partial.json"]
    assert kept[0].read_text() == traceback + notice
    assert json.loads(kept[1].read_text()) == [{"job": "CGA", "p": 1, "compute_s": 220.0}]
    assert [k.name for k in write_failure(tmp_path / "other", "B", "x", [])] == ["failed-B.log"]
