"""Reading a Parallel Workloads Archive trace: 100,000 job lines as rigid jobs, and as SWF lines.

Writes an archive-style file (the SDSC-SP2 header of tests/data, 100,000 lines with cancelled
jobs and missing requested times), then times `read_rigid` (what a replay reads) and
`read_swf` (every line, as the malleable import reads it), best of three.
Target (issue 48): well under a second or two for 100,000 lines.
Run: .venv/bin/python benchmarks/bench_swf_read.py [--jobs 100000]
"""
from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

from experiments.traces.swf import read_swf
from experiments.traces.swf_rigid import read_rigid

HEAD = Path(__file__).resolve().parents[1] / "tests" / "data" / "archive_sdsc_sp2_head.swf"


def write_trace(path: Path, jobs: int, seed: int = 1) -> None:
    """`jobs` lines after the archive header: 1 in 8 cancelled (half never started), 1 in 17 without requested time."""
    rng = random.Random(seed)
    header = [line for line in HEAD.read_text().splitlines() if line.startswith(";")]
    lines, t = header, 0
    for j in range(1, jobs + 1):
        t += rng.randint(0, 300)
        status = 5 if j % 8 == 0 else rng.choice((1, 1, 1, 0))
        run = -1 if status == 5 and j % 16 == 0 else rng.randint(0, 40000)
        p = rng.choice((1, 2, 4, 8, 16, 32, 64, 128))
        req = -1 if j % 17 == 0 else rng.choice((600, 3600, 14400, 64800))
        lines.append(f"{j:6d} {t:9d} {rng.randint(0, 90000):7d} {run:6d} {p:4d} {run:6d} -1 {p:4d} {req:6d} -1 "
                     f"{status} {rng.randint(1, 400)} 1 -1 {rng.randint(1, 4)} -1 -1 -1")
    path.write_text("\n".join(lines) + "\n")


def best_of(fn, repeat: int = 3) -> tuple[float, float]:
    """Best wall and CPU seconds of `repeat` calls (CPU time: the figure on a shared, busy host)."""
    wall, cpu = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return min(wall), min(cpu)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=100_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "trace.swf"
        write_trace(path, args.jobs)
        rigid = best_of(lambda: read_rigid(path))
        lines = best_of(lambda: read_swf(path))
        summary = read_rigid(path).summary
    for name, (wall, cpu) in (("read_rigid", rigid), ("read_swf", lines)):
        print(f"{name}: {args.jobs} job lines in {wall:.2f} s wall, {cpu:.2f} s CPU "
              f"({args.jobs / cpu:,.0f} lines per CPU-second)")
    print("counts:", summary.as_dict())


if __name__ == "__main__":
    main()
