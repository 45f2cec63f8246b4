"""The socket Batsim's side talks through: a ZeroMQ REQ socket connected to the scheduler's REP.

As Batsim does (docs/protocol.rst: "Batsim uses a ZMQ REQ socket ... The scheduler uses a ZMQ REP
socket"); pybatsim 3.2.1 binds its REP socket (batsim/network.py), so this side connects and may
start before the scheduler does.

Two ways a scheduler fails to answer, each one `SchedulerError` line naming the message:

* no reply within `timeout_s` (`SchedulerTimeout`);
* the scheduler's end of the connection closes while a reply is awaited (`SchedulerGone`): a
  monitor on the socket reports ZeroMQ's EVENT_DISCONNECTED, which a scheduler process that exits
  or crashes causes at once, so this does not wait for the timeout.
"""
from __future__ import annotations

import time

import zmq


class SchedulerError(RuntimeError):
    """The scheduler misbehaved: one line naming the message, the event and the field."""


class SchedulerTimeout(SchedulerError):
    """No reply within the timeout."""


class SchedulerGone(SchedulerError):
    """The scheduler closed the connection (its process exited) before replying."""


class ZmqChannel:
    """One REQ socket: `exchange` sends a message and returns the reply's bytes."""

    def __init__(self, endpoint: str, *, timeout_s: float) -> None:
        if not timeout_s > 0:
            raise ValueError(f"timeout_s: must be > 0, got {timeout_s}")
        self.endpoint, self.timeout_s = endpoint, timeout_s
        self._context = zmq.Context()
        self._socket = self._context.socket(zmq.REQ)
        self._socket.setsockopt(zmq.LINGER, 0)
        self._monitor = self._socket.get_monitor_socket(zmq.EVENT_DISCONNECTED)
        try:
            self._socket.connect(endpoint)
        except zmq.ZMQError as exc:
            self.close()
            raise ValueError(f"--socket: cannot connect to {endpoint!r} ({exc})") from None
        self._poller = zmq.Poller()
        self._poller.register(self._socket, zmq.POLLIN)
        self._poller.register(self._monitor, zmq.POLLIN)

    def exchange(self, text: str, label: str) -> bytes:
        """Send `text`, wait for the reply; `label` names the message in errors ("message 3 (t=11)")."""
        self._socket.send_string(text)
        deadline = time.monotonic() + self.timeout_s
        while True:
            left_ms = (deadline - time.monotonic()) * 1000.0
            if left_ms <= 0:
                raise SchedulerTimeout(f"{label}: the scheduler did not reply within {self.timeout_s:g} s "
                                       f"(--timeout-s; is it listening on {self.endpoint}?)")
            ready = dict(self._poller.poll(max(1, int(left_ms))))
            if self._socket in ready:
                return self._socket.recv()
            if self._monitor in ready:
                self._monitor.recv_multipart()  # EVENT_DISCONNECTED: the only event the monitor passes
                raise SchedulerGone(f"{label}: the scheduler closed its connection before replying "
                                    f"(did its process exit?)")

    def close(self) -> None:
        self._socket.disable_monitor()
        self._monitor.close(linger=0)
        self._socket.close(linger=0)
        self._context.term()

    def __enter__(self) -> ZmqChannel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["SchedulerError", "SchedulerGone", "SchedulerTimeout", "ZmqChannel"]
