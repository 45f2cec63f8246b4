"""Keep this host's cores polling, not halting, when they idle while a cluster is up.

A job's rank waits for a message politely: it tests, then sleeps 0.2 ms (workloads/polite.py).
When nothing else on its core is runnable the core idles, and on this kind of machine (a KVM
guest whose cpuidle driver is haltpoll with guest_halt_poll_ns = 0) an idle core halts at
once: the vCPU leaves the host's CPU, and the rank's wake-up waits for the host to run it
again. A job alone in the cluster, whose cores idle between its messages, then ran 7-13%
slower than the same job among others that kept the cores busy
(checks/idle_cores.py), and the meter saw nothing of it: its samples run on a busy
core. Predictions from profiles, taken with one job at a time, and measurements of cells,
taken with several, then disagree by how busy the cluster happened to be.

The kernel's PM QoS interface removes that difference: while a process holds
/dev/cpu_dma_latency open with 0 written to it, cpuidle picks its polling state, so an idle
core spins in the kernel and a waking rank runs at once. The request ends when the file is
closed, so whoever holds it (the cluster's speed keeper, testbed/keeper.py) cannot leave it
behind, even if killed. The cost: idle cores burn their CPU time, on the host, for as long
as a cluster is up.
"""
from __future__ import annotations

import struct
from pathlib import Path
from typing import BinaryIO, Literal

QOS_PATH = Path("/dev/cpu_dma_latency")
HostIdle = Literal["poll", "halt"]


class IdleHold:
    """The PM QoS request of one process; `status` says whether it is held, or why not."""

    def __init__(self, mode: HostIdle | Literal["remote"], path: Path = QOS_PATH):
        self.mode, self.path = mode, path
        self._file: BinaryIO | None = None
        self.status = {"halt": "halt (the kernel's default)",
                       "remote": "not held: the workstations' cores are other hosts'"}.get(mode, "not held yet")

    def __enter__(self) -> "IdleHold":
        if self.mode != "poll":
            return self
        try:
            self._file = self.path.open("wb", buffering=0)
            self._file.write(struct.pack("i", 0))  # microseconds of exit latency allowed: none
        except OSError as exc:  # no such device, or not root: the cluster runs on, and says so
            if self._file is not None:
                self._file.close()
                self._file = None
            self.status = f"not held: {self.path}: {exc.strerror or exc}"
        else:
            self.status = "poll (PM QoS latency 0 held)"
        return self

    def __exit__(self, *exc: object) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    @property
    def held(self) -> bool:
        return self._file is not None
