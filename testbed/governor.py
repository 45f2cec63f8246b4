"""The governor's control law: quotas (cores) that keep each workstation's reference speed.

Pure: it is given the meter's factors and returns quotas; the keeper writes them. The law
is feed-forward on the measured factor, not feedback on a measured rate, so it has no
loop gain to make it ring: each step moves the quota a fraction GAIN of the way to
target / factor, at most MAX_STEP of the nominal quota, and ignores moves under DEADBAND
(the meter's noise), inside [MIN_QUOTA, budget]. With no factor it holds the last quota
and flags it stale.
"""
from __future__ import annotations

from dataclasses import dataclass, field

GAIN = 0.5        # fraction of the gap closed per step
MAX_STEP = 0.25   # largest move per step, as a fraction of the nominal quota
DEADBAND = 0.01   # relative gaps below this are noise: hold
MIN_QUOTA = 0.001  # cores; the cgroup floor cap mode uses too
# The factor can fall to about 0.6x its mean here (the noise probe's extreme), so a
# workstation's budget is what it needs at 0.6x the factor seen at placement.
HEADROOM_LOW = 0.6


@dataclass(frozen=True)
class Target:
    """One governed workstation: its speed (reference cores) and the most quota it may get."""

    speed: float        # reference cores
    budget: float       # cores: its share of the core budget, the governor's ceiling
    nominal: float      # cores: speed / factor at placement, the starting quota


@dataclass(frozen=True)
class Step:
    quota: float        # governed quota before any cap-mode scale, cores
    written: float      # quota x scale, what goes to the cgroup, cores
    factor: float | None
    stale: bool         # no factor: held
    clamped: bool       # the budget or floor bound it: the speed will fall short


@dataclass
class Governor:
    targets: dict[str, Target]
    gain: float = GAIN
    max_step: float = MAX_STEP
    deadband: float = DEADBAND
    quotas: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not 0 < self.gain <= 1:
            raise ValueError(f"gain: must be in (0, 1], got {self.gain}")
        for ws, t in self.targets.items():
            if t.speed <= 0 or t.budget <= 0 or t.nominal <= 0:
                raise ValueError(f"{ws}: speed, budget and nominal must be > 0")
            self.quotas.setdefault(ws, min(t.nominal, t.budget))

    def step(self, factors: dict[str, float | None], scales: dict[str, float] | None = None) -> dict[str, Step]:
        """One control step. `factors` per workstation (its core's); `scales` from cap mode, in [0, 1]."""
        out: dict[str, Step] = {}
        for ws, t in self.targets.items():
            q, f = self.quotas[ws], factors.get(ws)
            scale = min(1.0, max(0.0, (scales or {}).get(ws, 1.0)))
            if f is None or f <= 0:
                out[ws] = Step(q, max(MIN_QUOTA, q * scale), None, True, False)
                continue
            want = t.speed / f
            gap = want - q
            if abs(gap) > self.deadband * q:
                move = max(-self.max_step * t.nominal, min(self.max_step * t.nominal, self.gain * gap))
                q = q + move
            bounded = min(t.budget, max(MIN_QUOTA, q))
            clamped = bounded != q or want > t.budget
            self.quotas[ws] = bounded
            out[ws] = Step(bounded, max(MIN_QUOTA, bounded * scale), f, False, clamped)
        return out
