"""The speed meter's probe: reference work per CPU-second of one core, as JSON lines.

The testbed's speed keeper meters every host core a cluster uses (testbed/meter.py). On the
controller's own machine it runs the probe in-process (`measure`); on another host (the
Swarm backend) one container per host runs this module, and the keeper reads its output:

    python3 -m workloads.speed_probe --cores 0,1 [--seconds 4] [--tick 0.5]

Each tick it measures one kernel (multiply and matvec alternate) on each core in turn and
prints one line per sample: {"t": epoch s, "core": c, "kernel": k, "factor": f, "cpu_s": x}.
Each sample is sized to about SAMPLE_CPU_S of CPU at the core's last factor, so a slow core
costs the probe no more than a fast one (about 1.4% of a core at 0.5 s ticks). Standard
library and numpy only: it runs inside the workstation image.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

from workloads.reference import KERNELS, matvec_block, run_kernel, speed_factor

KERNEL_ORDER = ("multiply", "matvec")
SAMPLE_REF_S = 0.016  # reference-seconds of a first sample: 6-7 ms of CPU on this project's hosts
SAMPLE_CPU_S = 0.007  # CPU a later sample is sized to, from the core's last factor
_BLOCK = matvec_block()


def measure(core: int, kernel: str, ref_s: float = SAMPLE_REF_S) -> tuple[float, float, float]:
    """Pin the calling thread to `core`, run `ref_s` reference-seconds of `kernel`:
    (epoch seconds at the end, reference-seconds per CPU-second, CPU seconds it took)."""
    os.sched_setaffinity(0, {core})
    k = KERNELS[kernel]
    t0 = time.thread_time()
    done = run_kernel(kernel, k.per_ref_s * ref_s, _BLOCK if kernel == "matvec" else None)
    cpu = time.thread_time() - t0
    return time.time(), speed_factor(kernel, done, max(cpu, 1e-6)), cpu


def sample_line(t: float, core: int, kernel: str, factor: float, cpu_s: float) -> str:
    return json.dumps({"t": round(t, 3), "core": core, "kernel": kernel, "factor": round(factor, 5),
                       "cpu_s": round(cpu_s, 6)})


def parse_line(line: str) -> tuple[float, int, str, float, float] | None:
    """(t, core, kernel, factor, cpu_s) of one output line; None for anything else."""
    try:
        d = json.loads(line)
        return float(d["t"]), int(d["core"]), str(d["kernel"]), float(d["factor"]), float(d["cpu_s"])
    except (ValueError, KeyError, TypeError):
        return None


def run(cores: list[int], seconds: float | None, tick_s: float) -> None:
    last: dict[tuple[int, str], float] = {}
    end = None if seconds is None else time.monotonic() + seconds
    i = 0
    while end is None or time.monotonic() < end:
        t_start = time.monotonic()
        kernel = KERNEL_ORDER[i % len(KERNEL_ORDER)]
        for core in cores:
            f = last.get((core, kernel))
            t, factor, cpu = measure(core, kernel, SAMPLE_REF_S if f is None else SAMPLE_CPU_S * f)
            last[(core, kernel)] = factor
            print(sample_line(t, core, kernel, factor, cpu), flush=True)
        i += 1
        time.sleep(max(0.0, tick_s - (time.monotonic() - t_start)))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cores", required=True, help="host cores to meter, e.g. 0,1")
    p.add_argument("--seconds", type=float, default=None, help="stop after this long (default: run until killed)")
    p.add_argument("--tick", type=float, default=0.5, help="seconds between rounds over the cores")
    a = p.parse_args(argv)
    try:
        cores = [int(c) for c in a.cores.split(",") if c]
    except ValueError:
        p.error(f"--cores: not a list of core numbers: {a.cores!r}")
    if not cores:
        p.error("--cores: none given")
    if not a.tick > 0:
        p.error(f"--tick: must be > 0 s, got {a.tick}")
    run(cores, a.seconds, a.tick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
