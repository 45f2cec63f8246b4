"""The synthetic workload's demand per phase, as multiplies or as reference work.

`--mults` is a count of multiplies, which takes a different time on each
machine; `--work` states the same demand in reference-seconds (a reference
core's seconds, workloads/reference.py), converted here with the one
reference rate. Apart from workloads/synthetic.py so the conversion is
checked without MPI. Standard library and numpy only (runs in the containers).
"""
from __future__ import annotations

import argparse
import math

from workloads.reference import ref_seconds_to_mults

DEFAULT_MULTS = 66000  # the workload's default per phase when neither option is given


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--mults", type=int, default=None,
                        help=f"total float multiplies per phase, all ranks (default {DEFAULT_MULTS})")
    parser.add_argument("--work", type=float, default=None,
                        help="work per phase, all ranks, in reference-seconds (instead of --mults)")


def mults_per_phase(mults: int | None, work: float | None) -> int:
    """The phase's multiplies from either option; a ValueError (one line naming the option) otherwise."""
    if mults is not None and work is not None:
        raise ValueError("give --mults or --work, not both")
    if work is not None:
        if not (math.isfinite(work) and work > 0):
            raise ValueError(f"--work: must be > 0 reference-seconds, got {work}")
        return ref_seconds_to_mults(work)
    if mults is None:
        return DEFAULT_MULTS
    if mults < 0:
        raise ValueError(f"--mults: must be >= 0, got {mults}")
    return mults


def resolve(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """`mults_per_phase` of parsed arguments; bad input ends the program with one line (exit 2)."""
    try:
        return mults_per_phase(args.mults, args.work)
    except ValueError as exc:
        parser.exit(2, f"{parser.prog}: error: {exc}\n")
        raise  # unreachable: parser.exit raises SystemExit
