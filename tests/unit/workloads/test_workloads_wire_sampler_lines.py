"""The sampler line's one parser (workloads/wire/sampler_lines.py), which both backends' monitors use."""
from __future__ import annotations

import json

from workloads.wire import sampler_lines


def _procs(raw: dict) -> int:
    return int(raw["procs_ns"])


def test_each_workstation_of_a_line_is_made_by_the_callers_reading():
    line = json.dumps({"t": 2.0, "ws": {"ws1": {"t": 1.5, "procs_ns": 7, "tc": ""},
                                        "ws2": {"t": 1.6, "procs_ns": "9", "tc": ""}}})
    assert sampler_lines.parse(line, _procs) == {"ws1": 7, "ws2": 9}


def test_a_workstation_half_read_is_left_out_and_the_others_kept():
    line = json.dumps({"t": 2.0, "ws": {"ws1": {"t": 1.5}, "ws2": {"procs_ns": "x"},
                                        "ws3": {"procs_ns": None}, "ws4": {"procs_ns": 3}}})
    assert sampler_lines.parse(line, _procs) == {"ws4": 3}


def test_what_is_not_a_sampler_line_gives_no_readings():
    for line in ["", "sampler starting", '{"t": 1', "[1, 2]", '"ws"', json.dumps({"t": 1.0}),
                 json.dumps({"t": 1.0, "ws": [1]}), json.dumps({"t": 1.0, "ws": {}, "error": "OSError: gone"})]:
        assert sampler_lines.parse(line, _procs) == {}, line
