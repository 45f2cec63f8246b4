"""The Batsim protocol's messages as typed records, and their JSON: encode and decode, checked.

Source: Batsim's protocol documentation, docs/protocol.rst at tag v4.2.1 of oar-team/batsim
(the Batsim 4 JSON protocol), as pybatsim 3.2.1 speaks it (batsim/batsim.py of its wheel).
Where the two differ, what pybatsim reads wins, since its schedulers must run unchanged:

* JOB_SUBMITTED's `job` always carries `subtime` (pybatsim reads `job["subtime"]`; the
  documentation's examples leave it out).
* JOB_KILLED always carries `job_progress` (pybatsim reads it unconditionally; the
  documentation's "without progress" example has none), `{}` when no job was cut short.
* SIMULATION_BEGINS carries every field pybatsim reads: nb_resources, nb_compute_resources,
  nb_storage_resources, compute_resources, storage_resources, allow_compute_sharing,
  allow_storage_sharing, config (with profiles-forwarded-on-submission, dynamic-jobs-enabled,
  dynamic-jobs-acknowledged, forward-unknown-events), workloads and profiles.
* SET_JOB_METADATA's `metadata` is a string (pybatsim sends `str(metadata)`).

A message is `{"now": t, "events": [{"timestamp": t, "type": ..., "data": {...}}, ...]}`; `now`
must be >= every event's timestamp and the timestamps must not decrease (the documentation's
constraints). A message that breaks a rule, or an event that is not what its type needs,
raises one `ProtocolError` line naming the message, the event and the field.
"""
from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from experiments.traces.intervals import IntervalError, format_intervals, parse_intervals

JOB_STATES = ("NOT_SUBMITTED", "SUBMITTED", "RUNNING", "COMPLETED_SUCCESSFULLY", "COMPLETED_FAILED",
              "COMPLETED_WALLTIME_REACHED", "COMPLETED_KILLED", "REJECTED")
RESOURCE_STATES = ("sleeping", "idle", "computing", "switching_on", "switching_off")
# NOTIFY types, by who sends them (protocol.rst, NOTIFY).
NOTIFY_FROM_BATSIM = ("no_more_static_job_to_submit", "no_more_external_event_to_occur",
                      "event_machine_unavailable", "event_machine_available")
NOTIFY_FROM_SCHEDULER = ("registration_finished", "continue_registration")


class ProtocolError(ValueError):
    """A message that breaks the protocol: one line naming the message, the event and the field."""


# --- records ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Resource:
    """A compute resource as SIMULATION_BEGINS lists it (properties: SimGrid host properties, strings)."""

    id: int
    name: str
    state: str = "idle"
    properties: Mapping[str, str] = field(default_factory=dict)
    zone_properties: Mapping[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "state": self.state, "properties": dict(self.properties),
                "zone_properties": dict(self.zone_properties)}


@dataclass(frozen=True)
class BatsimConfig:
    """SIMULATION_BEGINS' `config`: the Batsim options a scheduler may look at (hyphenated in JSON)."""

    redis_enabled: bool = False
    redis_hostname: str = "127.0.0.1"
    redis_port: int = 6379
    redis_prefix: str = "default"
    profiles_forwarded_on_submission: bool = False
    dynamic_jobs_enabled: bool = False
    dynamic_jobs_acknowledged: bool = False
    profile_reuse_enabled: bool = False
    sched_config: str = ""
    forward_unknown_events: bool = False

    def to_json(self) -> dict[str, Any]:
        return {name.replace("_", "-"): getattr(self, name) for name in self.__dataclass_fields__}


@dataclass(frozen=True)
class JobDescription:
    """A job as JOB_SUBMITTED and REGISTER_JOB carry it: `WORKLOAD!NAME` id, submit time,
    resources requested, profile name, walltime (None: no limit; relative to the job's start)."""

    id: str
    subtime: float
    res: int
    profile: str
    walltime: float | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "subtime": self.subtime, "res": self.res, "profile": self.profile}
        if self.walltime is not None:
            out["walltime"] = self.walltime
        return out


# --- events: Batsim -> scheduler ------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class Event:
    """One event of a message; `TYPE` is its protocol name."""

    TYPE: ClassVar[str] = ""
    timestamp: float

    def data(self) -> dict[str, Any]:
        return {}

    def to_json(self) -> dict[str, Any]:
        return {"timestamp": self.timestamp, "type": self.TYPE, "data": self.data()}


