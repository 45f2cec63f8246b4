"""The time-sharing spec: the shipped Fig. 3 config gives Fig. 4's tables; bad input is one line."""
from __future__ import annotations

from pathlib import Path

import pytest

from experiments.studies.zhou_brent.spec import TimeshareSpecError, load_timeshare_spec
from scheduler.jobs import Outcome
from scheduler.timeshare.simulate import dedicated_s, simulate_timeshare

FIG3 = Path(__file__).resolve().parents[3] / "experiments" / "studies" / "zhou_brent" / "configs" / "zhou-brent-fig3.toml"

MINIMAL = """
workstations = ["a", "b", "c"]
round_s = 10.0
[[job]]
id = "S"
demand_ref_s = 20.0
overhead_s = 1.0
[[job]]
id = "L"
demand_ref_s = 600.0
[[job]]
id = "F"
processors = 1
beta = 0.2
demand_ref_s = 5.0
[allocation]
gamma = 1.0
short_beta = 0.5
short_t1_s = 60.0
"""


def test_the_shipped_fig3_spec_gives_fig4s_tables():
    spec = load_timeshare_spec(FIG3)
    tables = spec.tables()
    assert {w: t.processes for w, t in tables.items()} == {
        "ws1": ("J1", "J2", "J6"), "ws2": ("J1", "J2", "J6"), "ws3": ("J3", "J4", "J6"),
        "ws4": ("J3", "J4", "J6"), "ws5": ("J3", "J5")}
    result = simulate_timeshare(tables, spec.jobs(), spec.setup())
    assert all(r.status == Outcome.DONE for r in result.jobs)


def test_jobs_without_beta_are_allocated_by_the_rule(tmp_path):
    path = tmp_path / "mini.toml"
    path.write_text(MINIMAL)
    spec = load_timeshare_spec(path)
    by_job = {a.share.job: a for a in spec.allocations()}
    # F by hand on the least loaded (a); S short: S_d(p) = 21/(20/p + 1) >= 1/0.5 = 2 at p = 3 (2.1), so a, b, c;
    # L large, all three, and what is left on the busiest (a: 1 - 0.2 - 0.5 = 0.3).
    assert by_job["F"].share.workstations == ("a",)
    assert by_job["S"].short and by_job["S"].share.workstations == ("a", "b", "c") and by_job["S"].share.beta == 0.5
    assert not by_job["L"].short and by_job["L"].share.beta == pytest.approx(0.3)
    assert sum(t.round_s for t in spec.tables().values()) == 30.0


@pytest.mark.parametrize("edit, message", [
    (("beta = 0.2", "beta = 1.5"), "job[2].beta: Input should be less than or equal to 1, got 1.5"),
    (("processors = 1", "workstations = [\"z\"]"), "job[2].workstations: unknown ['z']"),
    (("round_s = 10.0", "round_s = 10.0\nmax_round_s = 5.0"), None),
    (("short_beta = 0.5", "short_bta = 0.5"), "allocation.short_bta: unknown key (did you mean 'short_beta'?)"),
    (("demand_ref_s = 5.0", 'demand_ref_s = 5.0\nworkload = "cg"'), "job F: workload cg needs cg = { n = ..., iterations = ... }"),
    (("demand_ref_s = 5.0", "demand_ref_s = 5.0\ncg = { n = 100, iterations = 10 }"), "job F: workload cg needs cg"),
    (("demand_ref_s = 5.0", 'demand_ref_s = 5.0\nworkload = "cg"\ncg = { n = 0, iterations = 10 }'),
     "job[2].cg.n: Input should be greater than 0"),
    (("demand_ref_s = 5.0", 'demand_ref_s = 5.0\nworkload = "jacobi"'), "job[2].workload: Input should be 'synthetic' or 'cg'"),
    (("demand_ref_s = 5.0", 'demand_ref_s = 5.0\nwait = "busy"'), "job[2].wait: Input should be 'polite' or 'spin'"),
    # found by the fuzzing: an infinite speed made every job's work 0, refused later naming no field
    (("round_s = 10.0", "round_s = 10.0\nspeed_ref_cores = inf"), "speed_ref_cores: Input should be a finite number"),
    (("demand_ref_s = 20.0", "demand_ref_s = nan"), "job[0].demand_ref_s: Input should be a finite number"),
])
def test_bad_specs_are_one_line_naming_the_field(tmp_path, edit, message):
    path = tmp_path / "bad.toml"
    path.write_text(MINIMAL.replace(*edit))
    if message is None:  # a round over its bound is caught when the tables are built
        from scheduler.timeshare.slots import SlotError
        with pytest.raises(SlotError, match="longer than the bound max_round_s = 5 s"):
            load_timeshare_spec(path).tables()
        return
    with pytest.raises(TimeshareSpecError) as err:
        load_timeshare_spec(path)
    assert str(err.value).startswith("bad.toml: ") and message in str(err.value)
    assert "\n" not in str(err.value)


