"""Fuzzed task graphs and workstation files: a valid object or one line naming the file.

Bounded to a few seconds in the test command; `benchmarks/fuzz_parsers.py --only taskgraph` runs
the same property far longer. The inputs and the property are in tests/fuzzing.py.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from fuzzing import check, inputs, targets

TARGETS = targets()
FUZZ = settings(max_examples=100, deadline=None, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@FUZZ
@given(data=inputs(TARGETS["taskgraph"]))
def test_taskgraph_is_a_valid_object_or_one_line_naming_the_file(tmp_path: Path, data: str) -> None:
    check(TARGETS["taskgraph"], tmp_path, data)


@FUZZ
@given(data=inputs(TARGETS["workstations"]))
def test_workstations_is_a_valid_object_or_one_line_naming_the_file(tmp_path: Path, data: str) -> None:
    check(TARGETS["workstations"], tmp_path, data)


@pytest.mark.parametrize("name", ["taskgraph", "workstations"])
def test_every_shipped_file_is_a_valid_seed(tmp_path: Path, name: str) -> None:
    shipped = sorted((Path(__file__).resolve().parent.parent / "experiments" / "configs" / "taskgraphs").glob("*.toml"))
    assert len(TARGETS["taskgraph"].seeds) + len(TARGETS["workstations"].seeds) == len(shipped) >= 4
    assert TARGETS[name].seeds
    assert [check(TARGETS[name], tmp_path, seed) for seed in TARGETS[name].seeds] == ["valid"] * len(TARGETS[name].seeds)