@dataclass(frozen=True, kw_only=True)
class SimulationBegins(Event):
    TYPE: ClassVar[str] = "SIMULATION_BEGINS"
    resources: tuple[Resource, ...]
    workloads: Mapping[str, str]  # workload id -> its file's absolute path
    profiles: Mapping[str, Mapping[str, Mapping[str, Any]]]  # workload id -> profile name -> profile
    config: BatsimConfig = BatsimConfig()
    storage_resources: tuple[Resource, ...] = ()
    allow_compute_sharing: bool = False
    allow_storage_sharing: bool = True

    def data(self) -> dict[str, Any]:
        return {"nb_resources": len(self.resources) + len(self.storage_resources),
                "nb_compute_resources": len(self.resources), "nb_storage_resources": len(self.storage_resources),
                "allow_compute_sharing": self.allow_compute_sharing,
                "allow_storage_sharing": self.allow_storage_sharing, "config": self.config.to_json(),
                "compute_resources": [r.to_json() for r in self.resources],
                "storage_resources": [r.to_json() for r in self.storage_resources],
                "workloads": dict(self.workloads),
                "profiles": {w: {n: dict(p) for n, p in ps.items()} for w, ps in self.profiles.items()}}


@dataclass(frozen=True, kw_only=True)
class SimulationEnds(Event):
    TYPE: ClassVar[str] = "SIMULATION_ENDS"


@dataclass(frozen=True, kw_only=True)
class JobSubmitted(Event):
    TYPE: ClassVar[str] = "JOB_SUBMITTED"
    job: JobDescription
    profile: Mapping[str, Any] | None = None  # sent when profiles are forwarded on submission

    def data(self) -> dict[str, Any]:
        out: dict[str, Any] = {"job_id": self.job.id, "job": self.job.to_json()}
        if self.profile is not None:
            out["profile"] = dict(self.profile)
        return out


@dataclass(frozen=True, kw_only=True)
class JobCompleted(Event):
    TYPE: ClassVar[str] = "JOB_COMPLETED"
    job_id: str
    job_state: str  # one of JOB_STATES
    return_code: int
    alloc: tuple[int, ...]

    def data(self) -> dict[str, Any]:
        return {"job_id": self.job_id, "job_state": self.job_state, "return_code": self.return_code,
                "alloc": format_intervals(self.alloc)}


@dataclass(frozen=True, kw_only=True)
class JobKilled(Event):
    TYPE: ClassVar[str] = "JOB_KILLED"
    job_ids: tuple[str, ...]
    job_progress: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # job id -> {profile, progress}

    def data(self) -> dict[str, Any]:
        return {"job_ids": list(self.job_ids), "job_progress": {k: dict(v) for k, v in self.job_progress.items()}}


@dataclass(frozen=True, kw_only=True)
class RequestedCall(Event):
    TYPE: ClassVar[str] = "REQUESTED_CALL"


@dataclass(frozen=True, kw_only=True)
class Notify(Event):
    """Either way: NOTIFY_FROM_BATSIM or NOTIFY_FROM_SCHEDULER types."""

    TYPE: ClassVar[str] = "NOTIFY"
    type: str

    def data(self) -> dict[str, Any]:
        return {"type": self.type}


# --- decisions: scheduler -> Batsim ---------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class ExecuteJob(Event):
    TYPE: ClassVar[str] = "EXECUTE_JOB"
    job_id: str
    alloc: tuple[int, ...]
    mapping: Mapping[str, str] | None = None  # executor (rank) -> position in the allocation

    def data(self) -> dict[str, Any]:
        out: dict[str, Any] = {"job_id": self.job_id, "alloc": format_intervals(self.alloc)}
        if self.mapping is not None:
            out["mapping"] = dict(self.mapping)
        return out


@dataclass(frozen=True, kw_only=True)
class RejectJob(Event):
    TYPE: ClassVar[str] = "REJECT_JOB"
    job_id: str

    def data(self) -> dict[str, Any]:
        return {"job_id": self.job_id}


@dataclass(frozen=True, kw_only=True)
class KillJob(Event):
    TYPE: ClassVar[str] = "KILL_JOB"
    job_ids: tuple[str, ...]

    def data(self) -> dict[str, Any]:
        return {"job_ids": list(self.job_ids)}


@dataclass(frozen=True, kw_only=True)
class CallMeLater(Event):
    TYPE: ClassVar[str] = "CALL_ME_LATER"
    at_s: float  # `data.timestamp`: when to be called

    def data(self) -> dict[str, Any]:
        return {"timestamp": self.at_s}


