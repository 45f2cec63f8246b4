"""The inputs every parser is fuzzed with, shared by the tests (tests/unit/*/test_*_fuzz_*.py) and the
longer run (hardening/fuzz_parsers.py).

A target is one parser: the files it reads, valid files to start from (shipped ones where
there are any), and the one error type it may raise. The property: on any input the parser
returns an object or raises that error with one line (no newline) that names the file; any
other exception is a traceback a user would see. Inputs are random text, or a valid file
mutated: lines deleted, duplicated or swapped, characters deleted or inserted, numbers
replaced by nan, inf, -1, 0, a huge number, another type or nothing, the text cut short, bytes
that are not UTF-8.
"""
from __future__ import annotations

import contextlib
import math
import re
import resource
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
ASSIGNMENT = re.compile(r"^(\s*[\w.\"-]+\s*=\s*)(.+)$")  # a TOML `key = value` line
TOML_VALUES = ("nan", "inf", "-inf", "-1", "0", "-0.0", "1e308", "1e-320", "99999999999999999999", '""', '"x"',
               '"nan"', "true", "[]", "{}", "[1, 2]", '["a", "a"]', "{ a = 1 }", "[[1], [2]]")
NUMBER = re.compile(r"(?<![A-Za-z_])-?\d+(?:\.\d+)?(?:e-?\d+)?")
REPLACEMENTS = ("nan", "inf", "-inf", "-1", "0", "-0", "1e308", "99999999999999999999999", "", "0.5", "1e-320",
                "\"x\"", "true", "²", "1_0", "[]", "{}", "[1, 2]", "{ a = 1 }", "\"\"", ",", "\"nan\"")


@dataclass(frozen=True)
class Target:
    """One parser: `parse(folder)` reads `files` (named) written into `folder`."""

    name: str
    file: str  # the file that is mutated; the other seed files are written as they are
    seeds: tuple[str, ...]  # valid texts of `file`
    parse: Callable[[Path], object]
    error: type[Exception]
    others: dict[str, str] = field(default_factory=dict)  # files beside it, unmutated
    # errors of what is built from a parsed file (a spec's tables): one line, naming what it is about
    later: tuple[type[Exception], ...] = ()

    def write(self, folder: Path, text: str | bytes) -> Path:
        for name, body in self.others.items():
            (folder / name).write_text(body)
        path = folder / self.file
        path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8", errors="surrogateescape"))
        return path


class Traceback(AssertionError):
    """A parser raised something other than its one-line error (or a bad one)."""


def check(target: Target, folder: Path, text: str | bytes) -> str:
    """'valid' or 'error' for the parser's answer to `text`; Traceback for anything else."""
    target.write(folder, text)
    try:
        with memory_ceiling():
            target.parse(folder)
    except target.error as exc:
        msg = str(exc)
        if not msg or "\n" in msg or "\r" in msg:
            raise Traceback(f"{target.name}: not one line: {msg!r}") from exc
        if not _names_a_file(target, msg):
            raise Traceback(f"{target.name}: names no file: {msg!r}") from exc
        return "error"
    except target.later as exc:
        if not str(exc) or "\n" in str(exc):
            raise Traceback(f"{target.name}: not one line: {str(exc)!r}") from exc
        return "error"
    except Exception as exc:  # noqa: BLE001 - any other exception is what the fuzzing looks for
        raise Traceback(f"{target.name}: {type(exc).__name__}: {exc}") from exc
    return "valid"


#: What one parse may add to the process's address space. An input that asks for more (a
#: `count = 1e9` once took 23 GB and the kernel killed a test worker) fails as a MemoryError,
#: counted as a traceback, instead of taking the host's memory.
PARSE_MEMORY_BYTES = 2 << 30


