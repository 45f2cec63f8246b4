"""The control channel's wire format: one JSON object per line, UTF-8.

Line-delimited JSON over plain TCP works for every backend (Docker now, SSH
hosts later): the coordinator rank only needs an address and a port.
Runs both in the containers and on the host: standard library only.

Messages (field "type"):
  job -> controller: hello, ack, released, restored, done, error
  controller -> job: preempt, partition
"""
from __future__ import annotations

import json
from typing import Any

JOB_TYPES = frozenset({"hello", "ack", "released", "restored", "done", "error"})
CONTROLLER_TYPES = frozenset({"preempt", "partition"})
MAX_LINE_BYTES = 1 << 20
RESULT_PREFIX = "NOWLAB_RESULT "  # the coordinator's final stdout line: this prefix, then JSON


class ProtocolError(ValueError):
    """A line that is not a well-formed control message."""


def encode(message: dict[str, Any]) -> bytes:
    """One message as one newline-terminated line."""
    kind = message.get("type")
    if kind not in JOB_TYPES | CONTROLLER_TYPES:
        raise ProtocolError(f"unknown message type {kind!r}")
    line = json.dumps(message, separators=(",", ":"), allow_nan=False)
    return line.encode("utf-8") + b"\n"


def decode(line: bytes) -> dict[str, Any]:
    """Parse one line (with or without its newline)."""
    try:
        message = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ProtocolError(f"not a JSON line: {line[:80]!r}") from exc
    if not isinstance(message, dict) or message.get("type") not in JOB_TYPES | CONTROLLER_TYPES:
        raise ProtocolError(f"not a control message: {line[:80]!r}")
    return message


class LineBuffer:
    """Reassembles lines from TCP chunks, which may split or join them."""

    def __init__(self) -> None:
        self._pending = b""

    def feed(self, chunk: bytes) -> list[dict[str, Any]]:
        self._pending += chunk
        *lines, self._pending = self._pending.split(b"\n")
        if len(self._pending) > MAX_LINE_BYTES:
            raise ProtocolError("line too long")
        return [decode(line) for line in lines if line.strip()]


def parse_address(text: str) -> tuple[str, int]:
    """'host:port' -> (host, port); the host may be a name or an IPv4 address."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ValueError(f"control address must be HOST:PORT, got {text!r}")
    return host, int(port)
