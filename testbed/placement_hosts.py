"""Pinning workstations to cores across several hosts (issue 18), as a pure function.

The per-core rules are testbed.placement's (caps <= 90% of a core, speeds within their
core's room at the governor's headroom), applied by calling `place` itself, so one host and
many cannot drift apart. Two passes:

1. Workstations that name a host are placed on that host's cores alone, host by host. If
   they do not fit, the error names the host: nothing else is placed.
2. The others go over every host's cores at once, numbered as one list (host order, then
   core id), largest share first onto the least loaded core (place's LPT), with pass 1's
   caps counted as taken. Why LPT over all cores rather than host by host: a CFS cap is
   delivered best on the least loaded core, and that is a per-core matter, not a per-host
   one. Ties go to the lower number, so equal shares fill host 1's cores before host 2's at
   each level, and neighbouring workstations (ws1, ws2, ...) tend to share a host: the
   engine's first-fit blocks then keep a job's ranks off the overlay where they can. Per-link
   shaping pairs need no locality: tc shapes each container's egress in its own namespace,
   on any host.

A speed workstation placed in pass 2 on a core that pass 1 used sees pass 1's reserved caps
as taken (as it sees other clusters'), not their speeds.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from testbed.placement import Placement, place
from testbed.spec import ClusterSpec, HostSpec, SpecError

LOCAL = "local"  # the one host of a spec that lists none


@dataclass(frozen=True)
class HostCores:
    """What a backend found on one host: its online cores, what other clusters pinned, its factors."""

    cores: list[int]
    taken: dict[int, float] = field(default_factory=dict)  # core -> caps other clusters pinned
    factors: dict[int, float] | None = None  # core -> measured reference cores (None: not measured)


@dataclass(frozen=True)
class HostPlacement:
    host: dict[str, str]  # workstation -> host name
    core: dict[str, int]  # workstation -> core id on its host
    load: dict[str, dict[int, float]]  # host -> core -> sum of caps pinned (other clusters' included)
    cpu: dict[str, float] = field(default_factory=dict)  # speed workstation -> cores reserved
    factor: dict[str, float] = field(default_factory=dict)  # speed workstation -> its core's factor

    def on(self, host: str) -> list[str]:
        """The workstations placed on `host`, in the spec's order."""
        return [n for n, h in self.host.items() if h == host]

    def resolve(self, spec: ClusterSpec) -> ClusterSpec:
        """The spec with its speed workstations' caps filled in (unchanged without any)."""
        return spec.resolve(self.cpu, self.factor) if self.cpu else spec


def place_hosts(spec: ClusterSpec, found: Mapping[str, HostCores]) -> HostPlacement:
    """Pin every workstation to one core of one host; a SpecError (one line) if they can't be.

    `found` is keyed by host name: every host the spec lists, or, for a spec that lists
    none, the one host (conventionally LOCAL) the cluster runs on today.
    """
    hosts = _usable(spec, found)
    names = spec.names
    named = {n: spec.workstation(n).host for n in names if spec.workstation(n).host is not None}
    host_of: dict[str, str] = {}
    core_of: dict[str, int] = {}
    cpu: dict[str, float] = {}
    factor: dict[str, float] = {}
    load = {h: {c: hc.taken.get(c, 0.0) for c in hc.cores} for h, hc in hosts.items()}

    for h, hc in hosts.items():  # pass 1: workstations that name their host
        mine = [n for n in names if named.get(n) == h]
        if not mine:
            continue
        sub = _only(spec, mine)
        _need_factors(sub, {h: hc})
        try:
            p = place(sub, hc.cores, load[h], hc.factors, core_name=lambda c, h=h: f"host {h!r} core {c}")
        except SpecError as exc:
            raise SpecError(f"host {h!r}: {_drop_field(str(exc))} (for the {len(mine)} workstation(s) naming it)") from None
        _keep(p, h, {c: c for c in hc.cores}, host_of, core_of, cpu, factor, load)

    rest = [n for n in names if n not in named]
    if rest:  # pass 2: the others over every host's cores as one list
        ids = [(h, c) for h, hc in hosts.items() for c in hc.cores]
        sub = _only(spec, rest)
        _need_factors(sub, hosts)
        taken = {i: load[h][c] for i, (h, c) in enumerate(ids)}
        factors = {i: hosts[h].factors[c] for i, (h, c) in enumerate(ids) if hosts[h].factors}
        p = place(sub, list(range(len(ids))), taken, factors or None,
                  core_name=lambda i: f"host {ids[i][0]!r} core {ids[i][1]}")
        for h in hosts:
            _keep(p, h, {i: c for i, (hh, c) in enumerate(ids) if hh == h}, host_of, core_of, cpu, factor, load)
    return HostPlacement(host={n: host_of[n] for n in names}, core={n: core_of[n] for n in names},
                         load=load, cpu={n: cpu[n] for n in names if n in cpu},
                         factor={n: factor[n] for n in names if n in factor})


