"""Fuzzed cluster specs and availability traces: a valid object or one line naming the file.

Bounded to a few seconds in the test command; `python -m hardening.fuzz_parsers --only cluster-spec` runs
the same property far longer. The inputs and the property are in tests/fuzzing.py.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuzzing import FUZZ, TARGETS, check, inputs



@pytest.mark.parametrize("name", ["cluster-spec", "availability-csv"])
@FUZZ
@given(data=st.data())
def test_each_parser_gives_a_valid_object_or_one_line_naming_the_file(tmp_path: Path, name: str,
                                                                      data: st.DataObject) -> None:
    check(TARGETS[name], tmp_path, data.draw(inputs(TARGETS[name])))


@pytest.mark.parametrize("text, message", [  # found by the fuzzing: a TypeError, or NaN taken as a time
    ("time,workstation,available\n0,ws1,1\n0,ws0.5\n", "availability.csv:3: expected 3 columns, got 2"),
    ("time,workstation,available\nnan,ws1,1\n", "availability.csv:2: time: must be a finite number >= 0, got 'nan'"),
    ("time,workstation,available\ninf,ws1,1\n", "availability.csv:2: time: must be a finite number >= 0, got 'inf'"),
    ("time,workstation,available\n0, ,1\n", "availability.csv:2: workstation: empty"),
])
def test_bad_availability_rows_found_by_fuzzing(tmp_path: Path, text: str, message: str) -> None:
    from testbed.load.caps import read_trace
    from testbed.spec import SpecError

    (tmp_path / "availability.csv").write_text(text)
    with pytest.raises(SpecError) as err:
        read_trace(tmp_path / "availability.csv")
    assert str(err.value) == message


def test_an_availability_trace_that_is_not_utf8_is_one_line(tmp_path: Path) -> None:
    from testbed.spec import SpecError

    TARGETS["availability-csv"].write(tmp_path, b"time,workstation,available\n0,ws\xc3,1\n")
    with pytest.raises(SpecError, match=r"^availability\.csv: not UTF-8 text$"):
        TARGETS["availability-csv"].parse(tmp_path)


@pytest.mark.parametrize("value, message", [  # found by the fuzzing: OverflowError, TypeError
    ("inf", "a rate must be a finite number, got inf"),
    ("[[1], [2]]", "not a rate: [[1], [2]] (write e.g. '10mbit', '1gbit' or 10000000)"),
    ("{ a = 1 }", "not a rate: {'a': 1} (write e.g. '10mbit', '1gbit' or 10000000)"),
])
def test_a_rate_that_is_no_number_or_text_is_one_line(tmp_path: Path, value: str, message: str) -> None:
    from testbed.spec import SpecError, load

    (tmp_path / "spec.toml").write_text(f'[defaults]\negress = {value}\n[[workstation]]\nname = "ws1"\n')
    with pytest.raises(SpecError) as err:
        load(tmp_path / "spec.toml")
    assert str(err.value) == f"spec.toml: defaults.egress: {message}"


def test_a_parse_that_asks_for_too_much_memory_is_a_traceback_not_an_oom_kill(tmp_path: Path) -> None:
    """The ceiling that keeps a fuzzed input from taking the host's memory (tests/fuzzing.py)."""
    from fuzzing import memory_ceiling

    with pytest.raises(MemoryError):
        with memory_ceiling(extra=64 << 20):
            bytearray(512 << 20)
    assert len(bytearray(512 << 20)) == 512 << 20  # the limit is lifted after the block