@contextlib.contextmanager
def memory_ceiling(extra: int = PARSE_MEMORY_BYTES) -> Iterator[None]:
    """RLIMIT_AS at the process's current size plus `extra`, for the block; restored after."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    size = int(Path("/proc/self/statm").read_text().split()[0]) * resource.getpagesize()
    ceiling = size + extra if hard == resource.RLIM_INFINITY else min(size + extra, hard)
    resource.setrlimit(resource.RLIMIT_AS, (ceiling, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _names_a_file(target: Target, msg: str) -> bool:
    return any(name in msg for name in (target.file, *target.others))


# ---- strategies ------------------------------------------------------------------------------

def _delete_line(lines: list[str], i: int, _: str) -> list[str]:
    return lines[:i] + lines[i + 1:]


def _duplicate_line(lines: list[str], i: int, _: str) -> list[str]:
    return lines[:i + 1] + lines[i:]


def _swap_lines(lines: list[str], i: int, _: str) -> list[str]:
    j = (i + 1) % len(lines)
    out = list(lines)
    out[i], out[j] = out[j], out[i]
    return out


def _replace_number(lines: list[str], i: int, new: str) -> list[str]:
    found = list(NUMBER.finditer(lines[i]))
    if not found:
        return lines
    m = found[len(lines[i]) % len(found)]
    return lines[:i] + [lines[i][:m.start()] + new + lines[i][m.end():]] + lines[i + 1:]


def _replace_value(lines: list[str], i: int, new: str) -> list[str]:
    """A TOML value replaced by another valid one: the file still parses, so the models are reached."""
    m = ASSIGNMENT.match(lines[i])
    if not m:
        return lines
    value = TOML_VALUES[(len(lines[i]) + len(new)) % len(TOML_VALUES)]
    return lines[:i] + [m.group(1) + value] + lines[i + 1:]


def _delete_char(lines: list[str], i: int, _: str) -> list[str]:
    line = lines[i]
    k = len(line) // 2
    return lines[:i] + [line[:k] + line[k + 1:]] + lines[i + 1:]


def _insert_text(lines: list[str], i: int, new: str) -> list[str]:
    line = lines[i]
    k = len(line) // 3
    return lines[:i] + [line[:k] + new + line[k:]] + lines[i + 1:]


def _truncate(lines: list[str], i: int, _: str) -> list[str]:
    return lines[:i]


MUTATIONS = (_delete_line, _duplicate_line, _swap_lines, _replace_number, _replace_number, _replace_number,
             _replace_value, _replace_value, _replace_value, _delete_char, _insert_text, _truncate)


@st.composite
def mutated(draw: st.DrawFn, seeds: tuple[str, ...]) -> str:
    """A valid file with one to four mutations."""
    lines = draw(st.sampled_from(seeds)).splitlines()
    for _ in range(draw(st.integers(1, 4))):
        if not lines:
            break
        op = draw(st.sampled_from(MUTATIONS))
        i = draw(st.integers(0, len(lines) - 1))
        new = draw(st.one_of(st.sampled_from(REPLACEMENTS), st.text(max_size=6)))
        lines = op(lines, i, new)
    return "\n".join(lines) + draw(st.sampled_from(("\n", "", "\r\n")))


@st.composite
def not_utf8(draw: st.DrawFn, seeds: tuple[str, ...]) -> bytes:
    """A valid file with bytes that are not UTF-8 put in somewhere."""
    data = draw(st.sampled_from(seeds)).encode()
    k = draw(st.integers(0, len(data)))
    return data[:k] + draw(st.sampled_from((b"\xff", b"\xc3", b"\x00", b"\xed\xa0\x80", b"\xfe\xff"))) + data[k:]


def inputs(target: Target) -> st.SearchStrategy[str | bytes]:
    """Mostly mutated valid files; some random text, random lines in the file's alphabet, and bytes."""
    alphabet = st.sampled_from(sorted(set("".join(target.seeds)) | {"\n"}))
    return st.one_of(mutated(target.seeds), mutated(target.seeds), mutated(target.seeds),
                     st.text(max_size=200), st.text(alphabet, max_size=300), not_utf8(target.seeds),
                     st.binary(max_size=100))


# ---- the targets -----------------------------------------------------------------------------

def _text(path: Path) -> str:
    return path.read_text()


