"""Models, registry, allocation helpers, jobs CSV and the `simulate` command's errors."""
from __future__ import annotations


import pandas as pd
import pytest
import typer
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from nowlab.commands import schedule as cli
from scheduler.actions import Start
from scheduler.alloc import equal_shares, first_fit, grow, shrink, take, take_mask, water_fill
from scheduler.engine import PolicyError, simulate
from experiments.traces.jobs_csv import read_jobs
from scheduler.model import DemandModel, Job, Knowledge, SevcikModel, TableModel
from scheduler.policy import Policy
from scheduler.registry import get_policy, policy_names

NAMES = ["RA", "EQUI", "EQUI-FLOOR", "FOLDING", "ASP", "AP1", "AEP", "ASP(1)", "AP1(1)", "AEP(1)", "ASP(2)",
         "AP1(2)", "AEP(2)", "SDF", "SDF-MAX1", "SDF-MAX2", "SDF-MAX6", "DYN-EQUI",
         "ASP(2)-FREE", "AP1(2)-FREE", "AEP(2)-FREE", "ASP(2)-SHARE", "AP1(2)-SHARE", "AEP(2)-SHARE",
         "FCFS", "EASY", "EASY-CONSERVATIVE"]


def test_sevcik_model_and_pmax_from_eq6():
    m = SevcikModel(W=16, alpha=1, beta=1)
    assert m.pmax == 4  # ceil(sqrt(16/1))
    assert m.T(2) == 16 / 2 + 1 + 2
    assert m.T(10) == m.T(4)  # beyond pmax the extra processors are unused
    assert SevcikModel(W=10, beta=0).pmax is None
    with pytest.raises(ValueError):
        SevcikModel(W=0)


def test_table_and_demand_models():
    t = TableModel((10, 6, 5))
    assert (t.pmax, t.T(1), t.T(3), t.T(7)) == (3, 10, 5, 5)
    d = DemandModel(8.0, pmax=2)
    assert d.T(1) == 8 and d.T(4) == 4 and Knowledge.TP not in d.knows


def test_registry_names_and_errors():
    assert sorted(policy_names()) == sorted(NAMES)
    assert get_policy("aep(2)").name == "AEP(2)"
    assert get_policy("dyn-equi").zero_overhead
    with pytest.raises(ValueError, match="known: RA, EQUI"):
        get_policy("LIFO")
    assert get_policy("AEP(2)").needs == {Knowledge.PMAX, Knowledge.T1, Knowledge.TP}
    assert get_policy("SDF").needs == {Knowledge.PMAX, Knowledge.T1}
    assert get_policy("AP1").needs == {Knowledge.PMAX}


def test_allocation_helpers():
    free = {0, 1, 3, 4, 5, 7}
    assert take(free, 3) == (3, 4, 5)  # the lowest block long enough
    assert take(free, 2) == (0, 1)
    assert take(free, 1) == (7,) and free == set()
    free = {0, 2, 4, 5}
    assert take(free, 3) == (0, 2, 4)  # no block of 3: the lowest ids
    assert shrink((4, 5, 6, 7), 3) == (4, 5, 6)
    free = {0, 1, 6, 7}
    assert grow((2, 3, 4, 5), free, 2) == (1, 2, 3, 4, 5, 6)
    assert equal_shares(3, 8) == [3, 3, 2] and equal_shares(5, 3) == [1, 1, 1, 0, 0]
    assert water_fill([1, 8, 8], 8) == [1, 4, 3]
    assert water_fill([2, 2], 8) == [2, 2]


def test_policy_needing_tp_refuses_t1_only_jobs():
    jobs = [Job(1, 0.0, DemandModel(5.0))]
    with pytest.raises(ValueError, match=r"AEP\(2\) needs T\(p\)"):
        simulate(jobs, "AEP(2)", 4)
    assert simulate(jobs, "SDF", 4).jobs[0].finish == pytest.approx(5 / 4)


def test_bad_p_and_broken_policies_are_reported():
    jobs = [Job(1, 0.0, SevcikModel(4, 0, 0, 2))]
    with pytest.raises(ValueError, match="P must be"):
        simulate(jobs, "RA", 0)
    with pytest.raises(ValueError, match="duplicate job id 1"):
        simulate(jobs + jobs, "RA", 2)

    class Idle(Policy):
        name = "IDLE"

        def decide(self, snap):
            return []

    class Greedy(Policy):
        name = "GREEDY"

        def decide(self, snap):
            return [Start(j.id, tuple(range(snap.P))) for j in snap.queue]

    with pytest.raises(PolicyError, match="unfinished"):
        simulate(jobs, Idle(), 4)
    with pytest.raises(PolicyError, match="allowed 1..2"):
        simulate(jobs, Greedy(), 4)


def test_dataframes_use_batsim_columns():
    jobs = [Job(1, 0.0, SevcikModel(4, 0, 0, 2)), Job(2, 1.0, SevcikModel(2, 0, 0, 1))]
    r = simulate(jobs, "AP1", 4)
    df = r.to_dataframe()
    assert list(df.columns[:4]) == ["job_id", "workload_name", "profile", "submission_time"]  # all: test_scheduler_batsim_columns
    assert {"preemptions", "mean_partition"} <= set(df.columns)
    assert df.allocated_resources.tolist() == ["0-1", "2"]
    assert list(r.timeline_dataframe().columns) == ["time", "job", "event", "processors"]
    assert r.jobs[0].wait == 0 and r.jobs[0].turnaround == 2 and r.jobs[0].stretch == 1


