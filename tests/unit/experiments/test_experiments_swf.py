"""SWF: parsing, errors with line numbers, import scaling, and the export round trip."""
from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler.jobs import FinishedJob
from experiments.traces.swf import SwfTrace, read_swf, to_stream, write_swf

# Jobs 3 (cancelled: -1 run and processors) and 5 (ran 0 s) never ran.
SAMPLE = """\
; Version: 2.2
; Computer: test machine
; MaxProcs: 64
; Note: first note
; Note: second note
;       a continuation line
;
1 100 5 50 4 -1 -1 4 60 -1 1 1 1 -1 -1 -1 -1 -1
2 160 0 100 16 -1 -1 16 -1 -1 1 2 1 -1 -1 -1 -1 -1

3 220 -1 -1 -1 -1 -1 8 -1 -1 5 1 1 -1 -1 -1 -1 -1
4 300 2.5 30 1 -1 -1 -1 40 -1 1 3 2 -1 -1 -1 -1 -1
5 400 0 0 8 -1 -1 8 10 -1 0 1 1 -1 -1 -1 -1 -1
6 500 1 10 64 -1 -1 64 20 -1 1 1 1 -1 -1 -1 -1 -1
"""


@pytest.fixture()
def trace(tmp_path: Path) -> SwfTrace:
    p = tmp_path / "trace.swf"
    p.write_text(SAMPLE)
    return read_swf(p)


def test_parse_header_fields_and_missing_values(trace: SwfTrace) -> None:
    assert trace.header["Version"] == "2.2"
    assert trace.header["Computer"] == "test machine"
    assert trace.header["Note"] == "first note\nsecond note a continuation line"  # continued, as the archive's
    assert trace.max_procs == 64
    assert "       a continuation line" in trace.comments
    assert [j.job for j in trace.jobs] == [1, 2, 3, 4, 5, 6]
    j4 = trace.jobs[3]
    assert (j4.submit, j4.wait, j4.run, j4.procs, j4.req_procs, j4.req_time, j4.status, j4.user, j4.group) == \
        (300.0, 2.5, 30.0, 1, -1, 40.0, 1, 3, 2)
    assert j4.cpu == -1 and j4.think == -1 and j4.line == 12
    assert isinstance(j4.procs, int) and isinstance(j4.submit, float)
    assert trace.whole_jobs == trace.jobs and trace.segments() == {}


@pytest.mark.parametrize(("line", "message"), [
    ("1 0 0 x 4 -1 -1 4 -1 -1 1 -1 -1 -1 -1 -1 -1 -1", "trace.swf:3: field 4 (run time) must be a number, got 'x'"),
    ("1 0 0 5 2.5 -1 -1 4 -1 -1 1 -1 -1 -1 -1 -1 -1 -1",
     "trace.swf:3: field 5 (allocated processors) must be an integer, got '2.5'"),
    ("1 0 0 5 4 -1 -1 4 -1 -1 1 -1 -1 -1 -1 -1 -1", "trace.swf:3: expected 18 fields, got 17"),
    ("1 nan 0 5 4 -1 -1 4 -1 -1 1 -1 -1 -1 -1 -1 -1 -1", "trace.swf:3: field 2 (submit time) must be finite"),
])
def test_bad_line_names_file_line_and_field(tmp_path: Path, line: str, message: str) -> None:
    p = tmp_path / "trace.swf"
    p.write_text(f"; Version: 2.2\n\n{line}\n")
    with pytest.raises(ValueError) as err:
        read_swf(p)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_bad_maxprocs_header(tmp_path: Path) -> None:
    p = tmp_path / "trace.swf"
    p.write_text("; MaxProcs: lots\n")
    with pytest.raises(ValueError, match=r"trace.swf:1: header MaxProcs must be an integer > 0, got 'lots'"):
        read_swf(p)


def test_import_scales_arrivals_demands_and_requests(trace: SwfTrace) -> None:
    imp = to_stream(trace, classes="cg", time_scale=0.1, max_procs=8)
    # work = run x allocated: 200, 1600, 30, 640; mean 617.5
    assert imp.source == [1, 2, 4, 6]
    assert [j.id for j in imp.jobs] == [0, 1, 2, 3]
    assert [j.arrival_s for j in imp.jobs] == pytest.approx([0.0, 6.0, 20.0, 40.0])
    assert [j.demand for j in imp.jobs] == pytest.approx([200 / 617.5, 1600 / 617.5, 30 / 617.5, 640 / 617.5])
    # ceil(req * 8 / 64): 4 -> 1, 16 -> 2, (-1: allocated) 1 -> 1, 64 -> 8
    assert [j.requested_procs for j in imp.jobs] == [1, 2, 1, 8]
    assert {j.cls for j in imp.jobs} == {"cg"}
    assert imp.trace_max_procs == 64 and imp.mean_work == {"cg": pytest.approx(617.5)}
    assert imp.skipped == {"never ran (run time <= 0 or allocated processors <= 0)": 2}
    assert imp.n_skipped == 2
    assert sum(j.demand for j in imp.jobs) / len(imp.jobs) == pytest.approx(1.0)


