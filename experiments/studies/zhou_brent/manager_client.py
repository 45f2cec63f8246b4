"""The host's side of a workstation's local job manager (containers/agents/timeshare_manager.py).

`ManagerClient` sends check-ins, tables and resyncs and reads the status; `Watchdog` polls a
set of managers and reports one as dead after `missed_polls` polls in a row that got no
answer, so the global manager learns of a dead manager within `Watchdog.bound_s`.

The wire is the agent's: one JSON object a line each way, after the handshake of
workloads/channel_auth.py (channel TIMESHARE) that proves the client holds the cluster's
secret; a manager refuses (closes) anyone else. The slots here are plain data
(`WireSlot`), so the testbed needs nothing of the scheduler; whoever holds a
scheduler.timeshare WorkstationTable turns each TableSlot into a WireSlot (process,
parallel_s, sequential_s). The manager checks every table; a refusal is `ManagerRefused` with
its one-line message.
"""
from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from workloads import channel_auth

DEFAULT_PORT = 7717


class ManagerRefused(ValueError):
    """The manager answered, and refused: its one-line reason names the field."""


class ManagerUnreachable(ConnectionError):
    """No answer from the manager within the timeout."""


@dataclass(frozen=True, slots=True)
class WireSlot:
    """A slot as the manager takes it: `job` None is a dummy (sequential work only)."""

    job: str | None
    parallel_s: float
    sequential_s: float = 0.0


@dataclass(frozen=True, slots=True)
class SwitchLatency:
    count: int
    median_s: float | None
    p95_s: float | None
    max_s: float | None


@dataclass(frozen=True, slots=True)
class ManagerStatus:
    """What a manager says of itself: its slot, its jobs' pids, its switches and its own CPU time."""

    workstation: str
    now_s: float
    running: str | None
    slot_index: int | None
    slot_job: str | None
    round_s: float | None
    jobs: dict[str, tuple[int, ...]]
    stopped: tuple[int, ...]
    switches: int
    syncs: int
    last_correction_s: float | None
    dropped: tuple[tuple[str, int], ...]
    cpu_s: float
    guardian_pid: int | None
    refused: int              # connections it closed before a request: no handshake, or another secret
    latency: SwitchLatency    # slot end -> the next process continued
    wake_late: SwitchLatency  # slot end -> the manager's timer awake (the part the OS owes)
    latencies_s: tuple[float, ...] = ()
    timeline: tuple[tuple[float, str | None], ...] = ()
    pending_at_s: float | None = None  # a replan's table waiting for this time (its clock) to begin
    policy: str | None = None          # the table's local policy (implicit, dedicated, proper-share)
    owners_running: bool = True        # whether the owners (checked in as @owners) are marked out now

    @classmethod
    def of(cls, reply: Mapping[str, Any]) -> "ManagerStatus":
        slot = reply.get("slot") or {}
        def latency(key: str) -> SwitchLatency:
            d = reply[key]
            return SwitchLatency(d["count"], d["median"], d["p95"], d["max"])

        return cls(workstation=reply["workstation"], now_s=reply["now_s"], running=reply["running"],
                   slot_index=slot.get("index"), slot_job=slot.get("job"), round_s=reply["round_s"],
                   jobs={j: tuple(p) for j, p in reply["jobs"].items()}, stopped=tuple(reply["stopped"]),
                   switches=reply["switches"], syncs=reply["syncs"], last_correction_s=reply["last_correction_s"],
                   dropped=tuple((d["job"], d["pid"]) for d in reply["dropped"]), cpu_s=reply["cpu_s"],
                   guardian_pid=reply["guardian_pid"], refused=reply.get("refused", 0),
                   latency=latency("latency_s"), wake_late=latency("wake_late_s"),
                   latencies_s=tuple(reply.get("latencies_s", ())),
                   timeline=tuple((t, j) for t, j in reply.get("timeline", ())),
                   pending_at_s=reply.get("pending_at"), policy=reply.get("policy"),
                   owners_running=reply.get("owners_running", True))


