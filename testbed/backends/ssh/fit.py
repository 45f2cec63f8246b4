"""Which host each workstation is, decided before anything starts: pure.

A workstation on an SSH host is the host itself: one workstation per host, pinned to one of
its cores and capped there, as a container is on one core here. Why not one workstation
per host core: workstations sharing a host share its address and its network interface,
so neither their names (MPI, ssh) nor their links (tc shapes an interface's egress by
destination, not by source process) could be told apart without root-only plumbing on
every host. A lab's workstation is one machine; so is ours.

`Cluster.provision` places workstations on `Backend.cores()` before `up`; this backend
offers one slot per host (slot i is the spec's i-th host), so the placement's distinct
slots are distinct hosts. A workstation that names its host gets it whatever slot it drew.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from testbed.backends.ssh.discovery import HostInfo
from testbed.placement import CORE_LIMIT, HEADROOM_LOW, REFUSE_AT
from testbed.placement_hosts import HostCores, place_hosts
from testbed.spec import ClusterSpec, SpecError


def speed_caps(spec: ClusterSpec, host_of: Mapping[str, str], infos: Mapping[str, HostInfo],
               pinned: Mapping[str, int]) -> tuple[dict[str, float], dict[str, float]]:
    """Each speed workstation's cap (cores) and its core's factor at placement: testbed.placement's
    rule for one workstation alone on its core (room 90%, the governor's headroom), so it is
    governed as a container on this machine is. A speed the core cannot give at that headroom is
    one line naming the host."""
    cpu: dict[str, float] = {}
    factor: dict[str, float] = {}
    for i, ws in enumerate(spec.workstations):
        speed = spec.speed(ws.name)
        if speed is None:
            continue
        host = host_of[ws.name]
        core = pinned[host]
        f = infos[host].factors.get(core)
        field = f"workstation[{i}].speed" if ws.speed is not None else "defaults.speed"
        if f is None or f <= 0:
            raise SpecError(f"{field}: host {host!r} gave no reading of core {core}'s speed")
        avail = CORE_LIMIT * f * REFUSE_AT
        if speed > avail + 1e-9 and not spec.oversubscribe:
            raise SpecError(f"{field}: host {host!r} core {core} gives {avail:.3f} reference cores at most "
                            f"({CORE_LIMIT:.0%} of it x factor {f:.2f} x {REFUSE_AT} headroom), {speed:.3f} asked")
        need = speed / (HEADROOM_LOW * f)
        cap = math.floor(min(1.0, need, CORE_LIMIT) * 1e4) / 1e4
        if not spec.defaults.governor:  # a fixed cap: what gives the speed at the factor seen now
            cap = round(min(1.0, speed / f), 4)
        cpu[ws.name], factor[ws.name] = cap, round(f, 4)
    return cpu, factor


def check_fit(spec: ClusterSpec, infos: Mapping[str, HostInfo]) -> dict[str, int]:
    """The core each host's workstation is pinned to; a one-line error naming the host that cannot
    take one (cores missing, or another nowlab cluster already on it), or the count that cannot fit."""
    if not spec.hosts:
        raise SpecError("host: the SSH backend needs the hosts listed ([[host]] tables with name and address)")
    if len(spec.names) > len(spec.hosts):
        raise SpecError(f"workstations: {len(spec.names)} workstations but {len(spec.hosts)} hosts "
                        f"(on SSH hosts each workstation is a whole host)")
    named: dict[str, list[str]] = {}
    for ws in spec.workstations:
        if ws.host is not None:
            named.setdefault(ws.host, []).append(ws.name)
    for h, names in named.items():
        if len(names) > 1:
            raise SpecError(f"host {h!r}: {len(names)} workstations name it ({', '.join(names)}); "
                            f"on SSH hosts a workstation is a whole host")
    for h in spec.hosts:
        others = [c for c in infos[h.name].clusters if c != spec.name]
        if others:
            raise SpecError(f"host {h.name!r}: no free core, nowlab cluster {others[0]!r} already runs there "
                            f"(a workstation is a whole host)")
    # The spec's core lists against what each host has, with placement's own messages
    place_hosts(spec, {h: HostCores(cores=list(i.cores), factors=dict(i.factors) or None) for h, i in infos.items()})
    return {h.name: (sorted(infos[h.name].cores) if h.cores == "all" else sorted(h.cores))[0] for h in spec.hosts}


def assign(spec: ClusterSpec, slots: Mapping[str, int]) -> dict[str, str]:
    """Workstation -> host: a named host first, then each other workstation its slot's host
    (slot i: the spec's i-th host), or the next free one if a named workstation took it."""
    hosts: Sequence[str] = [h.name for h in spec.hosts]
    out = {ws.name: ws.host for ws in spec.workstations if ws.host is not None}
    free = [h for h in hosts if h not in out.values()]
    for name in sorted((n for n in spec.names if n not in out), key=lambda n: (slots.get(n, 0), spec.names.index(n))):
        want = hosts[slots[name]] if 0 <= slots.get(name, -1) < len(hosts) else None
        host = want if want in free else free[0]
        free.remove(host)
        out[name] = host
    return {n: out[n] for n in spec.names}
