"""Inputs of the live executor (no cluster): job classes, arrival streams, `nowlab execute` errors."""
from __future__ import annotations

import json

import pytest
import typer
from typer.testing import CliRunner

from nowlab.commands import schedule as cli
from scheduler.live import Arrival, LiveExecutor
from experiments.traces.live_inputs import classes_from_dict, job_class, load_classes, read_stream
from scheduler.live.stream import PmaxOnlyModel
from scheduler.model import DemandModel, Knowledge, SevcikModel
from workloads.host.launch import LocalLauncher

ARGV = ["python3", "-m", "workloads.synthetic", "--phases", "4"]
CLASSES = f"""
[class.short]
argv = {json.dumps(ARGV)}
W = 4.0
alpha = 0.5
beta = 0.1
pmax = 4

[class.demand]
argv = {json.dumps(ARGV)}
t1 = 3.0
"""


@pytest.fixture
def classes(tmp_path):
    path = tmp_path / "classes.toml"
    path.write_text(CLASSES)
    return path


def test_classes_give_models():
    got = classes_from_dict({"class": {"a": {"argv": ARGV, "W": 8, "alpha": 1, "beta": 0.5},
                                       "b": {"argv": ARGV, "t1": 2.0, "pmax": 2},
                                       "c": {"argv": ARGV, "pmax": 3}}})
    assert got["a"].model == SevcikModel(8.0, 1.0, 0.5, None) and got["a"].model.pmax == 4  # eq. 6
    assert got["b"].model == DemandModel(2.0, 2)
    assert isinstance(got["c"].model, PmaxOnlyModel) and got["c"].model.knows == frozenset({Knowledge.PMAX})
    assert got["a"].argv == tuple(ARGV)


def test_class_from_a_profile_fit(tmp_path):
    (tmp_path / "fit.json").write_text(json.dumps({"work_s": 6.0, "alpha_s": 0.2, "beta_s": 0.05}))
    c = job_class("cg", {"argv": ["python3", "-m", "workloads.cg"], "profile": "fit.json"}, base=tmp_path)
    assert c.model == SevcikModel(6.0, 0.2, 0.05, None)


@pytest.mark.parametrize("body, message", [
    ({"argv": ARGV}, "needs a model"),
    ({"argv": [], "pmax": 2}, "argv must be a non-empty list"),
    ({"argv": [*ARGV, "--hosts", "a"], "pmax": 2}, "must not set --job, --hosts"),
    ({"argv": ARGV, "W": 4, "pmaxx": 2}, "unknown key(s) pmaxx"),
    ({"argv": ARGV, "W": -1}, "W must be >= 0"),
    ({"argv": ARGV, "W": 0}, "W > 0"),
    ({"argv": ARGV, "pmax": 1.5}, "pmax must be a whole number"),
    ({"argv": ARGV, "alpha": 1}, "alpha and beta need W"),
    ({"argv": ARGV, "profile": "missing.json"}, "cannot read profile"),
])
def test_bad_class_is_one_clear_error(body, message, tmp_path):
    with pytest.raises(ValueError, match="class 'x'") as err:
        job_class("x", body, base=tmp_path)
    assert message in str(err.value)


def test_stream_reads_ids_classes_and_arrivals(tmp_path, classes):
    path = tmp_path / "s.csv"
    path.write_text("id,class,arrival\n7,short,0\nb,demand,1.5\n9,short,1.5\n")
    got = read_stream(path, load_classes(classes))
    assert [(a.id, a.job_class.name, a.arrival) for a in got] == [(7, "short", 0.0), ("b", "demand", 1.5),
                                                                    (9, "short", 1.5)]
    path.write_text("class,arrival\nshort,0\nshort,2\n")
    assert [a.id for a in read_stream(path, load_classes(classes))] == [0, 1]


@pytest.mark.parametrize("text, message", [
    ("class,arrival\nshort,0\nshort,2\nshort,1\n", "line 4: arrivals not sorted (1 after 2)"),
    ("class,arrival\nshort,-1\n", "line 2: arrival must be a finite time >= 0"),
    ("class,arrival\nshort,nan\n", "line 2: arrival must be a finite time >= 0"),
    ("class,arrival\nshort,soon\n", "line 2: arrival is not a number"),
    ("class,arrival\nshort,0\nlong,1\n", "line 3: unknown job class 'long'; known: short, demand"),
    ("id,class,arrival\n1,short,0\n1,short,1\n", "line 3: duplicate job id 1"),
    ("klass,arrival\nshort,0\n", "line 1: missing column(s) class"),
    ("class,arrival\n", "no arrivals"),
])
def test_bad_stream_names_the_line(tmp_path, classes, text, message):
    path = tmp_path / "s.csv"
    path.write_text(text)
    with pytest.raises(ValueError) as err:
        read_stream(path, load_classes(classes))
    assert message in str(err.value) and str(path) in str(err.value)