def _usable(spec: ClusterSpec, found: Mapping[str, HostCores]) -> dict[str, HostCores]:
    """Each host's cores as the spec allows them, its factors as measured (else as the spec gives)."""
    if not spec.hosts:
        if not found:
            raise SpecError("host: no host to place on (a spec without hosts needs this one's cores)")
        wanted = [HostSpec(name=h, address=h) for h in found]
    else:
        wanted = list(spec.hosts)
    out: dict[str, HostCores] = {}
    for i, h in enumerate(wanted):
        hc = found.get(h.name)
        if hc is None or not hc.cores:
            raise SpecError(f"host[{i}]: host {h.name!r} has no cores known (not reached, or it reported none)")
        if h.cores == "all":
            cores = sorted(hc.cores)
        else:
            missing = sorted(set(h.cores) - set(hc.cores))
            if missing:
                raise SpecError(f"host[{i}].cores: host {h.name!r} has no core(s) {missing} "
                                f"(it has {_span(sorted(hc.cores))})")
            cores = sorted(h.cores)
        factors = hc.factors if hc.factors else h.factors
        out[h.name] = HostCores(cores, {c: hc.taken.get(c, 0.0) for c in cores},
                                {c: factors[c] for c in cores if c in factors} if factors else None)
    return out


def _need_factors(sub: ClusterSpec, hosts: Mapping[str, HostCores]) -> None:
    """Speeds need every candidate core's factor: say which host lacks them, not a KeyError."""
    if not any(sub.speed(n) is not None for n in sub.names):
        return
    for h, hc in hosts.items():
        lacking = [c for c in hc.cores if not hc.factors or c not in hc.factors]
        if lacking:
            raise SpecError(f"host {h!r}: speeds in reference cores need its cores' measured factors "
                            f"(none for core(s) {lacking}; measure them or give host.factors)")


def _only(spec: ClusterSpec, names: list[str]) -> ClusterSpec:
    """The spec cut to some of its workstations (not re-validated: links may name the others)."""
    keep = set(names)
    return spec.model_copy(update={"workstations": [ws for ws in spec.workstations if ws.name in keep]})


def _keep(p: Placement, h: str, core_ids: dict[int, int], host_of: dict[str, str], core_of: dict[str, int],
          cpu: dict[str, float], factor: dict[str, float], load: dict[str, dict[int, float]]) -> None:
    """Record a pass's placement on host h, whose cores are `core_ids` (pass id -> core id)."""
    for n, i in p.cores.items():
        if i in core_ids:
            host_of[n], core_of[n] = h, core_ids[i]
            if p.cpu and n in p.cpu:
                cpu[n] = p.cpu[n]
                factor[n] = (p.factor or {})[n]
    for i, c in core_ids.items():
        load[h][c] = p.load[i]


def _drop_field(message: str) -> str:
    """place's messages start with the spec field ("workstations: "); the host names it here."""
    return message.split(": ", 1)[1] if message.startswith("workstations: ") else message


def _span(cores: list[int]) -> str:
    return f"{cores[0]}-{cores[-1]}" if cores == list(range(cores[0], cores[-1] + 1)) else str(cores)
