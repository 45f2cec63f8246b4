"""The resize-cost model fitted from dedicated profiling, never from the run it predicts.

A resize onto a different set costs fixed_s + per_proc_s·max(p_old, p_new)
(+ grow_s when it grows) + 8·bytes / link_bit_s (+ 8·bytes_in / recv_bit_s)
seconds: a fixed part
(checkpoint, relaunch, restore; measured by profiling resizes of the class
alone; a grow also starts new ranks) plus the data the block layout moves
over the network at the link rate (from the cluster spec). Each
workstation's egress is shaped on its own and the senders send at once, so
the transfer lasts as long as the busiest sender's share: data_bytes × the
largest fraction of the rows one workstation sends (`busiest_fraction`, the
workload's own block plan). Charging all moved bytes to one link priced CG's
8→4 shrink (25 MB from four senders) at 2.0 s where 0.8 s was measured, once
the governor left the CPU no longer the bottleneck (24 Nov 2026).
"""
from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import nnls

from workloads.redistribution_plan import plan_moves, rows_over_network

_ROWS = 1 << 20  # rows of the notional data set: enough that block rounding does not show


def moved_fraction(old: Sequence[int], new: Sequence[int]) -> float:
    """Fraction of a block-distributed data set that crosses the network from set `old` to `new`."""
    moves = plan_moves(_ROWS, [str(p) for p in old], [str(p) for p in new])
    return rows_over_network(moves) / _ROWS


def busiest_fraction(old: Sequence[int], new: Sequence[int]) -> float:
    """The largest fraction of the rows that one workstation sends over the network from set `old` to `new`."""
    sent: dict[str, int] = {}
    for m in plan_moves(_ROWS, [str(p) for p in old], [str(p) for p in new]):
        if not m.local:
            sent[m.src] = sent.get(m.src, 0) + m.rows
    return max(sent.values(), default=0) / _ROWS


def busiest_received_fraction(old: Sequence[int], new: Sequence[int]) -> float:
    """The largest fraction of the rows that one workstation takes in over the network from set `old` to `new`."""
    got: dict[str, int] = {}
    for m in plan_moves(_ROWS, [str(p) for p in old], [str(p) for p in new]):
        if not m.local:
            got[m.dst] = got.get(m.dst, 0) + m.rows
    return max(got.values(), default=0) / _ROWS


@dataclass(frozen=True)
class ResizeSample:
    """One profiled resize: sizes, seconds from partition to running again, bytes moved."""

    old: tuple[int, ...]
    new: tuple[int, ...]
    reconfig_s: float
    bytes_moved: int
    release_s: float | None = None  # partition to the old mpiexec's exit (a shrink's workstations held)