STREAM = FIG3.parent / "short-jobs-beside-large.toml"


def test_the_stream_spec_replans_and_short_jobs_beat_the_large_ones():
    spec = load_timeshare_spec(STREAM)
    result = spec.simulate_run(spec.setup())
    by_job = {r.id: r for r in result.jobs}
    assert all(r.status == Outcome.DONE for r in result.jobs)
    # a short job waits at most a round (4 s) for its plan and then at most a round for its slot,
    # then runs at its sustained β = 0.5 (T_e = T_d/β, eq. 2, plus those waits)
    for short in ("S1", "S2"):
        r = by_job[short]
        assert r.start_s - r.arrival_s <= 2 * 4.0 + 1e-9 and r.response_s <= dedicated_s(r) / 0.5 + 3 * 4.0
    assert by_job["L1"].response_s / dedicated_s(by_job["L1"]) > by_job["S1"].response_s / dedicated_s(by_job["S1"])


def test_replan_with_a_hand_beta_is_one_line(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(MINIMAL + "\n[simulate]\nreplan = true\n")
    with pytest.raises(TimeshareSpecError, match=r"^bad.toml: simulate.replan: the global manager allocates every job, but F gives a beta$"):
        load_timeshare_spec(path)


def test_a_job_waits_politely_unless_told_and_a_runs_wait_overrides_every_job(tmp_path):
    path = tmp_path / "mini.toml"
    path.write_text(MINIMAL.replace("demand_ref_s = 5.0", 'demand_ref_s = 5.0\nwait = "spin"'))
    spec = load_timeshare_spec(path)
    assert [e.wait for e in spec.job] == ["polite", "polite", "spin"]
    assert [e.wait for e in spec.with_wait("spin").job] == ["spin"] * 3
    assert [e.wait for e in spec.with_wait(" Polite").job] == ["polite"] * 3
    assert spec.with_wait("spin").allocations() == spec.allocations()  # the wait changes what runs, not the tables
    with pytest.raises(TimeshareSpecError, match=r"^wait: unknown 'busy' \(known: polite, spin\)$"):
        spec.with_wait("busy")


def test_the_specs_waits_are_the_workloads_wait_modes():
    """Named again in the spec so it is read without importing mpi4py: the same names as workloads/polite.py's."""
    import ast

    from experiments.studies.zhou_brent.spec import WAITS
    source = (FIG3.parents[4] / "workloads" / "polite.py").read_text()
    enum = next(n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.ClassDef) and n.name == "WaitMode")
    values = [n.value.value for n in enum.body if isinstance(n, ast.Assign)]
    assert tuple(values) == WAITS == ("polite", "spin")


def test_the_coscheduling_config_shares_three_workstations_between_two_cg_jobs_half_and_half():
    spec = load_timeshare_spec(FIG3.parent / "coscheduling-now3.toml")
    assert [(e.id, e.workload, e.beta, e.workstations, e.wait) for e in spec.job] == [
        (j, "cg", 0.5, ("ws1", "ws2", "ws3"), "polite") for j in ("CGA", "CGB")]
    tables = spec.tables()
    assert {w: [(s.process, s.parallel_s) for s in t.slots] for w, t in tables.items()} == {
        w: [("CGA", 5.0), ("CGB", 5.0)] for w in ("ws1", "ws2", "ws3")}
