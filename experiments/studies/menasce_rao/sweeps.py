"""The sweeps of Menascé & Rao's Figs. 4, 5 and 6 (§5): the owners' D, N and Z in turn.

"The parameters Z, D, and N for the owner workload are assumed to have the baseline values
unless stated otherwise" (N = 2, D = 1 s, Z = 5 s), and "three workstations were used to
obtain all the plots": each point is the wave front on the three workstations of one class,
with every one of them loaded by the same owners.

Our copy of the paper has no figure axes, only the text: Fig. 5 reaches N = 5 and starts at
N = 1 (the two it quotes), Figs. 4 and 6 sweep D and Z around the baseline. The points are
chosen to keep a live sweep at `--reps 2` near half an hour (`estimate_s` in `figures.py`), so
each curve has three points, the baseline one of them:
  D: 0.25, 1, 2 s (rho = D/Z from 0.05 to 0.4; the wide first step makes the slopes, whose
     growth is the "non-linear effect", differ by more than the runs' noise);
  N: 1, 2, 5 (the two quoted points and the baseline);
  Z: 2.5, 5, 20 s (heavy owners to nearly idle ones: "the dramatic decrease").
A fourth point per curve (D = 3, N = 3, Z = 10) would add about 7, 4 and 3 minutes.
Values are the paper's units; the owners the daemons run are scaled by TIME_SCALE like the
tasks. The baseline point is shared: it is measured once and appears in all three figures.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from experiments.studies.menasce_rao.paper import CLASSES, TIME_SCALE
from testbed.spec import OwnerLoad

#: The paper's baseline owners (§4, Table 3): N daemons, D s of CPU each time, every Z s on average.
BASELINE_N, BASELINE_D_S, BASELINE_Z_S = 2, 1.0, 5.0


@dataclass(frozen=True)
class Sweep:
    figure: int
    parameter: str                 # "D", "N" or "Z": the owners' knob on the x axis
    values: tuple[float, ...]      # in the paper's units (s for D and Z)
    axis: str                      # the x label, paper-style


SWEEPS: dict[int, Sweep] = {
    4: Sweep(4, "D", (0.25, 1.0, 2.0), "owner CPU demand D (s, paper's units)"),
    5: Sweep(5, "N", (1, 2, 5), "owner processes N"),
    6: Sweep(6, "Z", (2.5, 5.0, 20.0), "owner think time Z (s, paper's units)"),
}


@dataclass(frozen=True)
class Point:
    """One class's wave front under one owner load, in the paper's units."""

    kind: str        # LX, SPARC5, SPARC20
    n: int
    d_s: float
    z_s: float

    def owners(self) -> OwnerLoad:
        """What the daemons run: the paper's D and Z times TIME_SCALE (N unchanged)."""
        return OwnerLoad(n=self.n, z=self.z_s * TIME_SCALE, d=self.d_s * TIME_SCALE)

    def value(self, parameter: str) -> float:
        return {"D": self.d_s, "N": float(self.n), "Z": self.z_s}[parameter]


def figures(text: str) -> list[int]:
    """'4,5,6' -> [4, 5, 6]; an unknown figure or an empty list is one line naming the option."""
    try:
        chosen = [int(p) for p in text.split(",") if p.strip()]
    except ValueError:
        raise ValueError(f"--figures: expected figure numbers like 4,5,6, got {text!r}") from None
    bad = [f for f in chosen if f not in SWEEPS]
    if bad or not chosen:
        raise ValueError(f"--figures: {bad[0] if bad else 'none'} is not one of the §5 figures "
                         f"({', '.join(map(str, SWEEPS))})")
    return sorted(set(chosen))


def point(kind: str, parameter: str, value: float) -> Point:
    """The baseline with one knob moved."""
    n, d, z = BASELINE_N, BASELINE_D_S, BASELINE_Z_S
    if parameter == "N":
        n = int(value)
    elif parameter == "D":
        d = float(value)
    elif parameter == "Z":
        z = float(value)
    else:
        raise ValueError(f"parameter: {parameter!r} is not one of D, N, Z")
    return Point(kind, n, d, z)


def curve(figure: int, kind: str) -> list[tuple[float, Point]]:
    """One class's curve of a figure: (x in the paper's units, the point), in x order."""
    sweep = SWEEPS[figure]
    return [(float(v), point(kind, sweep.parameter, v)) for v in sweep.values]


def points(chosen: Sequence[int], kinds: Sequence[str] = tuple(CLASSES)) -> list[Point]:
    """Every point the chosen figures need, once each (the shared baseline once per class), class by class."""
    out: list[Point] = []
    for kind in kinds:
        for fig in chosen:
            for _x, p in curve(fig, kind):
                if p not in out:
                    out.append(p)
    return out