def _absolute(text: str, base: Path, *keys: str) -> str:
    """`key = "rel/path"` made absolute, so a config copied elsewhere still finds its cluster spec."""
    for key in keys:
        text = re.sub(rf'(?m)^(\s*{key}\s*=\s*")([^"/][^"]*)"',
                      lambda m: f'{m.group(1)}{(base / m.group(2)).resolve()}"', text)
    return text


def _summary(folder: Path) -> object:
    from experiments.studies.padhye_dowdy.summary import load_config
    return load_config(folder / "summary.toml")


def _spec(folder: Path) -> object:
    from testbed.spec import load
    return load(folder / "spec.toml")


def _config(folder: Path) -> object:
    from experiments.config import load
    return load(folder / "config.toml")


def _swf(folder: Path) -> object:
    from experiments.traces.swf import read_swf, to_stream
    trace = read_swf(folder / "trace.swf")
    return trace, to_stream(trace, classes="all", time_scale=0.5, max_procs=8)


def _availability(folder: Path) -> object:
    from testbed.load.caps import read_trace
    return read_trace(folder / "availability.csv")


def _jobs_csv(folder: Path) -> object:
    from experiments.traces.jobs_csv import read_jobs
    return read_jobs(folder / "jobs.csv")


def _stream_classes(folder: Path) -> object:
    from experiments.traces.live_inputs import load_classes
    return load_classes(folder / "classes.toml")


def _stream(folder: Path) -> object:
    from experiments.traces.live_inputs import load_classes, read_stream
    return read_stream(folder / "stream.csv", load_classes(folder / "classes.toml"))


def _taskgraph(folder: Path) -> object:
    from experiments.studies.menasce_rao.files import load_graph
    return load_graph(folder / "graph.toml")


def _workstations(folder: Path) -> object:
    from experiments.studies.menasce_rao.files import load_workstations
    return load_workstations(folder / "workstations.toml")


def _timeshare(folder: Path) -> object:
    from experiments.studies.zhou_brent.spec import load_timeshare_spec
    spec = load_timeshare_spec(folder / "timeshare.toml")
    return spec, spec.tables()


def _run_rows(folder: Path) -> object:
    from experiments.studies.zhou_brent.files import read_rows
    return read_rows(folder)


def _is_graph(text: str) -> bool:
    return "task" in tomllib.loads(text)


AVAILABILITY = "time,workstation,available\n0,ws1,1\n10,ws1,0.25\n12.5,ws1,0\n0,ws2,0.5\n30,ws2,1\n"
JOBS_SEVCIK = "id,arrival,W,alpha,beta,pmax,phases,reconfig_cost\n1,0,16,1,0.5,,3,\n2,1.5,4,0,0,2,1,0.5\n3,7,40,2,1,8,10,1\n"
JOBS_T1 = "id,arrival,t1,pmax,phases\na,0,12,4,3\nb,0.5,3,,\nc,2,30,1,1\n"
CLASSES = """\
[class.short]
argv = ["python3", "-m", "workloads.synthetic", "--phases", "6", "--mults", "4000000"]
W = 6.0
alpha = 0.5
beta = 0.2
pmax = 4

[class.cg]
argv = ["python3", "-m", "workloads.cg", "--n", "500"]
t1 = 20.5
pmax = 8
"""
STREAM = "id,class,arrival\n0,short,0\n1,cg,1.5\n2,short,1.5\n7,cg,30\n"


def _run_dir_files() -> dict[str, str]:
    """A valid time-sharing run directory (every file of experiments/studies/zhou_brent/files.py)."""
    import tempfile

    from experiments.studies.zhou_brent.files import write_rows
    from experiments.studies.zhou_brent.measure import (IntervalRow, JobRow, ManagerRow, RunRow, RunRows, ShareRow, SkewRow,
                                               TableRow)
    rows = RunRows(RunRow("s", "loose", 2, 0.4, 5.0, 0.5, 1.0, ""),
                   (JobRow("A", "ws1 ws2 ws3", 3, 0.5, 3.0, 1.5, 3.1, 2.0, 1.0, 0.97, -0.03, "yes"),),
                   (ShareRow("ws1", "A", 0.5, 0.49, 6), ShareRow("ws2", "A", 0.5, 0.5, 6)),
                   (IntervalRow("ws1", "A", 0.0, 0.2), IntervalRow("ws1", "", 0.2, 0.4)),
                   (TableRow("ws1", 1, "A", 0.0, 0.2, 0.0), TableRow("ws1", 2, "", 0.2, 0.0, 0.2)),
                   (SkewRow("ws1", "sample", 1.0, -0.001, 0.002),),
                   (ManagerRow("ws1", 10, 0.0004, 0.003, 0.007, 0.0002, 0.1, math.nan, False),))
    with tempfile.TemporaryDirectory() as d:
        return {p.name: p.read_text() for p in write_rows(Path(d), rows)}


