"""Pinning workstations to cores.

Each workstation is pinned to one core: only then does a CFS cap deliver the share asked
(within ~1.5% here, against 5–10% unpinned) and does an idle-priority guest yield to an
owner process on the same workstation. Caps on one core must sum to at most 90% of it.

A speed workstation (reference cores) is placed with the cores' factors, measured just
before (testbed.meter.quick_factors). The room left on its core, at that factor, must give
the speeds pinned there with the governor's headroom: a core is refused when the speeds
exceed its room at REFUSE_AT x the factor (the governor could not cover a 20% slowdown,
the size of the 16 s-window noise), and warned about above HEADROOM_LOW x (it could not
cover the noise probe's extreme). Each speed workstation then reserves what it needs at
HEADROOM_LOW x the factor, or its share of the room (in proportion to speed) if that is
less: that is its container's cap, the governor's ceiling, and what other clusters see.
"""
from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass

from testbed.governor import HEADROOM_LOW
from testbed.spec import ClusterSpec, SpecError

CORE_LIMIT = 0.90  # fraction of a core the caps pinned to it may add up to
REFUSE_AT = 0.8    # a core's speeds must fit its room at this fraction of its factor
READINGS = 3       # at most this many factor readings before a speed refusal stands (place_on_readings)


class SpeedRefused(SpecError):
    """A core's measured factor leaves too little room for the speeds asked of it."""


@dataclass(frozen=True)
class Placement:
    cores: dict[str, int]  # workstation -> core id
    load: dict[int, float]  # core id -> sum of caps pinned to it
    cpu: dict[str, float] | None = None     # speed workstation -> cores reserved (its cap)
    factor: dict[str, float] | None = None  # speed workstation -> its core's factor when placed

    def resolve(self, spec: ClusterSpec) -> ClusterSpec:
        """The spec with its speed workstations' caps filled in (unchanged without any)."""
        return spec.resolve(self.cpu, self.factor) if self.cpu else spec


#: The core of a workstation that is pinned to none (a backend without CPU caps: local).
UNPINNED = -1


def unpinned(spec: ClusterSpec) -> Placement:
    """Every workstation on no core, nothing reserved: the placement of a backend with no caps."""
    return Placement(cores={n: UNPINNED for n in spec.names}, load={})


def _core(c: int) -> str:
    return f"core {c}"


def place(spec: ClusterSpec, cores: list[int], taken: dict[int, float] | None = None,
          factors: dict[int, float] | None = None, core_name: Callable[[int], str] = _core) -> Placement:
    """Largest share first onto the least loaded core (LPT), then refuse or warn above 90%.

    `taken` is what other running clusters already pinned, so two clusters side by side
    share the cores fairly instead of both starting on core 0. `core_name` says a core id
    in messages (placement across hosts numbers every host's cores as one list).
    """
    if not cores:
        raise SpecError("no CPU cores available to pin workstations to")
    if any(spec.speed(n) is not None for n in spec.names):
        if not factors:
            raise SpecError("workstations: speeds in reference cores need the cores' measured factors to be placed")
        return _place_speeds(spec, cores, taken or {}, factors, core_name)
    load = {c: (taken or {}).get(c, 0.0) for c in cores}
    total = sum(spec.cpu(n) for n in spec.names)
    room = sum(CORE_LIMIT - load[c] for c in cores)
    if total > room + 1e-9 and not spec.oversubscribe:
        raise SpecError(
            f"workstations: caps ask for {total:.2f} cores but only {room:.2f} are available "
            f"({len(cores)} cores at {CORE_LIMIT:.0%} each, less {sum(load.values()):.2f} used by other clusters)")
    assignment: dict[str, int] = {}
    for name in sorted(spec.names, key=lambda n: (-spec.cpu(n), spec.names.index(n))):
        core = min(cores, key=lambda c: (load[c], c))
        assignment[name] = core
        load[core] += spec.cpu(name)
    over = {c: v for c, v in load.items() if v > CORE_LIMIT + 1e-9}
    if over:
        detail = ", ".join(f"{core_name(c)}: {v:.2f}" for c, v in sorted(over.items()))
        if not spec.oversubscribe:
            raise SpecError(f"workstations: caps cannot be packed at <= {CORE_LIMIT:.0%} per core ({detail})")
        warnings.warn(f"cores oversubscribed ({detail}); delivered shares will fall short by 5-10%", stacklevel=2)
    return Placement(cores={n: assignment[n] for n in spec.names}, load=load)