@dataclass(frozen=True)
class ResizeFit:
    """cost(old, new) = fixed_s + per_proc_s·max(|old|, |new|) [+ grow_s] + 8·data_bytes·busiest_fraction / link_bit_s
    [+ 8·data_bytes·busiest_received_fraction / recv_bit_s]. recv_bit_s None: the profile showed no receive cost."""

    fixed_s: float
    per_proc_s: float
    data_bytes: float
    link_bit_s: float
    release_s: float = 0.0
    samples: int = 0
    grow_s: float = 0.0
    recv_bit_s: float | None = None

    def __post_init__(self) -> None:
        for name in ("fixed_s", "per_proc_s", "data_bytes", "release_s", "grow_s"):
            v = getattr(self, name)
            if not (math.isfinite(v) and v >= 0):
                raise ValueError(f"resize fit: {name} must be finite and >= 0, got {v}")
        if not (math.isfinite(self.link_bit_s) and self.link_bit_s > 0):
            raise ValueError(f"resize fit: link_bit_s must be a finite rate > 0 bit/s, got {self.link_bit_s}")
        if self.recv_bit_s is not None and not (math.isfinite(self.recv_bit_s) and self.recv_bit_s > 0):
            raise ValueError(f"resize fit: recv_bit_s must be a finite rate > 0 bit/s or None, got {self.recv_bit_s}")

    def transfer_s(self, old: Sequence[int], new: Sequence[int]) -> float:
        """Seconds the data takes: the busiest sender over its link, then the busiest receiver's intake."""
        send = 8.0 * self.data_bytes * busiest_fraction(old, new) / self.link_bit_s
        if self.recv_bit_s is None:
            return send
        return send + 8.0 * self.data_bytes * busiest_received_fraction(old, new) / self.recv_bit_s

    def cost(self, old: Sequence[int], new: Sequence[int]) -> float:
        grow = self.grow_s if len(new) > len(old) else 0.0
        return self.fixed_s + self.per_proc_s * max(len(old), len(new)) + grow + self.transfer_s(old, new)

    @classmethod
    def fit(cls, samples: Sequence[ResizeSample], link_bit_s: float) -> ResizeFit:
        """Least squares (nonnegative) of the time left after the transfer on [1, max p].

        The grow part is fitted first, then the receive rate, then the per-p
        part; the last two are kept only if clearly there: with a single value
        of the regressor in the data, or a slope that explains under 10% of the
        spread, the term is left out (the fixed part alone is the median).
        """
        if not samples:
            raise ValueError("resize fit: no profiled resize to fit")
        if not (math.isfinite(link_bit_s) and link_bit_s > 0):
            raise ValueError(f"resize fit: link_bit_s must be a finite rate > 0 bit/s, got {link_bit_s}")
        fracs = [moved_fraction(s.old, s.new) for s in samples]
        totals = [s.bytes_moved / f for s, f in zip(samples, fracs) if f > 0 and s.bytes_moved > 0]
        data = float(statistics.median(totals)) if totals else 0.0
        rest = np.array([s.reconfig_s - 8.0 * data * busiest_fraction(s.old, s.new) / link_bit_s for s in samples])
        # A grow's extra (starting its new ranks) is what its time left over adds to a shrink's,
        # when both were profiled; the rest is fitted on the shrinks' terms.
        grows = np.array([len(s.new) > len(s.old) for s in samples])
        grow = 0.0
        if grows.any() and (~grows).any():
            grow = max(0.0, float(np.median(rest[grows]) - np.median(rest[~grows])))
            rest = rest - grow * grows
        # A receive cost shows as time that grows with the busiest receiver's bytes.
        recv_bit_s = None
        taken = np.array([8.0 * data * busiest_received_fraction(s.old, s.new) for s in samples])
        if data > 0 and len(set(np.round(taken, 6))) > 1 and len(samples) >= 4:
            (a, b), _ = nnls(np.column_stack([np.ones_like(taken), taken]), rest)
            # kept if it adds at least a millisecond somewhere and explains a tenth of the spread
            if b * taken.max() > 1e-3 and float(np.var(b * taken)) > 0.1 * float(np.var(rest)):
                recv_bit_s = 1.0 / float(b)
                rest = rest - b * taken
        sizes = np.array([max(len(s.old), len(s.new)) for s in samples], dtype=float)
        fixed, slope = max(0.0, float(np.median(rest))), 0.0
        if len(set(sizes)) > 1 and len(samples) >= 4:
            (a, b), _ = nnls(np.column_stack([np.ones_like(sizes), sizes]), rest)
            explained = float(np.var(b * sizes))
            if explained > 0.1 * float(np.var(rest)):
                fixed, slope = float(a), float(b)
        releases = [s.release_s for s in samples if s.release_s is not None and len(s.new) < len(s.old)]
        release = max(0.0, float(statistics.median(releases))) if releases else 0.0
        return cls(fixed, slope, data, float(link_bit_s), release, len(samples), grow, recv_bit_s)

    def to_dict(self) -> dict[str, float]:
        return {"fixed_s": self.fixed_s, "per_proc_s": self.per_proc_s, "data_bytes": self.data_bytes,
                "link_bit_s": self.link_bit_s, "release_s": self.release_s, "samples": self.samples,
                "grow_s": self.grow_s, "recv_bit_s": self.recv_bit_s}

    @classmethod
    def from_dict(cls, d: dict) -> ResizeFit:
        return cls(float(d["fixed_s"]), float(d["per_proc_s"]), float(d["data_bytes"]), float(d["link_bit_s"]),
                   float(d.get("release_s", 0.0)), int(d.get("samples", 0)), float(d.get("grow_s", 0.0)),
                   None if d.get("recv_bit_s") is None else float(d["recv_bit_s"]))
