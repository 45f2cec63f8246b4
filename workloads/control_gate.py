"""The door of the control server: a connection gets a thread only once it has proved it is the run's.

One thread accepts and runs every handshake (workloads/channel_auth.py) with a selector, so
a peer that connects and says nothing costs a socket, not a thread, and never holds up the
job behind it. A peer outside `allowed_networks` is closed at accept. When `max_pending`
handshakes are open, the oldest is dropped to make room: a flood of silent connections then
cannot shut out a job, which answers within a round trip. Each refusal is logged (a warning
naming the channel, the peer and the reason) and counted by reason. The same door serves the
resident pool's ranks (workloads/pool.py) and the time-sharing managers
(containers/agents/timeshare_manager.py), each with its own context string and name.
Standard library only.
"""
from __future__ import annotations

import collections
import logging
import selectors
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

from workloads import channel_auth

log = logging.getLogger(__name__)

MAX_PENDING_HANDSHAKES = 256
_TICK_S = 0.25  # how soon close() is noticed

Admitted = Callable[[socket.socket, bytes], None]  # (authenticated socket, what it sent after its answer)


@dataclass
class _Pending:
    sock: socket.socket
    peer: tuple
    nonce: bytes
    deadline: float  # time.monotonic()
    data: bytes = b""


@dataclass
class Refusals:
    """Connections closed before their first message, by reason (thread-safe)."""

    channel: str = "control channel"  # how the warnings name it
    counts: collections.Counter = field(default_factory=collections.Counter)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def total(self) -> int:
        with self._lock:
            return sum(self.counts.values())

    def add(self, peer: tuple, reason: str, detail: str = "") -> None:
        with self._lock:
            self.counts[reason] += 1
        log.warning("%s: refused %s port %s: %s%s", self.channel, peer[0], peer[1], reason,
                    f" ({detail})" if detail else "")


class Gate:
    """Accepts on `listener` until close(); hands each authenticated socket to `admitted`."""

    def __init__(self, listener: socket.socket, secret: bytes, admitted: Admitted, *,
                 allowed_networks: Sequence[channel_auth.Network] | None = None,
                 timeout_s: float = channel_auth.HANDSHAKE_TIMEOUT_S,
                 max_pending: int = MAX_PENDING_HANDSHAKES,
                 channel: channel_auth.Channel = channel_auth.CONTROL) -> None:
        self.listener = listener
        self.secret = secret
        self.admitted = admitted
        self.allowed_networks = allowed_networks
        self.timeout_s = timeout_s
        self.max_pending = max_pending
        self.channel = channel
        self.refusals = Refusals(channel.name)
        self._pending: dict[socket.socket, _Pending] = {}  # insertion order: oldest first
        self._selector = selectors.DefaultSelector()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"nowlab-{channel.name.replace(' ', '-')}-gate",
                                        daemon=True)
        listener.setblocking(False)
        self._selector.register(listener, selectors.EVENT_READ, None)
        self._thread.start()

    @property
    def running(self) -> bool:
        """The gate's thread still accepts (False after close(), or if it failed)."""
        return self._thread.is_alive()

    def close(self) -> None:
        """Stop accepting, close the listener and every handshake still open."""
        self._stop.set()
        self._thread.join(timeout=2)

    # -- the gate's one thread -------------------------------------------------------------
    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                soonest = min((p.deadline for p in self._pending.values()), default=time.monotonic() + _TICK_S)
                for key, _ in self._selector.select(max(0.0, min(_TICK_S, soonest - time.monotonic()))):
                    if key.data is None:
                        self._accept()
                    else:
                        self._read(key.data)
                self._expire()
        finally:
            for p in list(self._pending.values()):
                self._drop(p)
            self._selector.close()
            self.listener.close()

    def _accept(self) -> None:
        try:
            sock, peer = self.listener.accept()
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:  # e.g. out of file descriptors: the listener stays, the peer retries
            log.warning("%s: accept failed: %s", self.channel.name, exc)
            self._stop.wait(_TICK_S)  # the listener stays readable: do not spin on it
            return
        if not channel_auth.peer_allowed(peer[0], self.allowed_networks):
            sock.close()
            self.refusals.add(peer, "outside the allowed networks")
            return
        if len(self._pending) >= self.max_pending:
            oldest = next(iter(self._pending.values()))
            self._refuse(oldest, "dropped for a newer connection",
                         f"{self.max_pending} handshakes were open")
        nonce, line = channel_auth.challenge()
        try:
            sock.setblocking(False)
            sent = sock.send(line)  # a fresh socket's buffer takes these ~80 bytes at once
        except OSError as exc:
            sock.close()
            self.refusals.add(peer, "closed before the answer", str(exc))
            return
        if sent != len(line):
            sock.close()
            self.refusals.add(peer, "closed before the answer", "challenge not sent whole")
            return
        pending = _Pending(sock, peer, nonce, time.monotonic() + self.timeout_s)
        self._pending[sock] = pending
        self._selector.register(sock, selectors.EVENT_READ, pending)

    def _read(self, p: _Pending) -> None:
        try:
            chunk = p.sock.recv(channel_auth.MAX_LINE_BYTES)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            self._refuse(p, "closed before the answer", str(exc))
            return
        if not chunk:
            self._refuse(p, "closed before the answer")
            return
        p.data += chunk
        if b"\n" not in p.data:
            if len(p.data) > channel_auth.MAX_LINE_BYTES:
                self._refuse(p, "answer too long")
            return
        line, _, rest = p.data.partition(b"\n")
        try:
            channel_auth.check_answer(self.secret, p.nonce, line, self.channel)
        except channel_auth.AuthError as exc:
            reason, _, detail = str(exc).partition(" (")
            self._refuse(p, reason, detail.rstrip(")"))
            return
        self._forget(p)
        try:
            p.sock.setblocking(True)
            p.sock.sendall(channel_auth.ACCEPTED + b"\n")
        except OSError as exc:
            p.sock.close()
            self.refusals.add(p.peer, "closed before the answer", str(exc))
            return
        try:
            self.admitted(p.sock, rest)
        except (OSError, RuntimeError) as exc:  # no thread to be had: this job is lost, the gate is not
            p.sock.close()
            log.warning("%s: could not take in %s port %s: %s", self.channel.name, p.peer[0], p.peer[1], exc)

    def _expire(self) -> None:
        now = time.monotonic()
        for p in [p for p in self._pending.values() if p.deadline <= now]:
            self._refuse(p, "no answer within the handshake timeout", f"{self.timeout_s:g} s")

    def _refuse(self, p: _Pending, reason: str, detail: str = "") -> None:
        self._drop(p)
        self.refusals.add(p.peer, reason, detail)

    def _forget(self, p: _Pending) -> None:
        self._selector.unregister(p.sock)
        del self._pending[p.sock]

    def _drop(self, p: _Pending) -> None:
        self._forget(p)
        p.sock.close()
