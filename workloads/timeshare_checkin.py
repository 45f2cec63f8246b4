"""A rank's check-in with its workstation's time-sharing manager (Zhou & Brent §4).

The local job manager (containers/agents/timeshare_manager.py) stops and continues the
processes registered with it, so a rank must register its pid when its job starts and leave
when it ends. Which manager: the environment variable NOWLAB_TIMESHARE, read when the rank
starts (never at import):
    NOWLAB_TIMESHARE=HOST:PORT                       every rank: the manager on its own workstation
    NOWLAB_TIMESHARE=ws1=HOST:PORT,ws2=HOST:PORT     the manager of the rank's workstation by name
                                                     (several "workstations" on one host, for tests)
Unset or empty: no time sharing, nothing is sent. The job's name in the tables is the
workload's --job. A manager serves only a peer that holds the cluster's secret
(NOWLAB_CLUSTER_SECRET, in the rank's environment; the handshake of workloads/channel_auth.py,
channel TIMESHARE): without the variable, a rank told to check in fails at once. A manager
that does not answer leaves the rank running unmanaged (a warning on stderr: a job is never
held up by a missing manager); one that refuses, the check-in or this rank's secret, is an
error, since the tables would then name a job it does not know.
Runs inside the workstations: standard library only, the agent's wire (one JSON line each way).
"""
from __future__ import annotations

import json
import os
import socket
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field

from workloads import channel_auth

ENV = "NOWLAB_TIMESHARE"
TIMEOUT_S = 5.0


class TimeshareAddressError(ValueError):
    """NOWLAB_TIMESHARE cannot be read: one line naming the bad part."""


class TimeshareSecretError(ValueError):
    """Time sharing asked for, and NOWLAB_CLUSTER_SECRET missing or malformed: one line naming it."""


class TimeshareRefused(RuntimeError):
    """The manager answered and refused the check-in or check-out, or turned down this rank's
    secret: its one-line reason."""


def _address(text: str, where: str) -> tuple[str, int]:
    host, sep, port = text.strip().rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise TimeshareAddressError(f"{ENV}: {where}: expected HOST:PORT, got {text!r}")
    return host, int(port)


def manager_address(value: str | None, workstation: str) -> tuple[str, int] | None:
    """The manager this workstation's rank speaks to, from the variable's value (None: no time sharing)."""
    if value is None or not value.strip():
        return None
    if "=" not in value:
        return _address(value, "address")
    table: dict[str, tuple[str, int]] = {}
    for i, entry in enumerate(e for e in value.split(",") if e.strip()):
        name, sep, address = entry.partition("=")
        if not sep or not name.strip():
            raise TimeshareAddressError(f"{ENV}: entry {i}: expected WORKSTATION=HOST:PORT, got {entry!r}")
        table[name.strip()] = _address(address, f"entry {i} ({name.strip()})")
    if workstation not in table:
        raise TimeshareAddressError(f"{ENV}: no manager for workstation {workstation} "
                                    f"(given: {', '.join(sorted(table))})")
    return table[workstation]


def _request(address: tuple[str, int], secret: bytes, message: Mapping[str, object]) -> dict:
    with socket.create_connection(address, timeout=TIMEOUT_S) as sock:
        try:
            data = channel_auth.client_handshake(sock, secret, channel=channel_auth.TIMESHARE, timeout_s=TIMEOUT_S)
        except channel_auth.Refused as exc:
            raise TimeshareRefused(f"timeshare manager at {address[0]}:{address[1]}: {exc}") from None
        sock.sendall(json.dumps(message).encode() + b"\n")
        while b"\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    line = data.partition(b"\n")[0] if b"\n" in data else b""
    if not line:
        raise ConnectionError("closed without a reply")
    reply = json.loads(line)
    if not reply.get("ok"):
        raise TimeshareRefused(f"timeshare manager at {address[0]}:{address[1]}: {reply.get('error')}")
    return reply


@dataclass(frozen=True)
class Registration:
    """A rank checked in as `job` with the manager at `address`; check_out() ends it."""

    address: tuple[str, int]
    job: str
    pid: int
    secret: bytes = field(repr=False)

    def check_out(self) -> None:
        """Leave the manager; it continues the pid before letting it go. A gone manager is no error."""
        try:
            _request(self.address, self.secret, {"op": "checkout", "job": self.job, "pid": self.pid})
        except OSError as exc:
            print(f"timeshare: check-out of {self.job} pid {self.pid}: no manager ({exc})", file=sys.stderr)


def check_in(job: str, workstation: str, environ: Mapping[str, str] | None = None) -> Registration | None:
    """Register this process as a rank of `job` if NOWLAB_TIMESHARE says so; None if not (or no manager answers).

    The manager may stop this process before its reply arrives (not this job's slot): the
    call then returns when the job's slot comes.
    """
    env = os.environ if environ is None else environ
    address = manager_address(env.get(ENV), workstation)
    if address is None:
        return None
    try:
        secret = channel_auth.secret_from_env(env, channel_auth.TIMESHARE.secret_env)
    except ValueError as exc:
        raise TimeshareSecretError(str(exc)) from None
    if secret is None:
        raise TimeshareSecretError(f"{channel_auth.TIMESHARE.secret_env}: not set, and the manager at "
                                   f"{address[0]}:{address[1]} ({ENV}) serves only holders of the cluster's secret")
    pid = os.getpid()
    try:
        _request(address, secret, {"op": "checkin", "job": job, "pid": pid})
    except OSError as exc:
        print(f"timeshare: check-in of {job} pid {pid} on {workstation}: no manager at "
              f"{address[0]}:{address[1]} ({exc}); running unmanaged", file=sys.stderr)
        return None
    return Registration(address, job, pid, secret)
