"""The monitor's readings of real workstations: one `hostagent sample` per host, followed over ssh.

Without it every monitor sample opened three ssh channels per workstation (the cap, the
owners' CPU time, the tc counters), two of them starting python3 on the workstation being
measured. Here one agent process per host, started once, writes one JSON line per interval
(hostagent.sample) on one ssh channel; the controller keeps the newest (sample_lines.py).
It carries the cluster's mark, so `down` (hostagent.teardown) stops it, and it ends by
itself when the channel closes or the workstation's record is gone.
"""
from __future__ import annotations

import shlex
from collections.abc import Callable, Iterator, Sequence

import paramiko

from testbed.backends.base import BackendError, CpuLimits, Sampled
from testbed.backends.sample_lines import LineSampleStream
from testbed.backends.ssh.agent import hostagent
from testbed.backends.ssh.layout import HostFolder, translate
from workloads.wire import sampler_lines


def sampler_argv(folder: HostFolder, cluster: str, dev: str, *, interval_s: float, mark: str,
                 tc_argv: Sequence[str]) -> list[str]:
    """The agent's command on the host: the cluster's mark in its environment, the tc read
    moved onto the host's interface."""
    if interval_s <= 0:
        raise ValueError(f"interval_s: must be above 0, not {interval_s}")
    tc = translate(tc_argv, folder, dev) if tc_argv else []
    return ["env", f"{hostagent.MARK}={cluster}", *folder.agent_argv("sample", f"{interval_s:g}", mark, "--", *tc)]


def _reading(r: dict) -> Sampled:
    """One workstation's reading as the agent parsed it."""
    lim = r["limits"]
    return Sampled(t=float(r["t"]), procs_ns=int(r["procs_ns"]), tc=str(r.get("tc") or ""),
                   limits=CpuLimits(quota_us=int(lim["quota_us"]), period_us=int(lim["period_us"]),
                                    cpuset=str(lim["cpuset"])))


def parse_line(line: str) -> dict[str, Sampled]:
    """One agent line -> its workstation's readings ({} for a line that is not one)."""
    return sampler_lines.parse(line, _reading)


# machine id -> (a connected client to its host, the agent's argv there)
Starter = Callable[[str], tuple[paramiko.SSHClient, list[str]]]


class SshSampleStream(LineSampleStream):
    """One agent per host, each on its own ssh channel; `close` closes the channels, which
    ends the agents (their next write fails)."""

    def __init__(self, machines: Sequence[str], starter: Starter, stale_s: float) -> None:
        self.starter = starter
        self._channels: set[paramiko.Channel] = set()
        super().__init__(machines, self._open, parse_line, stale_s,
                         (paramiko.SSHException, OSError, EOFError, BackendError))

    def _open(self, machine: str) -> Iterator[bytes]:
        client, argv = self.starter(machine)
        transport = client.get_transport()
        if transport is None:
            raise BackendError(f"{machine}: the ssh connection is closed")
        chan = transport.open_session()
        self._channels.add(chan)
        try:
            chan.exec_command(shlex.join(argv))
            while chunk := chan.recv(65536):
                yield chunk
        finally:
            self._channels.discard(chan)
            chan.close()

    def close(self) -> None:
        super().close()
        for chan in list(self._channels):
            chan.close()
