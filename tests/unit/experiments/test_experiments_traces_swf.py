"""A Parallel Workloads Archive trace read as rigid jobs: header, cancelled jobs, partial lines,
missing fields and malformed lines, each counted by the rule experiments/traces/swf_rigid.py states.

The header is the archive-style SDSC-SP2 head of tests/data (continuation lines, a URL on a
continuation line, MaxProcs/MaxNodes/UnixStartTime); the job lines after it are written here
so that every rule has a case.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from experiments.traces.swf import SwfError
from experiments.traces.swf_rigid import RigidJob, read_rigid

ARCHIVE = Path(__file__).resolve().parents[2] / "data" / "archive_sdsc_sp2_head.swf"
# job submit wait run alloc cpu mem req_procs req_time req_mem status user group app queue part prec think
MORE = """\
    5    700    -1     -1 -1   -1 -1 16  3600 -1 5  5 1 -1 3 -1 -1 -1
    6    710    30     50  4   45 -1  4  1800 -1 5  5 1 -1 3 -1 -1 -1
    7    800    10    100  8   90 -1  8    -1 -1 1  6 2 -1 2 -1 -1 -1
    8    900    -1     -1 -1   -1 -1 -1    -1 -1 0  6 2 -1 2 -1 -1 -1
    9    950    20    300 -1   -1 -1 -1   600 -1 1  7 2 -1 2 -1 -1 -1
   10   1000     5    200  2   -1 -1  2   900 -1 1  7 2 -1 2 -1 -1 -1
   10   1000     5    120  2   -1 -1  2   900 -1 2  7 2 -1 2 -1 -1 -1
   10   1000   125     80  2   -1 -1  2   900 -1 3  7 2 -1 2 -1 -1 -1
   11   1100     0     60  1   -1 -1 -1    -1 -1 -1 -1 -1 -1 0 -1 -1 -1
"""


def archive_with_more(tmp_path: Path, extra: str = MORE) -> Path:
    path = tmp_path / "sdsc.swf"
    path.write_text(ARCHIVE.read_text() + extra)
    return path


def test_the_archive_header_and_its_jobs_as_rigid_records():
    trace = read_rigid(ARCHIVE)
    assert trace.max_procs == 128 and trace.unix_start_time == 893466664
    assert trace.header["Information"] == "http://www.cs.huji.ac.il/labs/parallel/workload/ http://www.sdsc.edu/"
    assert trace.header["MaxNodes"] == "128" and len(trace.comments) == 26
    assert trace.jobs[1] == RigidJob(job=2, submit_s=223.0, wait_s=41300.0, run_s=8121.0, procs_requested=64,
                                     procs_allocated=64, requested_time_s=14400.0, status=1, user=2, group=1,
                                     app=None, queue=3, partition=None, line=28)
    assert trace.jobs[3].status == 0 and trace.jobs[3].size == 32  # a failed job ran: kept
    s = trace.summary
    assert (s.lines, s.comment_lines, s.job_lines, s.kept) == (30, 26, 4, 4)
    assert (s.cancelled, s.partial_lines, s.missing_requested_time, s.missing_size, s.malformed) == (0, 0, 0, 0, ())


def test_cancelled_partial_and_missing_fields_are_counted_by_rule(tmp_path):
    trace = read_rigid(archive_with_more(tmp_path))
    s = trace.summary
    assert (s.lines, s.comment_lines, s.job_lines) == (39, 26, 13)
    assert s.cancelled == 2  # jobs 5 (never started, run -1) and 6 (ran 50 s, then cancelled): not replayed
    assert s.partial_lines == 2  # job 10's two parts; its whole-job line (status 1) is the job
    assert s.missing_run_time == 1  # job 8: failed before it ran (run -1)
    assert s.missing_size == 1  # job 9: neither requested nor allocated processors
    assert s.missing_submit == 0 and s.malformed == ()
    assert s.kept == 13 - 2 - 2 - 1 - 1 == len(trace.jobs)
    assert [j.job for j in trace.jobs] == [1, 2, 3, 4, 7, 10, 11]
    by_job = {j.job: j for j in trace.jobs}
    assert s.missing_requested_time == 2  # jobs 7 and 11, kept without one
    assert by_job[7].requested_time_s is None and by_job[11].requested_time_s is None
    assert by_job[10].run_s == 200.0 and by_job[10].line == 36  # the whole-job line, not a part
    eleven = by_job[11]  # status, user and requested size unknown; allocated 1; queue 0 is a queue
    assert (eleven.status, eleven.user, eleven.procs_requested, eleven.size, eleven.queue) == (-1, None, None, 1, 0)
    assert s.as_dict()["cancelled (status 5)"] == 2 and s.as_dict()["malformed"] == 0


@pytest.mark.parametrize(("line", "message"), [
    ("12 1200 0 60 1 -1 -1 1 -1 -1 1 -1 -1 -1 -1 -1 -1", r"sdsc\.swf:40: expected 18 fields, got 17$"),
    ("12 1200 0 sixty 1 -1 -1 1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1",
     r"sdsc\.swf:40: field 4 \(run time\) must be a number, got 'sixty'$"),
    ("12 1200 0 60 1.5 -1 -1 1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1",
     r"sdsc\.swf:40: field 5 \(allocated processors\) must be an integer, got '1.5'$"),
    ("12 1200 nan 60 1 -1 -1 1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1", r"sdsc\.swf:40: field 3 \(wait time\) must be finite"),
])
def test_a_malformed_line_is_one_line_naming_line_and_field_or_counted(tmp_path, line, message):
    path = archive_with_more(tmp_path, MORE + line + "\n   13   1300 0 10 1 -1 -1 1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n")
    with pytest.raises(SwfError, match=message):
        read_rigid(path)
    trace = read_rigid(path, on_bad="skip")
    assert [n for n, _ in trace.summary.malformed] == [40]
    assert re.match(message.split(":40: ")[1], trace.summary.malformed[0][1])  # the same reason, counted
    assert trace.jobs[-1].job == 13 and trace.summary.kept == 8  # the lines around it are read


def test_several_malformed_lines_are_all_listed_in_line_order(tmp_path):
    path = archive_with_more(tmp_path, "1 2 3\n" + MORE + "x 0 0 1 1 -1 -1 1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n")
    s = read_rigid(path, on_bad="skip").summary
    assert s.malformed == ((31, "expected 18 fields, got 3"), (41, "field 1 (job number) must be a number, got 'x'"))
    assert s.kept == 7


def test_max_nodes_stands_in_when_max_procs_is_absent_and_an_empty_trace_reads(tmp_path):
    path = tmp_path / "t.swf"
    path.write_text("; Version: 2.2\n; MaxNodes: 64\n; UnixStartTime: 1000\n;\n")
    trace = read_rigid(path)
    assert trace.max_procs == 64 and trace.unix_start_time == 1000 and trace.jobs == []
    assert trace.summary.job_lines == 0 and trace.summary.lines == 4


def test_unknown_on_bad_is_refused():
    with pytest.raises(ValueError, match=r"^on_bad: unknown 'ignore' \(raise, skip\)$"):
        read_rigid(ARCHIVE, on_bad="ignore")  # type: ignore[arg-type]
