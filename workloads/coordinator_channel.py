"""The coordinator's end of the control channel to the scheduler.

Only the coordinator (lowest rank) talks to the scheduler; it relays decisions to
the other ranks over MPI. The connection is plain TCP to HOST:PORT, taken from
--control or the NOWLAB_CONTROL environment variable (read when the program
starts, not at import), so it works the same for Docker and SSH backends. Before
its first line it answers the controller's challenge with the run's secret
(NOWLAB_CONTROL_SECRET; workloads/channel_auth.py).
Runs inside the containers: standard library only.
"""
from __future__ import annotations

import os
import select
import socket
import time
from typing import Any

from workloads import channel_auth
from workloads.wire.control import LineBuffer, encode, parse_address

ENV_VAR = "NOWLAB_CONTROL"
CONNECT_TIMEOUT_S = 10.0


def control_address(cli_value: str | None) -> tuple[str, int] | None:
    """The controller address from the command line, else the environment, else None."""
    text = cli_value or os.environ.get(ENV_VAR)
    return parse_address(text) if text else None


class ControlClient:
    """Line-JSON client. `poll()` never blocks, so checking at a safe point is cheap."""

    def __init__(self, address: tuple[str, int], secret: bytes) -> None:
        self._sock = socket.create_connection(address, timeout=CONNECT_TIMEOUT_S)
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            rest = channel_auth.client_handshake(self._sock, secret)
        except (OSError, channel_auth.AuthError):
            self._sock.close()
            raise
        self._buffer = LineBuffer()
        self._inbox: list[dict[str, Any]] = self._buffer.feed(rest)
        self._closed = False

    def send(self, message: dict[str, Any]) -> None:
        self._sock.sendall(encode(message))

    def _read_available(self, timeout_s: float) -> None:
        readable, _, _ = select.select([self._sock], [], [], timeout_s)
        if not readable:
            return
        chunk = self._sock.recv(65536)
        if not chunk:
            self._closed = True
            return
        self._inbox.extend(self._buffer.feed(chunk))

    def poll(self, kind: str) -> dict[str, Any] | None:
        """The first pending message of this type, if one has arrived; never blocks."""
        if not self._closed:
            self._read_available(0.0)
        return self._take(kind)

    def expect(self, kind: str, timeout_s: float) -> dict[str, Any]:
        """Block (in the kernel, not spinning) until a message of this type arrives."""
        deadline = time.monotonic() + timeout_s
        while True:
            found = self._take(kind)
            if found is not None:
                return found
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"no {kind!r} from the controller within {timeout_s} s")
            if self._closed:
                raise ConnectionError(f"controller closed the channel while we waited for {kind!r}")
            self._read_available(min(remaining, 1.0))

    def _take(self, kind: str) -> dict[str, Any] | None:
        for i, message in enumerate(self._inbox):
            if message["type"] == kind:
                return self._inbox.pop(i)
        return None

    def close(self) -> None:
        self._sock.close()
