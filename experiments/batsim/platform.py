"""The simulated platform Batsim's side describes: one resource per workstation, and how long a profile runs on it.

A resource is a workstation: a name, a speed in reference cores (docs/speed.md) and an egress
bandwidth in bit/s. SIMULATION_BEGINS lists them with `speed` (flop/s, as SimGrid gives a host's
speed), `speed_ref_cores` and `egress_bit_s` as string properties (SimGrid host properties are
strings).

How long a job runs on its allocation (`run_time_s`), the simple model this server states:

* `delay`: `delay` seconds, whatever the allocation (Batsim's rule).
* `parallel_homogeneous`: `res` executors (MPI ranks), placed round robin over the allocation, or
  by EXECUTE_JOB's `mapping`; each executor computes `cpu` flop, then sends `com` bytes to every
  other executor. A reference core does `flop_per_ref_core_s` flop/s (1e9 by default), so

      compute_s = max over hosts h of  cpu * ranks_h / (speed_h * flop_per_ref_core_s)
      comm_s    = max over hosts h of  8 * com * ranks_h * (ranks - ranks_h) / egress_h
      run_s     = compute_s + comm_s

  Traffic between ranks on one host is free; latency is not counted. The phases add, as they do
  in a real MPI program that computes and then exchanges; SimGrid's ptask model (Batsim's) runs
  them together, so for jobs with both it gives a shorter time, between max and sum.
* `nowlab` (one of the project's programs, or a user's command): the time its profile states.
  `runtime_s`: that many seconds, whatever the allocation (as `delay`). `work_ref_s` (a project
  program only): each executor computes that many reference-seconds, ranks on one host sharing it,

      run_s = max over hosts h of  work_ref_s * ranks_h / speed_h

  (the compute phase of `parallel_homogeneous`; the program's own messages are not counted).
  Neither stated: the profile cannot be simulated, one line naming it and `runtime_s`.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from experiments.batsim.protocol import Resource
from experiments.batsim.workload import DelayProfile, NowlabProfile, ParallelHomogeneousProfile, Profile

if TYPE_CHECKING:
    from testbed.spec import ClusterSpec

FLOP_PER_REF_CORE_S = 1e9
"""Flop a reference core does per second: how Batsim's `cpu` (flop) becomes reference work."""
DEFAULT_EGRESS_BIT_S = 100_000_000
DEFAULT_SPEED_REF_CORES = 1.0


class PlatformError(ValueError):
    """A platform that cannot be built, or a profile it cannot time: one line naming the field."""


@dataclass(frozen=True)
class Host:
    """One workstation as a Batsim compute resource."""

    name: str
    speed_ref_cores: float
    egress_bit_s: int


@dataclass(frozen=True)
class Platform:
    hosts: tuple[Host, ...]
    flop_per_ref_core_s: float = FLOP_PER_REF_CORE_S

    def __post_init__(self) -> None:
        if not self.hosts:
            raise PlatformError("hosts: a platform needs at least one workstation")
        names = [h.name for h in self.hosts]
        if len(set(names)) != len(names):
            raise PlatformError(f"hosts: names must be distinct, got {names}")
        for i, h in enumerate(self.hosts):
            if not h.speed_ref_cores > 0:
                raise PlatformError(f"hosts[{i}] ({h.name}): speed_ref_cores must be > 0, got {h.speed_ref_cores}")
            if not h.egress_bit_s > 0:
                raise PlatformError(f"hosts[{i}] ({h.name}): egress_bit_s must be > 0, got {h.egress_bit_s}")
        if not self.flop_per_ref_core_s > 0:
            raise PlatformError(f"flop_per_ref_core_s: must be > 0, got {self.flop_per_ref_core_s}")

    @property
    def size(self) -> int:
        return len(self.hosts)

    def resources(self) -> tuple[Resource, ...]:
        """The compute resources of SIMULATION_BEGINS, ids 0.. in host order."""
        return tuple(Resource(id=i, name=h.name, state="idle",
                              properties={"speed": f"{h.speed_ref_cores * self.flop_per_ref_core_s:g}",
                                          "speed_ref_cores": f"{h.speed_ref_cores:g}",
                                          "egress_bit_s": str(h.egress_bit_s)})
                     for i, h in enumerate(self.hosts))


def uniform(n: int, *, speed_ref_cores: float = DEFAULT_SPEED_REF_CORES,
            egress_bit_s: int = DEFAULT_EGRESS_BIT_S) -> Platform:
    """n alike workstations ws0..ws{n-1} (the name's number is the resource id)."""
    if n < 1:
        raise PlatformError(f"resources: must be >= 1, got {n}")
    return Platform(tuple(Host(f"ws{i}", speed_ref_cores, egress_bit_s) for i in range(n)))


