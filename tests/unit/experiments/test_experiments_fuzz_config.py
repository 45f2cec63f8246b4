"""Fuzzed experiment configs (workload arguments included): a valid object or one line naming the file.

Bounded to a few seconds in the test command; `python -m hardening.fuzz_parsers --only experiment-config` runs
the same property far longer. The inputs and the property are in tests/fuzzing.py.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuzzing import FUZZ, TARGETS, check, inputs



@pytest.mark.parametrize("name", ["experiment-config", "summary-config"])
@FUZZ
@given(data=st.data())
def test_each_parser_gives_a_valid_object_or_one_line_naming_the_file(tmp_path: Path, name: str,
                                                                      data: st.DataObject) -> None:
    check(TARGETS[name], tmp_path, data.draw(inputs(TARGETS[name])))


@pytest.mark.parametrize("old, new, message", [
    ("rates = [0.15]", "rates = [nan]", "arrivals.rates[0]: Input should be a finite number, got nan"),
    ("minutes = 2", "minutes = inf", "minutes: Input should be a finite number, got inf"),
    ("phases = 10,", "phases = -3,", "class.syn: args.phases: Input should be greater than or equal to 1, got -3"),
])
def test_non_finite_numbers_and_bad_workload_args_are_one_line(tmp_path: Path, old: str, new: str,
                                                               message: str) -> None:
    from experiments.config import ConfigError, load

    seed = next(s for s in TARGETS["experiment-config"].seeds if 'name = "tiny"' in s)
    path = TARGETS["experiment-config"].write(tmp_path, seed.replace(old, new))
    with pytest.raises(ConfigError) as err:
        load(path)
    assert str(err.value) == f"config.toml: {message}"
