"""The scheduler's end of the control channel: a small TCP server on the host.

Every launch of a job (the first run and each relaunch after a resize) opens a
new connection whose first line is a `hello` naming the job; the server hands
that connection to whoever waits for the job. Times are taken on the host clock
when a line is sent or received, so latencies need no clock agreement with the
workstations. Standard library only (threads and sockets).
"""
from __future__ import annotations

import queue
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from workloads.protocol import LineBuffer, ProtocolError, encode


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
    _inbox: "queue.Queue[Received | None]" = field(default_factory=queue.Queue)
    log: list[Received] = field(default_factory=list)

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

    def __init__(self, bind_host: str = "0.0.0.0", port: int = 0) -> None:
        self._listener = socket.create_server((bind_host, port), reuse_port=False)
        self._listener.settimeout(0.5)
        self.port = self._listener.getsockname()[1]
        self._arrivals: dict[str, "queue.Queue[JobConnection]"] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._accepter = threading.Thread(target=self._accept_loop, name="nowlab-control-accept", daemon=True)
        self._accepter.start()

    def __enter__(self) -> "ControlServer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._stop.set()
        self._listener.close()
        self._accepter.join(timeout=2)

    def _queue_for(self, job: str) -> "queue.Queue[JobConnection]":
        with self._lock:
            return self._arrivals.setdefault(job, queue.Queue())

    def connection(self, job: str, timeout_s: float) -> JobConnection:
        """Wait for the next launch of `job` to say hello."""
        try:
            return self._queue_for(job).get(timeout=timeout_s)
        except queue.Empty as exc:
            raise TimeoutError(f"job {job} did not connect within {timeout_s} s") from exc

    def _accept_loop(self) -> None:
        while not self._stop.is_set():
            try:
                sock, _ = self._listener.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            reader = threading.Thread(target=self._read_loop, args=(sock,), daemon=True)
            reader.start()
            self._threads.append(reader)

    def _read_loop(self, sock: socket.socket) -> None:
        buffer = LineBuffer()
        conn: JobConnection | None = None
        try:
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                at = time.monotonic()
                for message in buffer.feed(chunk):
                    item = Received(message, at)
                    if conn is None:
                        if message["type"] != "hello":
                            raise ProtocolError(f"first line must be hello, got {message}")
                        conn = JobConnection(str(message["job"]), item, sock)
                        conn.log.append(item)
                        self._queue_for(conn.job).put(conn)
                    else:
                        conn.log.append(item)
                        conn._inbox.put(item)
        except (OSError, ProtocolError):
            pass
        finally:
            if conn is not None:
                conn._inbox.put(None)