def from_spec(path: str | Path) -> Platform:
    """The workstations of a nowlab cluster spec (TOML), in its order: speed in reference cores
    (a raw cap in cores counts as that many reference cores) and egress bandwidth."""
    from testbed.spec import load

    return from_cluster_spec(load(path))


def from_cluster_spec(spec: ClusterSpec, *, capped: bool = True) -> Platform:
    """The workstations of a loaded cluster spec, as `from_spec`. `capped` False (a backend
    without CPU caps, the local one: every workstation is this host, unshaped): each counts as
    one reference core at the spec's egress."""
    hosts = []
    for ws in spec.workstations:
        speed = spec.speed(ws.name)
        if not capped:
            speed = DEFAULT_SPEED_REF_CORES
        hosts.append(Host(ws.name, speed if speed is not None else spec.cpu(ws.name),
                          ws.egress if ws.egress is not None else spec.defaults.egress))
    return Platform(tuple(hosts))


def executors(res: int, alloc: Sequence[int], mapping: Mapping[str, str] | None) -> tuple[int, ...]:
    """The resource each executor (rank) runs on: EXECUTE_JOB's mapping (executor -> position in
    the allocation), else round robin over the allocation. Raises PlatformError naming the key."""
    if mapping is None:
        return tuple(alloc[k % len(alloc)] for k in range(res))
    out = []
    for k in range(len(mapping)):
        pos = mapping.get(str(k))
        if pos is None:
            raise PlatformError(f"data.mapping: no position for executor {k} (keys must be 0..{len(mapping) - 1})")
        try:
            index = int(pos)
        except (TypeError, ValueError):
            raise PlatformError(f"data.mapping.{k}: {pos!r} is not a position in the allocation") from None
        if not 0 <= index < len(alloc):
            raise PlatformError(f"data.mapping.{k}: position {index} is outside the allocation of {len(alloc)} "
                                f"resources")
        out.append(alloc[index])
    return tuple(out)


def run_time_s(platform: Platform, profile: Profile, placed: Sequence[int]) -> float:
    """How long `profile` runs with its executors on resources `placed` (module docstring)."""
    if isinstance(profile, DelayProfile):
        return profile.delay_s
    if isinstance(profile, NowlabProfile):
        if profile.runtime_s is not None:
            return profile.runtime_s
        if profile.work_ref_s is None:
            raise PlatformError(_untimed(profile, ""))
        ranks = Counter(placed)
        return max(profile.work_ref_s * k / platform.hosts[r].speed_ref_cores for r, k in ranks.items())
    assert isinstance(profile, ParallelHomogeneousProfile)
    ranks = Counter(placed)
    total = len(placed)
    compute_s = max(profile.cpu_flop * k / (platform.hosts[r].speed_ref_cores * platform.flop_per_ref_core_s)
                    for r, k in ranks.items())
    comm_s = max(8.0 * profile.com_bytes * k * (total - k) / platform.hosts[r].egress_bit_s
                 for r, k in ranks.items())
    return compute_s + comm_s


def check_simulable(profiles: Mapping[str, Profile], jobs_by_profile: Mapping[str, str]) -> None:
    """Every profile a job uses has a simulated duration; else one line naming the profile, a job and the field."""
    for name, profile in profiles.items():
        if isinstance(profile, NowlabProfile) and name in jobs_by_profile and not is_timed(profile):
            raise PlatformError(_untimed(profile, f", used by job {jobs_by_profile[name]!r}"))


def is_timed(profile: Profile) -> bool:
    """The profile has a simulated duration (a nowlab one only when it states one)."""
    return not isinstance(profile, NowlabProfile) or profile.runtime_s is not None or profile.work_ref_s is not None


def _untimed(profile: NowlabProfile, used: str) -> str:
    if profile.is_command:
        return (f"profile {profile.name!r} (type nowlab, a user's command{used}): runtime_s: missing; a command "
                f"is simulated for the run time its profile states")
    return (f"profile {profile.name!r} (type nowlab, program {profile.program}{used}): runtime_s: missing; "
            f"to be simulated it states runtime_s (s) or work_ref_s (reference-seconds per process)")


__all__ = ["DEFAULT_EGRESS_BIT_S", "DEFAULT_SPEED_REF_CORES", "FLOP_PER_REF_CORE_S", "Host", "Platform",
           "PlatformError", "check_simulable", "executors", "from_cluster_spec", "from_spec", "is_timed", "run_time_s",
           "uniform"]