def test_import_classes_by_size_keep_each_class_mean(trace: SwfTrace) -> None:
    imp = to_stream(trace, classes={"small": (1, 8), "large": (9, 64)}, time_scale=1.0, max_procs=16)
    assert [j.cls for j in imp.jobs] == ["small", "large", "small", "large"]
    assert [j.demand for j in imp.jobs] == pytest.approx([200 / 115, 1600 / 1120, 30 / 115, 640 / 1120])
    assert [j.requested_procs for j in imp.jobs] == [1, 4, 1, 16]
    some = to_stream(trace, classes={"small": (1, 4)}, time_scale=1.0, max_procs=16)
    assert some.source == [1, 4] and some.skipped["no class for its processor count"] == 2


def test_import_from_requested_time_and_first_n(trace: SwfTrace) -> None:
    imp = to_stream(trace, classes="cg", time_scale=1.0, max_procs=8, demand_from="requested")
    # requested time x requested processors: 240, (job 2: none), 40 (x allocated 1), 1280; mean 520
    assert imp.source == [1, 4, 6]
    assert [j.demand for j in imp.jobs] == pytest.approx([240 / 520, 40 / 520, 1280 / 520])
    assert imp.skipped["no requested time"] == 1
    first = to_stream(trace, classes="cg", time_scale=1.0, max_procs=8, n=2)
    assert first.source == [1, 2] and [j.demand for j in first.jobs] == pytest.approx([0.2 / 0.9, 1.6 / 0.9])


def test_trace_max_procs_falls_back_to_the_largest_job(tmp_path: Path) -> None:
    p = tmp_path / "t.swf"
    p.write_text("1 0 0 10 4 -1 -1 16 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n"
                 "2 10 0 10 2 -1 -1 -1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n")
    imp = to_stream(read_swf(p), classes="cg", time_scale=1.0, max_procs=4)
    assert imp.trace_max_procs == 16
    assert [j.requested_procs for j in imp.jobs] == [4, 1]  # ceil(16*4/16), ceil(2*4/16)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"time_scale": 0}, "time_scale: must be a finite number > 0"),
    ({"max_procs": 0}, "max_procs: must be an integer >= 1"),
    ({"classes": {"a": (1, 8), "b": (8, 9)}}, "classes: ranges of 'a' and 'b' overlap"),
    ({"classes": {"a": (4, 2)}}, "classes: range of 'a' must be (lo, hi)"),
    ({"demand_from": "cpu"}, "demand_from: unknown 'cpu'"),
])
def test_import_bad_options(trace: SwfTrace, kwargs: dict, message: str) -> None:
    args = {"classes": "cg", "time_scale": 1.0, "max_procs": 8, **kwargs}
    with pytest.raises(ValueError) as err:
        to_stream(trace, **args)
    assert message in str(err.value)


def _outcome(job_id: int, cls: str, arrival: float, start: float, finish: float, max_procs: int,
             requested: int, preemptions: int = 0, status: str = "done") -> FinishedJob:
    return FinishedJob(id=job_id, cls=cls, demand=1.0, arrival_s=arrival, start_s=start, finish_s=finish,
                      mean_procs=float(max_procs), max_procs=max_procs, requested_procs=requested,
                      preemptions=preemptions, status=status)


RUN = [  # stream ids 0..2 are SWF job numbers 1..3
    _outcome(0, "cg300", 2.0, 3.0, 10.0, 4, 4),
    _outcome(1, "cg500", 2.5, 4.0, 20.0, 4, 8, preemptions=2),
    _outcome(2, "cg300", 5.25, 6.125, 9.125, 2, 2, preemptions=1, status="failed"),
]
SEGMENTS = {1: [(4.0, 8.0, 2), (8.0, 15.0, 4), (15.0, 20.0, 1)], 2: [(6.125, 7.5, 2), (7.5, 9.125, 1)]}


