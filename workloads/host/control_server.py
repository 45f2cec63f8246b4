"""The scheduler's end of the control channel: a small TCP server on the host.

Every launch of a job (the first run and each relaunch after a resize) opens a
new connection whose first line is a `hello` naming the job; the server hands
that connection to whoever waits for the job. Times are taken on the host clock
when a line is sent or received, so latencies need no clock agreement with the
workstations. Standard library only (threads and sockets).

It listens on one address the caller names (the cluster's gateway, or 127.0.0.1 for a run
on this host), never on every interface unless the caller says why. Before a connection may
say anything it proves it holds the run's secret (workloads/channel_auth.py) within a short
timeout; workloads/control_gate.py runs the handshakes, so a peer that connects and stays
silent holds up no one, and one outside `allowed_networks` is closed at once. Each refusal is
logged (a warning naming the peer and the reason) and counted in `refused`.
"""
from __future__ import annotations

import ipaddress
import queue
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Iterable

from workloads import channel_auth
from workloads.control_gate import Gate
from workloads.wire.control import LineBuffer, ProtocolError, encode


def check_bind_host(bind_host: str, allow_wildcard: bool) -> None:
    """ValueError (one line, naming the field) for an address that listens on every interface."""
    if not bind_host:
        raise ValueError("bind_host: empty; give the cluster's gateway address (127.0.0.1 for a run on this host)")
    try:
        wildcard = ipaddress.ip_address(bind_host).is_unspecified
    except ValueError:
        wildcard = False  # a host name: it resolves to one address
    if wildcard and not allow_wildcard:
        raise ValueError(f"bind_host: {bind_host} listens on every network of this machine; give the cluster's "
                         f"gateway address (127.0.0.1 for a run on this host)")


@dataclass
class Received:
    message: dict[str, Any]
    at: float  # time.monotonic() on the host when the line arrived


@dataclass
class JobConnection:
    """One launch of one job, from its hello to its last line."""

    job: str
    hello: Received
    _sock: socket.socket
    # no log of the lines: the executor keeps what it needs from each, and a cell keeps its
    # launches to the end (a 2-h soak grew ~20 MiB/h while every decoded line was kept here)
    _inbox: "queue.Queue[Received | None]" = field(default_factory=queue.Queue)

    def send(self, message: dict[str, Any]) -> float:
        """Send one line; returns the host time it left."""
        at = time.monotonic()
        self._sock.sendall(encode(message))
        return at

    def expect(self, kinds: str | tuple[str, ...], timeout_s: float) -> Received:
        """The next message, which must be of one of these types (an `error` from the job raises)."""
        kinds = (kinds,) if isinstance(kinds, str) else kinds
        deadline = time.monotonic() + timeout_s
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"job {self.job}: no {kinds} within {timeout_s} s")
            try:
                item = self._inbox.get(timeout=remaining)
            except queue.Empty:
                continue
            if item is None:
                raise ConnectionError(f"job {self.job} closed the channel while we waited for {kinds}")
            if item.message["type"] in kinds:
                return item
            if item.message["type"] == "error":
                raise RuntimeError(f"job {self.job} reported: {item.message}")
            raise ProtocolError(f"job {self.job}: expected {kinds}, got {item.message}")

    def close(self) -> None:
        self._sock.close()


class ControlServer:
    """Accepts job connections; use as a context manager so the socket is closed."""

    def __init__(self, bind_host: str, port: int = 0, *, secret: bytes | None = None,
                 allowed_networks: Iterable[str] | None = None, allow_wildcard: bool = False,
                 handshake_timeout_s: float = channel_auth.HANDSHAKE_TIMEOUT_S) -> None:
        """`secret`: the run's (default: a fresh one; hand it to the jobs with `job_env()`).
        `allow_wildcard`: listen on 0.0.0.0 / :: anyway, for workstations that reach this host
        through an address it does not own (NAT); the secret is then the only guard."""
        check_bind_host(bind_host, allow_wildcard)
        self.secret = channel_auth.new_secret() if secret is None else secret
        networks = None if allowed_networks is None else channel_auth.parse_networks(allowed_networks)
        self.bind_host = bind_host
        self._arrivals: dict[str, "queue.Queue[JobConnection]"] = {}
        self._lock = threading.Lock()
        listener = socket.create_server((bind_host, port), reuse_port=False)
        self.port = listener.getsockname()[1]
        self._gate = Gate(listener, self.secret, self._admitted, allowed_networks=networks,
                          timeout_s=handshake_timeout_s)

    @property
    def refused(self) -> int:
        """Connections closed before their first message: wrong secret, silent, outside the networks."""
        return self._gate.refusals.total

    @property
    def refusals(self) -> dict[str, int]:
        """The same, by reason."""
        return dict(self._gate.refusals.counts)

    def job_env(self) -> dict[str, str]:
        """What a job's environment needs to be let in."""
        return channel_auth.secret_env(self.secret)

    def __enter__(self) -> "ControlServer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._gate.close()

    def _admitted(self, sock: socket.socket, rest: bytes) -> None:
        """A job's connection, past the gate: from here on its own thread reads it."""
        threading.Thread(target=self._read_loop, args=(sock, rest), daemon=True, name="nowlab-control-job").start()

    def _queue_for(self, job: str) -> "queue.Queue[JobConnection]":
        with self._lock:
            return self._arrivals.setdefault(job, queue.Queue())

    def forget(self, job: str) -> None:
        """`job` will launch no more: drop its queue of hellos (a long run would keep one per job)."""
        with self._lock:
            self._arrivals.pop(job, None)

    def connection(self, job: str, timeout_s: float) -> JobConnection:
        """Wait for the next launch of `job` to say hello."""
        try:
            return self._queue_for(job).get(timeout=timeout_s)
        except queue.Empty as exc:
            raise TimeoutError(f"job {job} did not connect within {timeout_s} s") from exc

    def _read_loop(self, sock: socket.socket, rest: bytes) -> None:
        buffer = LineBuffer()
        conn: JobConnection | None = None
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            chunk = rest or sock.recv(65536)  # a job waits for "ok" before its hello: rest is empty
            while chunk:
                at = time.monotonic()
                for message in buffer.feed(chunk):
                    item = Received(message, at)
                    if conn is None:
                        if message["type"] != "hello":
                            raise ProtocolError(f"first line must be hello, got {message}")
                        conn = JobConnection(str(message["job"]), item, sock)
                        self._queue_for(conn.job).put(conn)
                    else:
                        conn._inbox.put(item)
                chunk = sock.recv(65536)
        except (OSError, ProtocolError, KeyError):
            pass
        finally:
            if conn is not None:
                conn._inbox.put(None)
            else:  # nobody holds it: closed here
                sock.close()