@dataclass(frozen=True, kw_only=True)
class SetJobMetadata(Event):
    TYPE: ClassVar[str] = "SET_JOB_METADATA"
    job_id: str
    metadata: str

    def data(self) -> dict[str, Any]:
        return {"job_id": self.job_id, "metadata": self.metadata}


@dataclass(frozen=True, kw_only=True)
class RegisterJob(Event):
    TYPE: ClassVar[str] = "REGISTER_JOB"
    job: JobDescription

    def data(self) -> dict[str, Any]:
        return {"job_id": self.job.id, "job": self.job.to_json()}


@dataclass(frozen=True, kw_only=True)
class RegisterProfile(Event):
    TYPE: ClassVar[str] = "REGISTER_PROFILE"
    workload_name: str
    profile_name: str
    profile: Mapping[str, Any]

    def data(self) -> dict[str, Any]:
        return {"workload_name": self.workload_name, "profile_name": self.profile_name,
                "profile": dict(self.profile)}


@dataclass(frozen=True)
class Message:
    """One protocol message: the sender's clock and its events in order."""

    now: float
    events: tuple[Event, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"now": self.now, "events": [e.to_json() for e in self.events]}


def encode(message: Message) -> str:
    """The message as the JSON text sent on the socket."""
    check_order(message, "message")
    return json.dumps(message.to_json(), separators=(",", ":"), allow_nan=False)


def check_order(message: Message, label: str) -> None:
    """The documentation's constraints: timestamps not decreasing, none after `now`."""
    last = -math.inf
    for k, e in enumerate(message.events):
        if e.timestamp < last:
            raise ProtocolError(f"{label}: events[{k}] ({e.TYPE}): timestamp {e.timestamp} is before the "
                                f"previous event's {last} (timestamps must not decrease)")
        if e.timestamp > message.now:
            raise ProtocolError(f"{label}: events[{k}] ({e.TYPE}): timestamp {e.timestamp} is after now "
                                f"{message.now}")
        last = e.timestamp


# --- decoding -------------------------------------------------------------------------------------

class _Fields:
    """Typed reads from one event's `data`, each failure one ProtocolError naming the field."""

    def __init__(self, data: Mapping[str, Any], where: str, machine_size: int | None) -> None:
        self.data, self.where, self.machine_size = data, where, machine_size

    def fail(self, key: str, why: str) -> ProtocolError:
        return ProtocolError(f"{self.where}: data.{key}: {why}")

    def get(self, key: str) -> Any:
        if key not in self.data:
            raise self.fail(key, "missing")
        return self.data[key]

    def text(self, key: str) -> str:
        value = self.get(key)
        if not isinstance(value, str) or not value:
            raise self.fail(key, f"must be a non-empty string, got {value!r}")
        return value

    def number(self, key: str) -> float:
        return _number(self.get(key), lambda why: self.fail(key, why))

    def integer(self, key: str) -> int:
        value = self.get(key)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(key, f"must be an integer, got {value!r}")
        return value

    def flag(self, key: str) -> bool:
        value = self.get(key)
        if not isinstance(value, bool):
            raise self.fail(key, f"must be true or false, got {value!r}")
        return value

    def obj(self, key: str) -> dict[str, Any]:
        value = self.get(key)
        if not isinstance(value, dict):
            raise self.fail(key, f"must be an object, got {value!r}")
        return value

    def str_list(self, key: str) -> tuple[str, ...]:
        value = self.get(key)
        if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
            raise self.fail(key, f"must be a non-empty list of job ids, got {value!r}")
        return tuple(value)

    def alloc(self, key: str) -> tuple[int, ...]:
        value = self.get(key)
        try:
            resources = parse_intervals(value, machine_size=self.machine_size)
        except IntervalError as exc:
            raise self.fail(key, str(exc)) from None
        if not resources:
            raise self.fail(key, "is empty (an allocation needs at least one resource)")
        return resources

    def job(self, key: str) -> JobDescription:
        d = _Fields(self.obj(key), f"{self.where}: data.{key}", self.machine_size)
        walltime = d.data.get("walltime")
        if walltime is not None:
            walltime = d.number("walltime")
            walltime = None if walltime < 0 else walltime  # pybatsim's default is -1: no limit
        res = d.integer("res")
        if res < 1:
            raise d.fail("res", f"must be >= 1, got {res}")
        return JobDescription(id=d.text("id"), subtime=d.number("subtime"), res=res, profile=d.text("profile"),
                              walltime=walltime)


def _number(value: Any, fail: Callable[[str], ProtocolError]) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise fail(f"must be a finite number, got {value!r}")
    return float(value)


