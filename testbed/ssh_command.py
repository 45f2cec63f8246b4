"""One command over an open SSH connection, without paramiko's stdin file.

paramiko's `SSHClient.exec_command` hands back a `ChannelStdinFile` whose finalizer closes it,
and closing it takes the channel's lock (`shutdown_write`). When the garbage collector runs
that finalizer on the transport's thread while the thread holds the lock (handling the
channel's close), the thread waits on itself and every later command on the connection
hangs: paramiko#2685 (open; paramiko 5.1 here). It hung the SSH backend's live test in 2
of 7 runs (in `put_tree` where the stack was taken). Here the command's stdin is written and
closed on the channel itself, and only its stdout and stderr files are made (their close
takes no lock).
"""
from __future__ import annotations

import paramiko
from paramiko.channel import ChannelFile


def exec_command(client: paramiko.SSHClient, command: str, *, timeout: float | None = None,
                 stdin: bytes | None = None) -> tuple[paramiko.Channel, ChannelFile, ChannelFile]:
    """Start `command`; its stdin gets `stdin` (if any), then end of file. Returns the channel
    (for `recv_exit_status`) and files for its stdout and stderr."""
    transport = client.get_transport()
    if transport is None or not transport.is_active():
        raise paramiko.SSHException("the SSH connection is not open")
    chan = transport.open_session(timeout=timeout)
    chan.settimeout(timeout)
    chan.exec_command(command)
    if stdin:
        chan.sendall(stdin)
    chan.shutdown_write()
    return chan, chan.makefile("rb"), chan.makefile_stderr("rb")