def test_export_round_trip_with_partial_executions(tmp_path: Path) -> None:
    p = tmp_path / "run.swf"
    write_swf(p, RUN, segments=SEGMENTS, header={"Computer": "nowlab now8", "MaxProcs": 8})
    text = p.read_text()
    assert "2 2.500 5.500 7.000 4 -1 -1 8 -1 -1 2 -1 -1 2 -1 -1 -1 -1" in text.splitlines()  # job 2, 2nd part
    back = read_swf(p)
    assert back.header["Preemption"] == "Double" and back.header["MaxJobs"] == "3"
    assert back.header["MaxRecords"] == "8" and back.max_procs == 8 and back.header["Version"] == "2.2"
    assert back.app_classes() == {1: "cg300", 2: "cg500"}
    assert [(j.job, j.status) for j in back.jobs] == [(1, 1), (2, 1), (2, 2), (2, 2), (2, 3), (3, 0), (3, 2), (3, 4)]
    for o, j in zip(RUN, back.whole_jobs):
        assert (j.job, j.submit, j.submit + j.wait, j.submit + j.wait + j.run) == \
            (o.id + 1, o.arrival_s, o.start_s, o.finish_s)
        assert (j.procs, j.req_procs, back.app_classes()[j.app]) == (o.max_procs, o.requested_procs, o.cls)
        assert (j.cpu, j.memory, j.req_time, j.req_memory, j.user, j.group, j.queue, j.partition,
                j.preceding, j.think) == (-1,) * 10
    assert back.segments() == {k + 1: [tuple(map(float, s[:2])) + (s[2],) for s in v] for k, v in SEGMENTS.items()}
    # the exported run imports back as a stream of its whole jobs only
    imp = to_stream(back, classes="cg", time_scale=1.0, max_procs=8)
    assert imp.source == [1, 2, 3] and imp.skipped == {}
    assert [j.arrival_s for j in imp.jobs] == [0.0, 0.5, 3.25]


def test_single_segment_or_none_writes_one_line(tmp_path: Path) -> None:
    p = tmp_path / "run.swf"
    write_swf(p, RUN[:1], segments={0: [(3.0, 10.0, 4)]}, decimals=0)
    back = read_swf(p)
    assert len(back.jobs) == 1 and back.header["Preemption"] == "No"
    assert p.read_text().splitlines()[-1] == "1 2 1 7 4 -1 -1 4 -1 -1 1 -1 -1 1 -1 -1 -1 -1"


times = st.floats(0, 1e5, allow_nan=False)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), decimals=st.integers(0, 6))
def test_round_trip_keeps_the_rounded_times(tmp_path: Path, data: st.DataObject, decimals: int) -> None:
    outcomes, segs = [], {}
    for i in range(data.draw(st.integers(1, 5))):
        a, b, c = sorted(data.draw(st.tuples(times, times, times)))
        cuts = sorted(data.draw(st.lists(st.floats(b, c), max_size=3)))
        bounds = [b, *cuts, c]
        segs[i] = [(s, e, data.draw(st.integers(1, 64))) for s, e in pairwise(bounds)]
        outcomes.append(_outcome(i, data.draw(st.sampled_from(["a", "b c", "cg300"])), a, b, c,
                                 max(p for *_, p in segs[i]), data.draw(st.integers(1, 64)),
                                 status=data.draw(st.sampled_from(["done", "failed"]))))
    p = tmp_path / "prop.swf"
    write_swf(p, outcomes, segments=segs, decimals=decimals)
    back = read_swf(p)
    tol = 1e-6 * max(1.0, 10.0 ** -decimals)
    whole = {j.job: j for j in back.whole_jobs}
    apps = back.app_classes()
    for o in outcomes:
        j = whole[o.id + 1]
        assert j.submit == pytest.approx(round(o.arrival_s, decimals), abs=tol)
        assert j.submit + j.wait == pytest.approx(round(o.start_s, decimals), abs=tol)
        assert j.submit + j.wait + j.run == pytest.approx(round(o.finish_s, decimals), abs=tol)
        assert j.status == (1 if o.status == "done" else 0) and apps[j.app] == o.cls
    got = back.segments()
    for k, v in segs.items():
        if len(v) < 2:
            assert k + 1 not in got
            continue
        assert [p for *_, p in got[k + 1]] == [p for *_, p in v]
        for (s, e, _), (s2, e2, _) in zip(v, got[k + 1]):
            assert (s2, e2) == (pytest.approx(round(s, decimals), abs=tol), pytest.approx(round(e, decimals), abs=tol))
        last = [j.status for j in back.jobs if j.job == k + 1 and j.is_partial][-1]
        assert last == (3 if outcomes[k].status == "done" else 4)


@pytest.mark.parametrize(("outcomes", "segments", "message"), [
    (RUN[:1] * 2, None, "outcomes: job ids must be unique and >= 0"),
    (RUN[:1], {9: [(0, 1, 1)]}, "segments: job 9 is not among the outcomes"),
    (RUN[:1], {0: [(3, 6, 1), (5, 10, 2)]}, "segments: job 0 part 1 starts before part 0 ends"),
    (RUN[:1], {0: [(3, 6, 0)]}, "segments: job 0 part 0 must have start <= end and procs >= 1"),
    ([_outcome(1, "a", 0, 1, 2, 1, 1, status="queued")], None, "job 1: status must be done or failed"),
])
def test_export_rejects_bad_input(tmp_path: Path, outcomes: list, segments: dict | None, message: str) -> None:
    with pytest.raises(ValueError) as err:
        write_swf(tmp_path / "x.swf", outcomes, segments=segments)
    assert message in str(err.value)