def targets() -> dict[str, Target]:
    """Every parser fuzzed, by name (the name a test or `fuzz_parsers.py --only` picks)."""
    from experiments.config import ConfigError
    from experiments.studies.padhye_dowdy.summary import SummaryError
    from experiments.traces.swf import SwfError
    from experiments.studies.menasce_rao.files import WorkstationsError
    from experiments.studies.zhou_brent.files import RunFilesError
    from experiments.studies.zhou_brent.spec import TimeshareSpecError
    from scheduler.taskgraph.spec import TaskGraphError
    from scheduler.timeshare.slots import SlotError
    from testbed.spec import SpecError

    specs = tuple(_text(p) for p in sorted((ROOT / "compose" / "specs").glob("*.toml")))
    config_dir = ROOT / "experiments" / "configs"
    studies = ROOT / "experiments" / "studies"
    experiment_configs = [p for d in (config_dir, studies / "padhye_dowdy" / "configs",
                                      studies / "anastasiadis_sevcik" / "configs") for p in sorted(d.glob("*.toml"))]
    configs = tuple(_absolute(_text(p), p.parent, "cluster", "path")
                    for p in [*experiment_configs, ROOT / "tests" / "data" / "exp_tiny.toml"])
    swfs = (_text(ROOT / "tests" / "data" / "archive_sdsc_sp2_head.swf"),
            *(_text(p) for p in sorted((ROOT / "experiments" / "results").rglob("*.swf"))[:3]))
    tg = [_text(p) for p in sorted((studies / "menasce_rao" / "configs").glob("*.toml"))]
    summaries = tuple(_text(p) for p in sorted((studies / "padhye_dowdy" / "configs" / "summaries").glob("*.toml")))
    timeshare = tuple(_text(p) for p in sorted((studies / "zhou_brent" / "configs").glob("*.toml")))
    run_files = _run_dir_files()
    return {t.name: t for t in (
        Target("cluster-spec", "spec.toml", specs, _spec, SpecError),
        Target("experiment-config", "config.toml", configs, _config, ConfigError),
        Target("summary-config", "summary.toml", summaries, _summary, SummaryError),
        Target("swf", "trace.swf", swfs, _swf, SwfError),
        Target("availability-csv", "availability.csv", (AVAILABILITY,), _availability, SpecError),
        Target("jobs-csv", "jobs.csv", (JOBS_SEVCIK, JOBS_T1), _jobs_csv, ValueError),
        Target("stream-classes", "classes.toml", (CLASSES,), _stream_classes, ValueError),
        Target("stream-csv", "stream.csv", (STREAM,), _stream, ValueError, {"classes.toml": CLASSES}),
        Target("taskgraph", "graph.toml", tuple(t for t in tg if _is_graph(t)), _taskgraph, TaskGraphError),
        Target("workstations", "workstations.toml", tuple(t for t in tg if not _is_graph(t)), _workstations,
               WorkstationsError),
        Target("timeshare-spec", "timeshare.toml", timeshare, _timeshare, TimeshareSpecError, later=(SlotError,)),
        *(Target(f"timeshare-run-{name.removesuffix('.csv')}", name, (body,), _run_rows, RunFilesError,
                 {n: b for n, b in run_files.items() if n != name}) for name, body in sorted(run_files.items())),
    )}


TARGETS = targets()
#: The test command's bound: 100 inputs per parser (hardening/fuzz_parsers.py runs far more).
FUZZ = settings(max_examples=100, deadline=None, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