def place_on_readings(spec: ClusterSpec, cores: list[int], taken: dict[int, float],
                      read: Callable[[], dict[int, float]], readings: int = READINGS) -> Placement:
    """`place` on the cores' factors from `read`; on a speed refusal, read again (up to `readings`
    in all) and keep each core's best so far. One 2 s reading here ranged 1.02-2.06 within minutes
    (the KVM guest's vCPU loses whole seconds), and a spec refused on a low one fitted a moment
    later: five refusals in four minutes before one cluster came up. A core's best reading is
    what it can give; the governor then holds the speed live and the meter records what each job
    got, so a slow spell after placement shows in the results, not in a refusal."""
    factors = read()
    for _ in range(readings - 1):
        try:
            return place(spec, cores, taken, factors)
        except SpeedRefused:
            factors = {c: max(f, factors.get(c, 0.0)) for c, f in read().items()}
    return place(spec, cores, taken, factors)  # the last reading's refusal stands


def _place_speeds(spec: ClusterSpec, cores: list[int], taken: dict[int, float], factors: dict[int, float],
                  core_name: Callable[[int], str] = _core) -> Placement:
    """Raw caps first (LPT), then speeds, largest first, onto the core with most speed room."""
    raw = [n for n in spec.names if spec.speed(n) is None]
    fast = [n for n in spec.names if spec.speed(n) is not None]
    load = {c: taken.get(c, 0.0) for c in cores}
    assignment: dict[str, int] = {}
    for name in sorted(raw, key=lambda n: (-spec.cpu(n), spec.names.index(n))):
        core = min(cores, key=lambda c: (load[c], c))
        assignment[name] = core
        load[core] += spec.cpu(name)
    asked = {c: 0.0 for c in cores}

    def room(c: int) -> float:
        return max(0.0, CORE_LIMIT - load[c])

    for name in sorted(fast, key=lambda n: (-(spec.speed(n) or 0.0), spec.names.index(n))):
        speed = spec.speed(name) or 0.0
        # the core with the largest fraction of its speed room left (spreads, like LPT); among equal
        # fractions (nothing asked yet) the one with the most room, so another cluster's load counts
        core = max(cores, key=lambda c: (1 - asked[c] / max(room(c) * factors[c] * REFUSE_AT, 1e-9),
                                         round(room(c) * factors[c], 9), -c))
        if speed > room(core) * factors[core] * REFUSE_AT - asked[core]:  # else the one with most room
            core = max(cores, key=lambda c: (room(c) * factors[c] * REFUSE_AT - asked[c], -c))
        avail = room(core) * factors[core] * REFUSE_AT - asked[core]
        if speed > avail + 1e-9 and not spec.oversubscribe:
            raise SpeedRefused(
                f"workstation {name}: speed {speed:.3f} reference cores asked, {max(avail, 0.0):.3f} available "
                f"({core_name(core)}: {room(core):.2f} cores free x factor {factors[core]:.2f} x {REFUSE_AT} headroom"
                f"{f', less {asked[core]:.3f} given to others' if asked[core] else ''})")
        assignment[name] = core
        asked[core] += speed
    cpu: dict[str, float] = {}
    factor: dict[str, float] = {}
    for c in cores:
        mine = [n for n in fast if assignment[n] == c]
        if not mine:
            continue
        if asked[c] > room(c) * factors[c] * HEADROOM_LOW + 1e-9:
            warnings.warn(f"{core_name(c)}: speeds {asked[c]:.3f} reference cores leave the governor thin headroom "
                          f"(it covers a slowdown to {asked[c] / max(room(c) * factors[c], 1e-9):.2f}x of factor "
                          f"{factors[c]:.2f}, not {HEADROOM_LOW}x)", stacklevel=3)
        for n in mine:
            speed = spec.speed(n) or 0.0
            share = room(c) * speed / asked[c] if asked[c] else 0.0
            need = speed / (HEADROOM_LOW * factors[c])  # enough for the probe's extreme, no more
            cpu[n] = math.floor(min(1.0, need, max(share, 0.001)) * 1e4) / 1e4  # down: shares must still fit
            if not spec.defaults.governor:  # a fixed cap: what gives the speed at the factor seen now
                cpu[n] = round(min(1.0, speed / factors[c]), 4)
            factor[n] = round(factors[c], 4)
        load[c] += sum(cpu[n] for n in mine)
    return Placement(cores={n: assignment[n] for n in spec.names}, load=load, cpu=cpu, factor=factor)
