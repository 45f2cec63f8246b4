"""A task graph is refused, in one line naming the task or arc, for each kind of bad input."""
from __future__ import annotations

import pytest

from experiments.studies.menasce_rao.files import TASKGRAPHS_DIR, load_graph, load_workstations
from scheduler.taskgraph.spec import TaskGraph, TaskGraphError

GOOD = """
task = [{ name = "A", demand_ref_s = 1.0 }, { name = "B", demand_ref_s = 2.0 }, { name = "C", demand_ref_s = 0.5 }]
arc = [{ from = "A", to = "B", bytes = 100 }, { from = "B", to = "C", bytes = 0 }]
"""


def error_of(tmp_path, text: str) -> str:
    path = tmp_path / "g.toml"
    path.write_text(text)
    with pytest.raises(TaskGraphError) as exc:
        load_graph(path)
    message = str(exc.value)
    assert "\n" not in message
    assert message.startswith("g.toml: ")
    return message


def test_a_good_graph_loads_with_its_structure(tmp_path):
    path = tmp_path / "g.toml"
    path.write_text(GOOD)
    g = load_graph(path)
    assert g.pred == {"A": (), "B": ("A",), "C": ("B",)}
    assert g.succ["A"] == ("B",)
    assert g.levels == {"A": 0, "B": 1, "C": 2}
    assert g.arc_bytes[("A", "B")] == 100
    assert g.initial == "A"


@pytest.mark.parametrize("bad, expected", [
    ('{ from = "B", to = "A", bytes = 1 }', "task 'A': on a cycle (A -> B -> A)"),
    ('{ from = "C", to = "C", bytes = 1 }', "task 'C': on a cycle (C -> C)"),
    ('{ from = "B", to = "Z", bytes = 1 }', "arc B->Z: unknown task 'Z'"),
    ('{ from = "Y", to = "A", bytes = 1 }', "arc Y->A: unknown task 'Y'"),
    ('{ from = "A", to = "C", bytes = -5 }', "arc A->C: bytes must be >= 0, got -5"),
    ('{ from = "A", to = "B", bytes = 7 }', "arc A->B: given twice"),
])
def test_a_bad_arc_is_named(tmp_path, bad, expected):
    text = GOOD.replace('{ from = "B", to = "C", bytes = 0 }]', '{ from = "B", to = "C", bytes = 0 }, ' + bad + "]")
    assert error_of(tmp_path, text) == f"g.toml: {expected}"


@pytest.mark.parametrize("demand", ["0.0", "-1.0", "nan"])
def test_a_zero_negative_or_nan_demand_names_the_task(tmp_path, demand):
    text = GOOD.replace('name = "B", demand_ref_s = 2.0', f'name = "B", demand_ref_s = {demand}')
    assert error_of(tmp_path, text).startswith("g.toml: task 'B': demand_ref_s must be > 0 reference-seconds, got ")


def test_a_duplicate_task_name_is_named(tmp_path):
    text = GOOD.replace('name = "C"', 'name = "B"')
    assert error_of(tmp_path, text) == "g.toml: task 'B': duplicate task name"


def test_a_long_cycle_names_a_task_on_it_not_one_before_it(tmp_path):
    text = GOOD.replace('{ from = "B", to = "C", bytes = 0 }]', '{ from = "B", to = "C", bytes = 0 }, '
                        '{ from = "C", to = "B", bytes = 0 }]')
    assert error_of(tmp_path, text) == "g.toml: task 'B': on a cycle (B -> C -> B)"


def test_a_misspelt_key_and_a_wrong_type_are_one_line(tmp_path):
    assert "did you mean 'demand_ref_s'" in error_of(tmp_path, GOOD.replace("demand_ref_s = 2.0", "demand_ref = 2.0"))
    assert error_of(tmp_path, GOOD.replace("bytes = 100", 'bytes = "lots"')).startswith("g.toml: arc[0].bytes:")


def test_a_missing_file_says_where_it_was_looked_for(tmp_path):
    with pytest.raises(TaskGraphError, match="no such task graph"):
        load_graph(tmp_path / "nowhere.toml")


def test_the_shipped_graphs_load_and_keep_the_papers_shapes():
    shipped = {p.stem for p in TASKGRAPHS_DIR.glob("*.toml")} - {"menasce-rao-classes"}
    assert shipped == {"fig1", "wavefront", "small-then-large"}
    wave = load_graph("wavefront")
    widths = [sum(1 for v in wave.levels.values() if v == lv) for lv in range(5)]
    assert widths == [1, 2, 3, 2, 1]  # Fig. 3: parallelism 1 -> 3 -> 1
    assert {a.size_bytes for a in wave.arcs} == {40_000}
    assert len({t.demand_ref_s for t in wave.tasks}) == 1  # the same matrix multiplication
    fig1 = load_graph("fig1")
    assert len(fig1.tasks) == 10 and fig1.pred["T10"] == ("T8", "T9") and fig1.succ["T1"] == ("T2", "T3")
    stl = load_graph("small-then-large")
    first, last = [stl.task[n].demand_ref_s for n in ("S1", "L1")]
    assert last > 10 * first


def test_the_shipped_classes_follow_table_2_and_fit_this_machine():
    ws = load_workstations("menasce-rao-classes").workstations
    speed = {w.kind: w.speed_ref_cores for w in ws}
    assert speed["SPARC5"] / speed["LX"] == pytest.approx(300.6 / 145.9, rel=0.005)
    assert speed["SPARC20"] / speed["LX"] == pytest.approx(300.6 / 113.6, rel=0.005)
    assert len(ws) == 9 and max(w.speed_ref_cores for w in ws) <= 0.45
    assert sum(w.speed_ref_cores for w in ws) <= 2 * 0.9  # at 1 reference core per core, at most 0.9 a core


def test_the_model_refuses_an_empty_graph():
    with pytest.raises(ValueError):
        TaskGraph.model_validate({"task": []})


def test_a_changed_copy_is_checked_again_and_forgets_the_cached_queries():
    g = TaskGraph.model_validate({"task": [{"name": "A", "demand_ref_s": 1.0}]})
    assert g.task["A"].demand_ref_s == 1.0  # fills the cache
    bigger = g.model_copy(update={"tasks": [{"name": "A", "demand_ref_s": 3.0}]})
    assert bigger.task["A"].demand_ref_s == 3.0
    with pytest.raises(ValueError, match="task 'A': demand_ref_s must be > 0"):
        g.model_copy(update={"tasks": [{"name": "A", "demand_ref_s": -1.0}]})
