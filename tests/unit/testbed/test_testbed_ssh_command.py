"""A command over SSH makes no paramiko stdin file: its finalizer can deadlock the transport
thread (paramiko#2685), which hung the SSH backend's live test in 2 of 7 runs."""
from __future__ import annotations

import io

import paramiko
import pytest

from testbed import ssh_command


class Channel:
    def __init__(self) -> None:
        self.sent, self.calls = b"", []

    def settimeout(self, t):
        self.calls.append(("settimeout", t))

    def exec_command(self, command):
        self.calls.append(("exec", command))

    def sendall(self, data):
        self.sent += data

    def shutdown_write(self):
        self.calls.append(("eof",))

    def makefile(self, mode):
        return io.BytesIO(b"out")

    def makefile_stderr(self, mode):
        return io.BytesIO(b"err")

    def makefile_stdin(self, mode):
        raise AssertionError("a stdin file was made")


class Transport:
    def __init__(self, active: bool = True) -> None:
        self.channel, self.active = Channel(), active

    def is_active(self):
        return self.active

    def open_session(self, timeout=None):
        return self.channel


class Client:
    def __init__(self, transport):
        self.transport = transport

    def get_transport(self):
        return self.transport


def test_stdin_goes_over_the_channel_then_end_of_file_and_no_stdin_file_is_made():
    t = Transport()
    chan, out, err = ssh_command.exec_command(Client(t), "cat", timeout=5.0, stdin=b"data")
    assert chan is t.channel and chan.sent == b"data"
    assert chan.calls == [("settimeout", 5.0), ("exec", "cat"), ("eof",)]
    assert (out.read(), err.read()) == (b"out", b"err")


def test_a_closed_connection_is_an_ssh_error():
    with pytest.raises(paramiko.SSHException, match="not open"):
        ssh_command.exec_command(Client(Transport(active=False)), "true")
    with pytest.raises(paramiko.SSHException, match="not open"):
        ssh_command.exec_command(Client(None), "true")
