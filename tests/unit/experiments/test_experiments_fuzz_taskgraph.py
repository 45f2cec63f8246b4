"""Fuzzed task graphs and workstation files: a valid object or one line naming the file.

Bounded to a few seconds in the test command; `python -m hardening.fuzz_parsers --only taskgraph` runs
the same property far longer. The inputs and the property are in tests/fuzzing.py.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuzzing import FUZZ, TARGETS, check, inputs



@pytest.mark.parametrize("name", ["taskgraph", "workstations"])
@FUZZ
@given(data=st.data())
def test_each_parser_gives_a_valid_object_or_one_line_naming_the_file(tmp_path: Path, name: str,
                                                                      data: st.DataObject) -> None:
    check(TARGETS[name], tmp_path, data.draw(inputs(TARGETS[name])))


@pytest.mark.parametrize("name", ["taskgraph", "workstations"])
def test_every_shipped_file_is_a_valid_seed(tmp_path: Path, name: str) -> None:
    shipped = sorted((Path(__file__).resolve().parents[3] / "experiments" / "studies" / "menasce_rao" / "configs").glob("*.toml"))
    assert len(TARGETS["taskgraph"].seeds) + len(TARGETS["workstations"].seeds) == len(shipped) >= 4
    assert TARGETS[name].seeds
    assert [check(TARGETS[name], tmp_path, seed) for seed in TARGETS[name].seeds] == ["valid"] * len(TARGETS[name].seeds)