def _resources(f: _Fields, key: str) -> tuple[Resource, ...]:
    items = f.get(key)
    if not isinstance(items, list):
        raise f.fail(key, f"must be a list, got {items!r}")
    out = []
    for i, item in enumerate(items):
        r = _Fields(item if isinstance(item, dict) else {}, f"{f.where}: data.{key}[{i}]", None)
        if not isinstance(item, dict):
            raise r.fail("id", f"the resource must be an object, got {item!r}")
        out.append(Resource(id=r.integer("id"), name=r.text("name"), state=r.text("state"),
                            properties=r.obj("properties"), zone_properties=item.get("zone_properties", {})))
    return tuple(out)


def _config(f: _Fields) -> BatsimConfig:
    raw = f.obj("config")
    c = _Fields({k.replace("-", "_"): v for k, v in raw.items()}, f"{f.where}: data.config", None)
    out = {}
    for name, spec in BatsimConfig.__dataclass_fields__.items():
        if name in c.data:
            kind = spec.type
            out[name] = c.flag(name) if kind == "bool" else c.integer(name) if kind == "int" else c.get(name)
        elif name in ("profiles_forwarded_on_submission", "dynamic_jobs_enabled", "dynamic_jobs_acknowledged",
                      "forward_unknown_events"):  # pybatsim reads these four
            raise ProtocolError(f"{f.where}: data.config.{name.replace('_', '-')}: missing")
    return BatsimConfig(**out)


def _simulation_begins(t: float, f: _Fields) -> SimulationBegins:
    resources = _resources(f, "compute_resources")
    storage = _resources(f, "storage_resources")
    for key, expected in (("nb_compute_resources", len(resources)), ("nb_storage_resources", len(storage)),
                          ("nb_resources", len(resources) + len(storage))):
        if f.integer(key) != expected:
            raise f.fail(key, f"is {f.integer(key)} but the resources listed make {expected}")
    if [r.id for r in resources] != list(range(len(resources))):
        raise f.fail("compute_resources", "ids must be 0, 1, ... in order")
    return SimulationBegins(timestamp=t, resources=resources, storage_resources=storage,
                            workloads=f.obj("workloads"), profiles=f.obj("profiles"), config=_config(f),
                            allow_compute_sharing=f.flag("allow_compute_sharing"),
                            allow_storage_sharing=f.flag("allow_storage_sharing"))


def _job_completed(t: float, f: _Fields) -> JobCompleted:
    state = f.text("job_state")
    if state not in JOB_STATES:
        raise f.fail("job_state", f"unknown {state!r} ({', '.join(JOB_STATES)})")
    return JobCompleted(timestamp=t, job_id=f.text("job_id"), job_state=state, return_code=f.integer("return_code"),
                        alloc=f.alloc("alloc"))


def _job_submitted(t: float, f: _Fields) -> JobSubmitted:
    job = f.job("job")
    if f.text("job_id") != job.id:
        raise f.fail("job_id", f"{f.text('job_id')!r} differs from data.job.id {job.id!r}")
    return JobSubmitted(timestamp=t, job=job, profile=f.obj("profile") if "profile" in f.data else None)


def _notify(allowed: tuple[str, ...]) -> Callable[[float, _Fields], Notify]:
    def decode(t: float, f: _Fields) -> Notify:
        kind = f.text("type")
        if kind not in allowed:
            raise f.fail("type", f"unknown {kind!r} ({', '.join(allowed)})")
        return Notify(timestamp=t, type=kind)
    return decode


def _execute_job(t: float, f: _Fields) -> ExecuteJob:
    mapping = f.obj("mapping") if "mapping" in f.data else None
    return ExecuteJob(timestamp=t, job_id=f.text("job_id"), alloc=f.alloc("alloc"), mapping=mapping)


def _call_me_later(t: float, f: _Fields) -> CallMeLater:
    at_s = f.number("timestamp")
    if at_s < t:
        raise f.fail("timestamp", f"{at_s} is before the event's own timestamp {t} (a call in the past)")
    return CallMeLater(timestamp=t, at_s=at_s)


def _set_job_metadata(t: float, f: _Fields) -> SetJobMetadata:
    metadata = f.get("metadata")
    if not isinstance(metadata, str):
        raise f.fail("metadata", f"must be a string, got {metadata!r}")
    return SetJobMetadata(timestamp=t, job_id=f.text("job_id"), metadata=metadata)


