"""Batsim workload files (JSON): jobs and the profiles they run, read and checked.

Format: Batsim's docs/input-workload.rst (v4.2.1). A workload has `nb_res` (resources it was
designed for), `jobs` (each `id`, `subtime` in s, `res` resources, `profile` name, optional
`walltime` in s counted from the job's start; other fields are the user's, kept in `extra`)
and `profiles` (name -> object with a `type`, optional `ret` return code). Profile types read:

* `delay`: the job sleeps `delay` seconds on its allocation;
* `parallel_homogeneous`: `cpu` flop on each resource, `com` bytes between each pair;
* `nowlab` (this project's): `program`, one of the project's MPI programs (PROGRAMS) or
  `command` (a user's rigid MPI program), and `args`, a list of strings: a project program's
  own arguments (nowlab gives `--job` and `--hosts`, so they may not be among them), or a
  command's whole argv (its executable first). To be simulated it states its time:
  `runtime_s` (seconds on any allocation, as a delay profile), or, for a project program,
  `work_ref_s` (reference-seconds each process computes; platform.run_time_s times it on
  the allocated workstations' speeds). Live, it runs for real (experiments/batsim/live.py).

Other Batsim types (parallel, composed, SMPI traces...) are refused by name. Every error is
one `WorkloadError` line naming the file and the job or profile; a job whose profile is
missing names the job and the profile. Job ids become `WORKLOAD!ID` as Batsim sends them.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from experiments.batsim.protocol import JobDescription

# The project's MPI programs a `nowlab` profile may name (workloads/profile.py WORKLOADS; a test
# keeps the two in step without this module importing the workloads' numerical stack).
PROGRAMS = ("synthetic", "cg", "stencil")
COMMAND = "command"
"""A `nowlab` profile's `program` for a user's own rigid MPI command (its argv in `args`)."""
RESERVED_ARGS = ("--job", "--hosts", "--control", "--resume")
"""The options nowlab gives a project program itself (its checkpoint key and workstations)."""
PROFILE_TYPES = ("delay", "parallel_homogeneous", "nowlab")
WORKLOAD_SEPARATOR = "!"


class WorkloadError(ValueError):
    """A workload file that cannot be run: one line naming the file and the job or profile."""


@dataclass(frozen=True)
class DelayProfile:
    name: str
    delay_s: float
    ret: int = 0


@dataclass(frozen=True)
class ParallelHomogeneousProfile:
    name: str
    cpu_flop: float  # on each allocated resource
    com_bytes: float  # between each pair of distinct resources
    ret: int = 0


@dataclass(frozen=True)
class NowlabProfile:
    name: str
    program: str  # one of PROGRAMS, or COMMAND
    args: tuple[str, ...]  # a project program's arguments; a command's whole argv
    ret: int = 0
    runtime_s: float | None = None  # stated run time on any allocation (simulated mode)
    work_ref_s: float | None = None  # stated reference-seconds per process (a project program only)

    @property
    def is_command(self) -> bool:
        return self.program == COMMAND


Profile = DelayProfile | ParallelHomogeneousProfile | NowlabProfile


@dataclass(frozen=True)
class WorkloadJob:
    id: str  # WORKLOAD!ID
    subtime_s: float
    res: int
    profile: str
    walltime_s: float | None = None
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    def description(self) -> JobDescription:
        """The job as JOB_SUBMITTED carries it."""
        return JobDescription(id=self.id, subtime=self.subtime_s, res=self.res, profile=self.profile,
                              walltime=self.walltime_s)


@dataclass(frozen=True)
class Workload:
    name: str  # the workload id that prefixes each job id ("w0")
    path: str
    nb_res: int
    jobs: tuple[WorkloadJob, ...]  # by submit time, file order among equals
    profiles: dict[str, Profile]
    profiles_json: dict[str, dict[str, Any]]  # as written, for SIMULATION_BEGINS and forwarding


def read_workload(path: str | Path, *, name: str = "w0") -> Workload:
    """Read and check a Batsim workload file."""
    path = Path(path)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise WorkloadError(f"{path}: not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    return parse_workload(raw, source=str(path.resolve()), name=name)


def parse_workload(raw: Any, *, source: str, name: str = "w0") -> Workload:
    """Check a decoded workload object; `source` names it in errors and in SIMULATION_BEGINS."""
    if not name or WORKLOAD_SEPARATOR in name:
        raise ValueError(f"name: must be non-empty and without {WORKLOAD_SEPARATOR!r}, got {name!r}")
    if not isinstance(raw, dict):
        raise WorkloadError(f"{source}: must be an object with nb_res, jobs and profiles")
    for key in ("nb_res", "jobs", "profiles"):
        if key not in raw:
            raise WorkloadError(f"{source}: {key}: missing")
    nb_res = raw["nb_res"]
    if isinstance(nb_res, bool) or not isinstance(nb_res, int) or nb_res < 1:
        raise WorkloadError(f"{source}: nb_res: must be an integer >= 1, got {nb_res!r}")
    if not isinstance(raw["profiles"], dict):
        raise WorkloadError(f"{source}: profiles: must be an object (name -> profile)")
    if not isinstance(raw["jobs"], list):
        raise WorkloadError(f"{source}: jobs: must be a list")
    profiles = {p: _profile(source, p, body) for p, body in raw["profiles"].items()}
    jobs: list[WorkloadJob] = []
    seen: set[str] = set()
    for k, body in enumerate(raw["jobs"]):
        job = _job(source, k, body, name, profiles)
        if job.id in seen:
            raise WorkloadError(f"{source}: job {job.id!r} (jobs[{k}]): id given twice")
        seen.add(job.id)
        jobs.append(job)
    jobs.sort(key=lambda j: j.subtime_s)
    return Workload(name=name, path=source, nb_res=nb_res, jobs=tuple(jobs), profiles=profiles,
                    profiles_json={p: dict(body) for p, body in raw["profiles"].items()})


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def _profile(source: str, pname: str, body: Any) -> Profile:
    where = f"{source}: profile {pname!r}"
    if not isinstance(body, dict):
        raise WorkloadError(f"{where}: must be an object with a type")
    kind = body.get("type")
    if kind not in PROFILE_TYPES:
        raise WorkloadError(f"{where}: type {kind!r} is not one nowlab runs ({', '.join(PROFILE_TYPES)})")
    ret = body.get("ret", 0)
    if isinstance(ret, bool) or not isinstance(ret, int):
        raise WorkloadError(f"{where}: ret: must be an integer, got {ret!r}")

    def nonneg(key: str) -> float:
        value = _number(body.get(key))
        if value is None or value < 0:
            raise WorkloadError(f"{where}: {key}: must be a number >= 0, got {body.get(key)!r}")
        return value

    if kind == "delay":
        return DelayProfile(name=pname, delay_s=nonneg("delay"), ret=ret)
    if kind == "parallel_homogeneous":
        return ParallelHomogeneousProfile(name=pname, cpu_flop=nonneg("cpu"), com_bytes=nonneg("com"), ret=ret)
    program, args = body.get("program"), body.get("args", [])
    if program not in (*PROGRAMS, COMMAND):
        raise WorkloadError(f"{where}: program: {program!r} is not one of the project's programs "
                            f"({', '.join(PROGRAMS)}) nor {COMMAND!r} (a user's command in args)")
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise WorkloadError(f"{where}: args: must be a list of strings, got {args!r}")
    if program == COMMAND and not args:
        raise WorkloadError(f"{where}: args: a command profile needs its argv (the executable first), got []")
    if program != COMMAND:
        given = [a for a in args if a.split("=", 1)[0] in RESERVED_ARGS]
        if given:
            raise WorkloadError(f"{where}: args: {given[0].split('=', 1)[0]} is given by nowlab (the job's key and "
                                f"its allocated workstations), not by the profile")

    def optional(key: str) -> float | None:
        return None if body.get(key) is None else nonneg(key)

    runtime_s, work_ref_s = optional("runtime_s"), optional("work_ref_s")
    if runtime_s is not None and work_ref_s is not None:
        raise WorkloadError(f"{where}: work_ref_s: give runtime_s or work_ref_s, not both")
    if program == COMMAND and work_ref_s is not None:
        raise WorkloadError(f"{where}: work_ref_s: a user's command states its time as runtime_s (nowlab does not "
                            f"know its work)")
    return NowlabProfile(name=pname, program=program, args=tuple(args), ret=ret, runtime_s=runtime_s,
                         work_ref_s=work_ref_s)


def _job(source: str, k: int, body: Any, name: str, profiles: dict[str, Profile]) -> WorkloadJob:
    if not isinstance(body, dict):
        raise WorkloadError(f"{source}: jobs[{k}]: must be an object")
    raw_id = body.get("id")
    if isinstance(raw_id, bool) or not isinstance(raw_id, (str, int)) or raw_id == "":
        raise WorkloadError(f"{source}: jobs[{k}]: id: must be a string or an integer, got {raw_id!r}")
    job_id = str(raw_id) if WORKLOAD_SEPARATOR in str(raw_id) else f"{name}{WORKLOAD_SEPARATOR}{raw_id}"
    where = f"{source}: job {job_id!r} (jobs[{k}])"
    subtime = _number(body.get("subtime"))
    if subtime is None or subtime < 0:
        raise WorkloadError(f"{where}: subtime: must be a number >= 0, got {body.get('subtime')!r}")
    res = body.get("res")
    if isinstance(res, bool) or not isinstance(res, int) or res < 1:
        raise WorkloadError(f"{where}: res: must be an integer >= 1, got {res!r}")
    profile = body.get("profile")
    if not isinstance(profile, str) or not profile:
        raise WorkloadError(f"{where}: profile: must be a profile name, got {profile!r}")
    if profile not in profiles:
        known = ", ".join(sorted(profiles)) or "none"
        raise WorkloadError(f"{where}: profile {profile!r} is not among the workload's profiles ({known})")
    walltime: float | None = None
    if body.get("walltime") is not None:
        walltime = _number(body["walltime"])
        if walltime is None or (walltime <= 0 and walltime != -1):
            raise WorkloadError(f"{where}: walltime: must be a number > 0 (or -1: none), got {body['walltime']!r}")
        walltime = None if walltime == -1 else walltime
    extra = {key: v for key, v in body.items() if key not in ("id", "subtime", "res", "profile", "walltime")}
    return WorkloadJob(id=job_id, subtime_s=subtime, res=res, profile=profile, walltime_s=walltime, extra=extra)


__all__ = ["COMMAND", "PROFILE_TYPES", "PROGRAMS", "RESERVED_ARGS", "DelayProfile", "NowlabProfile",
           "ParallelHomogeneousProfile", "Profile",
           "Workload", "WorkloadError", "WorkloadJob", "parse_workload", "read_workload"]
