"""Fuzzed SWF traces, read and imported: a valid stream or one line naming the file and line.

Bounded to a few seconds in the test command; `python -m hardening.fuzz_parsers --only swf` runs
the same property far longer. The inputs and the property are in tests/fuzzing.py.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuzzing import FUZZ, TARGETS, check, inputs



@pytest.mark.parametrize("name", ["swf"])
@FUZZ
@given(data=st.data())
def test_each_parser_gives_a_valid_object_or_one_line_naming_the_file(tmp_path: Path, name: str,
                                                                      data: st.DataObject) -> None:
    check(TARGETS[name], tmp_path, data.draw(inputs(TARGETS[name])))


@pytest.mark.parametrize("header", ["; MaxProcs: ²", "; MaxProcs: 0", "; MaxProcs: 12\n;            8"])
def test_a_max_procs_that_is_no_count_is_one_line(tmp_path: Path, header: str) -> None:
    from experiments.traces.swf import SwfError, read_swf

    path = TARGETS["swf"].write(tmp_path, header + "\n1 0 0 1 1 -1 -1 1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n")
    with pytest.raises(SwfError, match=r"^.*trace\.swf:1: header MaxProcs must be an integer > 0, got .*$"):
        read_swf(path)


def test_work_that_overflows_is_one_line_naming_the_line(tmp_path: Path) -> None:
    # 1e308 s on 64 processors is inf; the class mean then made every demand NaN (a ValueError naming no file)
    from experiments.traces.swf import SwfError, read_swf, to_stream

    path = TARGETS["swf"].write(tmp_path, "; MaxProcs: 64\n1 0 0 1e308 64 -1 -1 64 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n"
                                          "2 10 0 1e308 1 -1 -1 1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n")
    with pytest.raises(SwfError, match=r"trace\.swf:2: the job's work \(time x processors\) is too large, got inf$"):
        to_stream(read_swf(path), classes="all", time_scale=0.5, max_procs=8)
    path.write_text("; MaxProcs: 64\n1 0 0 1e308 1 -1 -1 1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n"
                    "2 10 0 1e308 1 -1 -1 1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n")  # each finite, their sum not
    assert [j.demand for j in to_stream(read_swf(path), classes="all", time_scale=0.5, max_procs=8).jobs] == [1.0, 1.0]