def write(tmp_path, text):
    path = tmp_path / "jobs.csv"
    path.write_text(text)
    return path


def test_read_jobs_both_layouts(tmp_path):
    jobs = read_jobs(write(tmp_path, "id,arrival,W,alpha,beta,pmax,phases\n1,0,16,1,1,,3\n2,0.5,4,0,0,2,1\n"))
    assert jobs[0].model.pmax == 4 and jobs[0].phases == 3 and jobs[1].model.T(2) == 2
    jobs = read_jobs(write(tmp_path, "id,arrival,t1\na,0,5\nb,1,2\n"))
    assert [j.id for j in jobs] == ["a", "b"] and jobs[1].model.T(1) == 2


@pytest.mark.parametrize("text, message", [
    ("id,arrival,W\n1,0,3\n", "line 1: missing column"),
    ("id,t1\n1,3\n", "missing column(s) arrival"),
    ("id,arrival,t1\n1,0,3\n2,-1,3\n", "line 3: column 'arrival' is negative"),
    ("id,arrival,t1\n1,2,3\n2,1,3\n", "line 3: arrivals not sorted"),
    ("id,arrival,t1\n1,0,x\n", "line 2: column 't1' is not a number"),
    ("id,arrival,W,alpha,beta,pmax,phases\n1,0,3,0,0,2,0\n", "line 2: job 1: phases must be >= 1"),
])
def test_read_jobs_errors(tmp_path, text, message):
    with pytest.raises(ValueError) as err:
        read_jobs(write(tmp_path, text))
    assert message in str(err.value)


@pytest.fixture
def app():
    app = typer.Typer()
    cli.register(app)

    @app.callback()
    def main():  # keeps `simulate` a named subcommand, as in the real app
        pass

    return app


def test_cli_simulate_writes_csvs(tmp_path, app):
    jobs = write(tmp_path, "id,arrival,W,alpha,beta,pmax,phases\n1,0,8,0,0,4,4\n2,0.6,2,0,0,4,1\n")
    tl, out = tmp_path / "tl.csv", tmp_path / "out.csv"
    res = CliRunner().invoke(app, ["simulate", str(jobs), "--policy", "folding", "-P", "4",
                                   "--timeline", str(tl), "--jobs-out", str(out)])
    assert res.exit_code == 0, res.output
    assert "FOLDING" in res.output
    timeline = pd.read_csv(tl)
    assert set(timeline.event) == {"arrive", "start", "preempt_request", "ack", "resize", "finish"}
    per_job = pd.read_csv(out)
    assert per_job.finish_time.tolist() == [2.5, 2.0] and per_job.preemptions.tolist() == [2, 0]


@pytest.mark.parametrize("args, csv_text, message", [
    (["-p", "LIFO", "-P", "4"], "id,arrival,t1\n1,0,1\n", "unknown policy 'LIFO'; known: RA"),
    (["-p", "AEP(2)", "-P", "4"], "id,arrival,t1\n1,0,1\n", "needs T(p)"),
    (["-p", "RA", "-P", "0"], "id,arrival,t1\n1,0,1\n", "P must be >= 1"),
    (["-p", "RA", "-P", "2"], "id,arrival,t1\n1,3,1\n2,1,1\n", "line 3: arrivals not sorted"),
    (["-p", "RA", "-P", "2"], "id,arrival\n1,3\n", "missing column"),
])
def test_cli_errors_are_one_line_exit_2(tmp_path, app, args, csv_text, message):
    jobs = write(tmp_path, csv_text)
    res = CliRunner().invoke(app, ["simulate", str(jobs), *args,
                                   "--timeline", str(tmp_path / "t.csv"), "--jobs-out", str(tmp_path / "o.csv")])
    assert res.exit_code == 2
    assert message in res.output
    assert "Traceback" not in res.output and len(res.output.strip().splitlines()) == 1


@given(mask=st.integers(0, (1 << 40) - 1), n=st.integers(1, 40))
def test_first_fit_matches_a_plain_scan(mask, n):
    bits = [mask >> i & 1 for i in range(40)]
    expected = next((i for i in range(40 - n + 1) if all(bits[i:i + n])), -1)
    assert first_fit(mask, n) == expected
    if bin(mask).count("1") >= n:
        procs, left = take_mask(mask, n)
        assert len(procs) == n and left | sum(1 << p for p in procs) == mask and left & mask == left


@given(caps=st.lists(st.integers(1, 40), min_size=1, max_size=40), P=st.integers(1, 40))
def test_water_fill_is_equal_under_caps(caps, P):
    sizes = water_fill(caps, P)
    if len(caps) >= P:
        assert sizes == [1] * P + [0] * (len(caps) - P)
        return
    assert all(1 <= s <= c for s, c in zip(sizes, caps))
    assert sum(sizes) == min(P, sum(caps))
    free_ones = [s for s, c in zip(sizes, caps) if s < c]  # not held back by their cap
    if free_ones:
        assert max(free_ones) - min(free_ones) <= 1
        assert all(s <= max(free_ones) + 1 for s in sizes)  # nobody sits above the water level
