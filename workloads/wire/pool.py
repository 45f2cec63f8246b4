"""The resident pool's wire format, shared by the ranks (workloads.pool) and the host (workloads.host.pool_client).

Before any of it, the host proves it holds the cluster's secret (NOWLAB_CLUSTER_SECRET): the
handshake of workloads/channel_auth.py with the pool's context (channel_auth.POOL); a rank
closes a connection that does not answer it (workloads/control_gate.py counts and logs it).
Then one JSON object per line over TCP, one connection per launch and member:
  host -> rank   {"type": "ping"}                       -> {"type": "pong", "rank", "size", "host", "slot",
                                                            "jobs_run", "refused": connections it closed}
  host -> rank   {"type": "run", "job", "argv", "env", "members", "tag"}
                 -> {"type": "started"} once the job's communicator exists,
                    then {"type": "exit", "code", "stdout", "stderr"} when the module returns
  host -> rank   {"type": "cancel"} (during a run): the rank's next polite wait raises
  host -> rank   {"type": "stop"}: the rank leaves its loop (the host sends it to every rank)
Runs both in the containers and on the host: standard library only.
"""
from __future__ import annotations

import json
import os
import socket
from typing import Any

PORT_BASE = 7790  # slot s of a workstation listens on PORT_BASE + s
PORT_ENV = "NOWLAB_POOL_PORT"  # another base, for pools that share one network namespace (local runs)
BIND_ENV = "NOWLAB_POOL_BIND"  # where ranks listen: every interface of a workstation (its own network
# namespace: loopback and the cluster network), 127.0.0.1 for a pool on this host (workloads/host/pool_local.py)
MAX_SLOTS = 8
MAX_LINE_BYTES = 4 << 20  # an exit line carries the job's stdout (the result line)
OUTPUT_TAIL = 1 << 20
TYPES = frozenset({"ping", "pong", "run", "started", "exit", "cancel", "stop", "error"})


def port_base() -> int:
    return int(os.environ.get(PORT_ENV, PORT_BASE))


def bind_host() -> str:
    return os.environ.get(BIND_ENV, "0.0.0.0")


class WireError(ValueError):
    """A line that is not a pool message."""


def encode(message: dict[str, Any]) -> bytes:
    if message.get("type") not in TYPES:
        raise WireError(f"type: unknown pool message {message.get('type')!r}")
    return json.dumps(message, separators=(",", ":")).encode("utf-8") + b"\n"


class Lines:
    """Read whole pool messages from a socket (blocking, with the socket's own timeout)."""

    def __init__(self, sock: socket.socket, pending: bytes = b"") -> None:
        self.sock = sock
        self._pending = pending  # what came with the handshake's answer

    def read(self) -> dict[str, Any] | None:
        """The next message, or None once the peer has closed."""
        while b"\n" not in self._pending:
            chunk = self.sock.recv(65536)
            if not chunk:
                return None
            self._pending += chunk
            if len(self._pending) > MAX_LINE_BYTES:
                raise WireError("line: longer than 4 MiB")
        line, self._pending = self._pending.split(b"\n", 1)
        return decode(line)


def decode(line: bytes) -> dict[str, Any]:
    """One line (without its newline) as a pool message; WireError if it is not one."""
    try:
        message = json.loads(line)
    except json.JSONDecodeError as exc:
        raise WireError(f"line: not JSON: {line[:80]!r}") from exc
    if not isinstance(message, dict) or message.get("type") not in TYPES:
        raise WireError(f"type: not a pool message: {line[:80]!r}")
    return message
