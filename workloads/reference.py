"""Reference work: the machine-independent unit of nowlab's speeds and demands.

Two machines of the same kind ran the same compute unit at 0.2 core at 7.2e7 and 2.36e8
multiplies/s, so a cap in cores, or a demand in multiplies, means a different time on
each. nowlab states them against a *reference core* instead: a core that does the
rates below of each reference kernel per second. A workstation of speed s (reference
cores) delivers s reference-seconds of work per second of wall time; a demand of w
reference-seconds takes w / s seconds on it.

These rates are written here and nowhere else. They were set at about half of what one
core of the 2-core KVM machines of this project delivers (4.2e8-7.3e8 multiplies and
0.9e10-1.7e10 matvec flop per CPU-second, pinned, 23 Nov 2026), and below the slowest
such machine seen (3.6e8 multiplies per CPU-second), so that a speed of 0.2 is reachable
with room to spare on every one of them.

Runs inside the containers too: standard library and numpy only.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from workloads.compute import multiply

# Reference rates: work per second of one reference core.
MULTIPLY_PER_REF_S = 3.0e8       # float64 multiplies done by compute.multiply
MATVEC_FLOP_PER_REF_S = 6.0e9    # float64 flop of a dense matrix-vector product (2 per element)
# float64 multiplies of the C kernel (containers/kernels/ring.c, its #define): compiled, the same
# multiply costs about 7x less than numpy's 256-wide chunks (4.1e9/s against 5.6e8/s on one core
# here, 2 Dec 2026), so it is set at about half a core as the others are (the C kernel is not
# one of KERNELS: the speed probe runs in Python)
C_MULTIPLY_PER_REF_S = 2.0e9

# The matrix-vector kernel's block: 256 x 1024 float64 (2 MiB), the size of a CG rank's
# block at n = 2048 on 8 workstations, so it meters the same cache behaviour as CG.
MATVEC_ROWS, MATVEC_COLS = 256, 1024
MATVEC_FLOP = 2 * MATVEC_ROWS * MATVEC_COLS


@dataclass(frozen=True)
class Kernel:
    """A reference kernel: a named unit of work with its rate on the reference core."""

    name: str
    unit: str
    per_ref_s: float  # units per reference-second


KERNELS = {
    "multiply": Kernel("multiply", "multiplies", MULTIPLY_PER_REF_S),
    "matvec": Kernel("matvec", "flop", MATVEC_FLOP_PER_REF_S),
}


def ref_seconds_to_mults(ref_s: float) -> int:
    """Multiplies that take `ref_s` seconds on one reference core."""
    if not ref_s >= 0:  # also refuses NaN
        raise ValueError(f"work: must be >= 0 reference-seconds, got {ref_s}")
    return int(round(ref_s * MULTIPLY_PER_REF_S))


def mults_to_ref_seconds(mults: float) -> float:
    return float(mults) / MULTIPLY_PER_REF_S


def matvec_block(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.random((MATVEC_ROWS, MATVEC_COLS)), rng.random(MATVEC_COLS)


def run_kernel(name: str, units: float, block: tuple[np.ndarray, np.ndarray] | None = None) -> float:
    """Do `units` of a kernel's work; returns the units really done (whole calls)."""
    if name == "multiply":
        n = int(units)
        multiply(n)
        return float(n)
    if name == "matvec":
        a, x = block if block is not None else matvec_block()
        calls = max(1, int(round(units / MATVEC_FLOP)))
        for _ in range(calls):
            a @ x
        return float(calls * MATVEC_FLOP)
    raise ValueError(f"kernel: unknown {name!r} (known: {', '.join(KERNELS)})")


def speed_factor(name: str, units: float, cpu_s: float) -> float:
    """Reference-seconds of work per CPU-second: how fast this core ran the kernel."""
    if cpu_s <= 0:
        raise ValueError(f"cpu_s: must be > 0, got {cpu_s}")
    return units / cpu_s / KERNELS[name].per_ref_s

