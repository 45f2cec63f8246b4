"""An archive trace keeps its header, notes that run over several lines included.

The fixture (tests/data/archive_sdsc_sp2_head.swf) is written by hand after the first lines of
the Parallel Workloads Archive's SDSC-SP2 log (this machine cannot download the archive): the
archive's layout (`; Key: value`, continuation lines indented past the `;`, a bare `;` closing
the header), its field names, and four job lines in its column layout.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from experiments.traces.swf import SwfError, read_swf, to_stream

ARCHIVE = Path(__file__).resolve().parents[2] / "data" / "archive_sdsc_sp2_head.swf"


def test_the_header_fields_are_kept_with_multi_line_values_joined():
    trace = read_swf(ARCHIVE)
    h = trace.header
    assert h["Version"] == "2.2" and h["Computer"] == "IBM SP2"
    assert h["Installation"] == "San Diego Supercomputer Center (SDSC)"
    assert h["Information"] == "http://www.cs.huji.ac.il/labs/parallel/workload/ http://www.sdsc.edu/"
    assert h["Queues"] == "queue 1 is express, queue 2 is high priority, queue 3 is normal and queue 4 is low priority."
    assert h["StartTime"] == "Fri May 01 00:31:04 PDT 1998" and h["TimeZoneString"] == "US/Pacific"
    assert trace.notes == [
        "Scheduler is LoadLeveler with EASY backfilling. The nodes are single-processor nodes, so the processor "
        "and node counts are the same.",
        "The original log contained 73496 records; none were removed.",
        "Runs of more than 18 hours were killed by the system."]
    assert trace.max_procs == 128 and [j.job for j in trace.jobs] == [1, 2, 3, 4]
    assert len(trace.comments) == 26  # every comment line is still there as written


def test_the_archive_trace_imports():
    imported = to_stream(read_swf(ARCHIVE), classes="all", time_scale=0.01, max_procs=8)
    assert [j.requested_procs for j in imported.jobs] == [1, 4, 1, 2]  # 1, 64, 8, 32 of 128 -> of 8
    assert imported.trace_max_procs == 128


def test_an_indented_known_key_starts_a_field_and_a_blank_comment_ends_a_note(tmp_path):
    path = tmp_path / "t.swf"
    path.write_text("; Note: one\n;       two\n;   MaxProcs: 4\n;\n;       not a continuation\n"
                    "1 0 0 1 1 -1 -1 1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n")
    trace = read_swf(path)
    assert trace.notes == ["one two"] and trace.max_procs == 4


def test_a_continued_max_procs_is_one_line_naming_its_line(tmp_path):
    path = tmp_path / "t.swf"
    path.write_text("; MaxProcs: 128\n;           processors\n")
    with pytest.raises(SwfError, match=r"t\.swf:1: header MaxProcs must be an integer > 0, got '128 processors'$"):
        read_swf(path)