def test_executor_refuses_a_policy_the_models_cannot_serve():
    demand = job_class("d", {"argv": ARGV, "t1": 2.0})
    with pytest.raises(ValueError, match="policy AEP\\(2\\) needs T\\(p\\)"):
        LiveExecutor([Arrival(0, demand, 0.0)], "AEP(2)", LocalLauncher(), ["ws1", "ws2"], "127.0.0.1")
    with pytest.raises(ValueError, match="unknown policy 'LIFO'; known: RA, EQUI, EQUI-FLOOR, FOLDING"):
        LiveExecutor([Arrival(0, demand, 0.0)], "LIFO", LocalLauncher(), ["ws1"], "127.0.0.1")


@pytest.fixture
def app():
    app = typer.Typer()
    cli.register(app)
    return app


@pytest.mark.parametrize("args, stream, message", [
    (["-p", "LIFO", "--local", "2"], "class,arrival\nshort,0\n", "unknown policy 'LIFO'; known: RA"),
    (["-p", "RA", "--local", "2"], "class,arrival\nshort,0\nnope,1\n", "line 3: unknown job class 'nope'"),
    (["-p", "RA", "--local", "2"], "class,arrival\nshort,3\nshort,1\n", "line 3: arrivals not sorted"),
    (["-p", "RA", "--local", "2"], "class,arrival\nshort,-2\n", "line 2: arrival must be a finite time >= 0"),
    (["-p", "RA"], "class,arrival\nshort,0\n", "give exactly one of --cluster NAME, --spec FILE or --local P"),
    (["-p", "RA", "--local", "0"], "class,arrival\nshort,0\n", "--local needs P >= 1"),
    (["-p", "AEP(2)", "--local", "2"], "class,arrival\ndemand,0\n", "needs T(p)"),
])
def test_cli_execute_errors_are_one_line_exit_2(tmp_path, app, classes, args, stream, message):
    path = tmp_path / "s.csv"
    path.write_text(stream)
    res = CliRunner().invoke(app, ["execute", str(path), "--classes", str(classes), *args,
                                   "--timeline", str(tmp_path / "t.csv"), "--jobs-out", str(tmp_path / "o.csv")])
    assert res.exit_code == 2, res.output
    assert message in res.output
    assert "Traceback" not in res.output and len(res.output.strip().splitlines()) == 1


def _result(timeline, decisions=(), runs=()):
    from scheduler.live.result import LiveResult
    from scheduler.results import TimelineEvent
    return LiveResult("FOLDING", 4, HOSTS4, [], [TimelineEvent(*e) for e in timeline], list(decisions), [],
                      list(runs), [])


HOSTS4 = ["ws1", "ws2", "ws3", "ws4"]


def test_audit_catches_overlap_excess_and_subset_breaks():
    from scheduler.live.audit import check_timeline
    assert check_timeline(_result([(0, 0, "start", (0, 1)), (1, 1, "start", (2, 3)), (2, 0, "finish", (0, 1)),
                                   (3, 1, "ack", (2, 3)), (3, 1, "resize", (1, 2, 3))])) == []
    overlap = check_timeline(_result([(0, 0, "start", (0, 1)), (1, 1, "start", (1, 2))]))
    assert len(overlap) == 1 and "while job 0 holds [0, 1]" in overlap[0]
    subset = check_timeline(_result([(0, 0, "start", (0, 1)), (1, 0, "resize", (1, 2))]))
    assert any("subset rule" in p for p in subset)
    assert any("outside 0..3" in p for p in check_timeline(_result([(0, 0, "start", (3, 4))])))


def test_audit_catches_shared_workstations_and_actions_not_carried_out():
    from scheduler.actions import Preempt, Start
    from scheduler.live.audit import check_actions, check_physical, replay
    from scheduler.live.result import Decision, PhysicalRun
    runs = [PhysicalRun(0, 0, ("ws1", "ws2"), 0.0, 5.0, 0), PhysicalRun(1, 0, ("ws2",), 4.0, 6.0, 0)]
    assert len(check_physical(_result([], runs=runs))) == 1
    assert check_physical(_result([], runs=[runs[0], PhysicalRun(1, 0, ("ws2",), 5.0, 6.0, 0)])) == []
    state = {"free_mask": 0b1111, "running": [], "preempting": [], "preempted": [], "queue": [0]}
    decided = [Decision(0.0, "arrival", 0, state, (Start(0, (0, 1, 2, 3)),), 1e-5)]
    assert check_actions(_result([(0, 0, "arrive", ()), (0.1, 0, "start", (0, 1, 2, 3))], decided)) == []
    missing = check_actions(_result([(0, 0, "arrive", ()), (0.1, 0, "start", (0, 1))], decided))
    assert len(missing) == 1 and "job 0" in missing[0]
    # Replay: FOLDING answers an arrival on an idle machine with a start on all four, not a preempt.
    arrivals = [Arrival(0, job_class("s", {"argv": ARGV, "pmax": 4}), 0.0)]
    assert replay(_result([], decided), arrivals) == []
    wrong = [Decision(0.0, "arrival", 0, state, (Preempt(0),), 1e-5)]
    assert len(replay(_result([], wrong), arrivals)) == 1