def _register_job(t: float, f: _Fields) -> RegisterJob:
    job = f.job("job")
    if f.text("job_id") != job.id:
        raise f.fail("job_id", f"{f.text('job_id')!r} differs from data.job.id {job.id!r}")
    return RegisterJob(timestamp=t, job=job)


_Decoder = Callable[[float, _Fields], Event]
TO_SCHEDULER: dict[str, _Decoder] = {
    "SIMULATION_BEGINS": _simulation_begins,
    "SIMULATION_ENDS": lambda t, f: SimulationEnds(timestamp=t),
    "JOB_SUBMITTED": _job_submitted,
    "JOB_COMPLETED": _job_completed,
    "JOB_KILLED": lambda t, f: JobKilled(timestamp=t, job_ids=f.str_list("job_ids"),
                                         job_progress=f.obj("job_progress")),
    "REQUESTED_CALL": lambda t, f: RequestedCall(timestamp=t),
    "NOTIFY": _notify(NOTIFY_FROM_BATSIM),
}
TO_BATSIM: dict[str, _Decoder] = {
    "EXECUTE_JOB": _execute_job,
    "REJECT_JOB": lambda t, f: RejectJob(timestamp=t, job_id=f.text("job_id")),
    "KILL_JOB": lambda t, f: KillJob(timestamp=t, job_ids=f.str_list("job_ids")),
    "CALL_ME_LATER": _call_me_later,
    "NOTIFY": _notify(NOTIFY_FROM_SCHEDULER),
    "SET_JOB_METADATA": _set_job_metadata,
    "REGISTER_JOB": _register_job,
    "REGISTER_PROFILE": lambda t, f: RegisterProfile(timestamp=t, workload_name=f.text("workload_name"),
                                                     profile_name=f.text("profile_name"),
                                                     profile=f.obj("profile")),
}


def decode(text: str | bytes, *, direction: Literal["to_scheduler", "to_batsim"], label: str = "message",
           machine_size: int | None = None) -> Message:
    """Parse one message; `label` names it in errors ("reply 12"), `machine_size` bounds allocations.

    direction: "to_batsim" reads a scheduler's reply (decisions), "to_scheduler" what Batsim sends.
    """
    decoders = {"to_scheduler": TO_SCHEDULER, "to_batsim": TO_BATSIM}.get(direction)
    if decoders is None:
        raise ValueError(f"direction: unknown {direction!r} (to_scheduler, to_batsim)")
    try:
        raw = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ProtocolError(f"{label}: not JSON ({exc})") from None
    if not isinstance(raw, dict):
        raise ProtocolError(f"{label}: must be a JSON object with now and events, got {type(raw).__name__}")
    for key in ("now", "events"):
        if key not in raw:
            raise ProtocolError(f"{label}: {key}: missing")
    now = _number(raw["now"], lambda why: ProtocolError(f"{label}: now: {why}"))
    if not isinstance(raw["events"], list):
        raise ProtocolError(f"{label}: events: must be a list, got {raw['events']!r}")
    events = []
    for k, item in enumerate(raw["events"]):
        where = f"{label}: events[{k}]"
        if not isinstance(item, dict):
            raise ProtocolError(f"{where}: must be an object with timestamp, type and data, got {item!r}")
        kind = item.get("type")
        if kind not in decoders:
            raise ProtocolError(f"{where}: type: {kind!r} is not an event this side accepts "
                                f"({', '.join(decoders)})")
        where = f"{where} ({kind})"
        if "timestamp" not in item:
            raise ProtocolError(f"{where}: timestamp: missing")
        t = _number(item["timestamp"], lambda why: ProtocolError(f"{where}: timestamp: {why}"))
        data = item.get("data", {})
        if not isinstance(data, dict):
            raise ProtocolError(f"{where}: data: must be an object, got {data!r}")
        events.append(decoders[kind](t, _Fields(data, where, machine_size)))
    message = Message(now=now, events=tuple(events))
    check_order(message, label)
    return message


__all__ = ["JOB_STATES", "NOTIFY_FROM_BATSIM", "NOTIFY_FROM_SCHEDULER", "TO_BATSIM", "TO_SCHEDULER",
           "BatsimConfig", "CallMeLater", "Event", "ExecuteJob", "JobCompleted", "JobDescription", "JobKilled",
           "JobSubmitted", "KillJob", "Message", "Notify", "ProtocolError", "RegisterJob", "RegisterProfile",
           "RejectJob", "RequestedCall", "Resource", "SetJobMetadata", "SimulationBegins", "SimulationEnds",
           "decode", "encode"]
