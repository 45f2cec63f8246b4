"""Fuzz every input parser much longer than the test command does, and count what came back.

    nice -n 19 .venv/bin/python -m hardening.fuzz_parsers --examples 5000
    nice -n 19 .venv/bin/python -m hardening.fuzz_parsers --examples 500 --only swf --only jobs-csv

The inputs and the property are the tests' (tests/fuzzing.py): random text and mutated valid
files; each answer must be a valid object or the parser's one-line error naming the file. Per
parser it prints inputs tried, one-line errors, valid objects and tracebacks (the target is 0),
and the first few tracebacks with the input that caused them.
"""
from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from types import ModuleType

from hypothesis import HealthCheck, Phase, given, settings

from benchmarks._common import console, table
from testbed.progress import progress_bar


def _tests_fuzzing() -> ModuleType:
    """tests/fuzzing.py, the tests' own inputs and property, loaded from its file: tests/ is no
    package, and `import tests` finds a dependency's package of that name first."""
    spec = importlib.util.spec_from_file_location("fuzzing", Path(__file__).resolve().parents[1] / "tests" / "fuzzing.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["fuzzing"] = module  # its dataclasses look their module up while being made
    spec.loader.exec_module(module)
    return module


_fuzzing = _tests_fuzzing()
Target, Traceback, check, inputs, targets = (_fuzzing.Target, _fuzzing.Traceback, _fuzzing.check,
                                             _fuzzing.inputs, _fuzzing.targets)


def fuzz(target: Target, examples: int, folder: Path, tick) -> tuple[Counter, list[tuple[str, str]]]:
    """Run `examples` inputs through the parser; every outcome is counted, none stops the run."""
    counts: Counter = Counter()
    found: list[tuple[str, str]] = []

    @settings(max_examples=examples, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(inputs(target))
    def one(text: str) -> None:
        try:
            counts[check(target, folder, text)] += 1
        except Traceback as exc:
            counts["traceback"] += 1
            found.append((str(exc), text))
        tick()

    one()
    return counts, found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=2000, help="inputs per parser")
    parser.add_argument("--only", action="append", default=[], help="a parser's name (repeat); default all")
    parser.add_argument("--show", type=int, default=3, help="tracebacks shown per parser")
    args = parser.parse_args()
    everything = targets()
    unknown = sorted(set(args.only) - set(everything))
    if unknown:
        parser.error(f"--only: unknown parser {unknown[0]!r} (known: {', '.join(everything)})")
    chosen = [everything[n] for n in (args.only or everything)]
    rows, shown, total_tb = [], [], 0
    t0 = time.monotonic()
    with progress_bar() as update, tempfile.TemporaryDirectory() as tmp:
        done = [0]
        total = args.examples * len(chosen)

        def tick() -> None:
            done[0] += 1
            update("fuzzing", done[0], total)

        for target in chosen:
            folder = Path(tmp) / target.name
            folder.mkdir()
            counts, found = fuzz(target, args.examples, folder, tick)
            tried = sum(counts.values())
            total_tb += counts["traceback"]
            rows.append([target.name, str(tried), str(counts["error"]), str(counts["valid"]), str(counts["traceback"])])
            shown += [(target.name, msg, text) for msg, text in found[:args.show]]
    table(f"Parsers fuzzed ({time.monotonic() - t0:.0f} s)", ["parser", "inputs", "one-line errors", "valid",
                                                               "tracebacks"], rows)
    for name, msg, text in shown:
        console.print(f"{name}: {msg}", markup=False, style="red")
        console.print(f"    input: {text[:300]!r}", markup=False)
    return 1 if total_tb else 0


if __name__ == "__main__":
    raise SystemExit(main())