class _Kept:
    """Authenticated connections to one manager that no request is using now (thread-safe).

    Kept because the handshake costs two round trips: a fresh connection for every request
    put them between the host's clock reading and the manager's, one round trip of bias in
    the clock offset a resync rests on (Cristian's estimate assumes the manager reads its
    clock half-way). On a kept connection a request is one round trip, as symmetric as it gets."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._socks: list[socket.socket] = []

    def take(self) -> socket.socket | None:
        with self._lock:
            return self._socks.pop() if self._socks else None

    def give(self, sock: socket.socket) -> None:
        with self._lock:
            self._socks.append(sock)

    def close(self) -> None:
        with self._lock:
            socks, self._socks = self._socks, []
        for sock in socks:
            sock.close()


def _remaining(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise socket.timeout("timed out")
    return left


@dataclass(frozen=True, slots=True)
class ManagerClient:
    """One workstation's manager at host:port. `secret` is the cluster's (NOWLAB_CLUSTER_SECRET):
    the manager serves no one else. A connection, once it has passed the handshake, is kept
    for the next request (close() ends them); each request takes at most `timeout_s` in all."""

    host: str
    port: int = DEFAULT_PORT
    timeout_s: float = 2.0
    secret: bytes = field(repr=False, kw_only=True)
    _kept: _Kept = field(default_factory=_Kept, init=False, repr=False, compare=False)

    def close(self) -> None:
        """Close the kept connections (a later request opens a new one)."""
        self._kept.close()

    def _exchange(self, sock: socket.socket, line: bytes, deadline: float) -> bytes | None:
        """The reply line to `line`; None if the connection turned out closed before any reply.
        The socket is kept again after a reply and closed otherwise."""
        data = b""
        try:
            sock.settimeout(_remaining(deadline))
            sock.sendall(line)
            while b"\n" not in data:
                sock.settimeout(_remaining(deadline))
                chunk = sock.recv(65536)
                if not chunk:
                    sock.close()
                    return None
                data += chunk
        except (ConnectionResetError, BrokenPipeError):
            sock.close()
            return None
        except OSError:
            sock.close()
            raise
        self._kept.give(sock)
        return data.partition(b"\n")[0]

    def request(self, message: Mapping[str, Any]) -> dict[str, Any]:
        """Send one request, return the reply; ManagerRefused if it says no, ManagerUnreachable if it says
        nothing (a manager that turns down this client's secret says nothing: it closes)."""
        deadline = time.monotonic() + self.timeout_s
        request_line = json.dumps(message).encode() + b"\n"
        try:
            kept = self._kept.take()
            line = self._exchange(kept, request_line, deadline) if kept is not None else None
            if line is None:  # none kept, or the manager closed it (it was restarted): a new one
                sock = socket.create_connection((self.host, self.port), timeout=self.timeout_s)
                try:
                    # the manager says nothing before a request: nothing comes after its `ok`
                    channel_auth.client_handshake(sock, self.secret, channel=channel_auth.TIMESHARE,
                                                  timeout_s=_remaining(deadline))
                except OSError:
                    sock.close()
                    raise
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                line = self._exchange(sock, request_line, deadline)
        except OSError as exc:  # channel_auth.AuthError and Refused too
            raise ManagerUnreachable(f"timeshare manager at {self.host}:{self.port}: {exc}") from exc
        if not line:
            raise ManagerUnreachable(f"timeshare manager at {self.host}:{self.port}: closed without a reply")
        reply = json.loads(line)
        if not reply.get("ok"):
            raise ManagerRefused(reply.get("error", "refused without a reason"))
        return reply

    def checkin(self, job: str, pid: int) -> tuple[int, ...]:
        """Register a rank's process (and its descendants) as job; returns the pids now controlled."""
        return tuple(self.request({"op": "checkin", "job": job, "pid": pid})["pids"])

    def checkout(self, job: str, pid: int) -> None:
        self.request({"op": "checkout", "job": job, "pid": pid})

    def table(self, round_s: float, slots: Sequence[WireSlot], at_s: float | None = None,
              workstation: str | None = None, policy: str | None = None,
              cpu_cores: float | None = None) -> float | None:
        """Put a scheduling table in force; round 0 begins at at_s (None: on the running rounds).

        Returns at_s when the manager holds the table pending (a table is in force and at_s is
        still to come on its clock: the old one runs until then), None when it took over now."""
        message: dict[str, Any] = {"op": "table", "round_s": round_s,
                                   "slots": [{"job": s.job, "parallel_s": s.parallel_s, "sequential_s": s.sequential_s}
                                             for s in slots]}
        if at_s is not None:
            message["at"] = at_s
        if workstation is not None:
            message["workstation"] = workstation
        if policy is not None:  # the local policy in a slot (the agent's docstring); cpu_cores: for proper share
            message["policy"] = policy
        if cpu_cores is not None:
            message["cpu_cores"] = cpu_cores
        return self.request(message).get("pending_at")

    def sync(self, round_index: int, at_s: float) -> float:
        """Round `round_index` begins at at_s; returns how far the manager's boundary was off (s)."""
        return self.request({"op": "sync", "round": round_index, "at": at_s})["correction_s"]

    def status(self, latencies: bool = False, timeline: bool = False) -> ManagerStatus:
        return ManagerStatus.of(self.request({"op": "status", "latencies": latencies, "timeline": timeline}))


@dataclass(frozen=True, slots=True)
class DeadManager:
    workstation: str
    last_seen_s: float | None  # time.monotonic() of its last answer, None if it never answered
    noticed_s: float           # time.monotonic() when the watchdog gave up on it
    reason: str


@dataclass
class Watchdog:
    """Polls every manager's status each `poll_s`; `missed_polls` unanswered polls in a row make it dead.

    A manager that dies is reported at most `bound_s` after its last answer: missed_polls polls,
    each round of them at most poll_s plus every client's timeout apart (polls are sequential). Each dead manager is
    reported once; its workstation's ranks are left running by the manager's guardian (see the
    agent's docstring), so the global manager only has to stop giving it tables.
    """

    clients: Mapping[str, ManagerClient]
    poll_s: float = 0.5
    missed_polls: int = 2
    _missed: dict[str, int] = field(default_factory=dict, init=False)
    _last_seen_s: dict[str, float] = field(default_factory=dict, init=False)
    _reported: set[str] = field(default_factory=set, init=False)

    def __post_init__(self) -> None:
        if not self.poll_s > 0:
            raise ValueError(f"poll_s: must be a positive time, got {self.poll_s}")
        if self.missed_polls < 1:
            raise ValueError(f"missed_polls: must be >= 1, got {self.missed_polls}")

    @property
    def bound_s(self) -> float:
        """The longest time from a manager's last answer to the report of its death."""
        return self.missed_polls * (self.poll_s + sum(c.timeout_s for c in self.clients.values()))

    def poll(self) -> list[DeadManager]:
        """One status poll of every manager not yet reported; returns the ones found dead now."""
        dead = []
        for name, client in self.clients.items():
            if name in self._reported:
                continue
            try:
                client.status()
            except ManagerUnreachable as exc:
                self._missed[name] = self._missed.get(name, 0) + 1
                if self._missed[name] >= self.missed_polls:
                    self._reported.add(name)
                    dead.append(DeadManager(name, self._last_seen_s.get(name), time.monotonic(), str(exc)))
                continue
            self._missed[name] = 0
            self._last_seen_s[name] = time.monotonic()
        return dead

    def run(self, stop: threading.Event, on_dead: Callable[[DeadManager], None]) -> None:
        """Poll until `stop` is set, calling on_dead once for each manager found dead."""
        while not stop.is_set():
            started_s = time.monotonic()
            for d in self.poll():
                on_dead(d)
            stop.wait(max(0.0, self.poll_s - (time.monotonic() - started_s)))
