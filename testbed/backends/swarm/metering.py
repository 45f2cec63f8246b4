"""The speed meter on a Swarm's hosts: one probe container per host (workloads/speed_probe.py).

The speed keeper (testbed/keeper.py) holds each governed workstation at its reference speed
from the measured work per CPU-second of its host core. On one machine it measures in
process; the Swarm's hosts are elsewhere, so each host that runs workstations of the cluster
gets one more container of the workstation image, pinned to the cores those use, with no CPU
cap, running the probe, whose JSON lines the keeper follows through the host's engine
(`MeterStream`). Placement of speed workstations reads each host's cores the same way, once,
with a probe that stops by itself (`read_factors`).

What it costs: the probe's ~1.4% of each metered core (as on one machine), and a quota written
through the engine (`docker update`, 15-200 ms) instead of a cgroup file, so the governor's
writes lag its readings on a busy engine.
"""
from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Sequence

import docker

from testbed.backends.docker import engine
from testbed.backends.swarm.follow import HostThreads
from testbed.meter import PLACEMENT_READ_S, Sample, factors_of, parse_sample

ROLE_LABEL = engine.ROLE_LABEL
ROLE = "meter"
PROBE = ["python3", "-m", "workloads.speed_probe"]
WORKLOADS = "/opt/nowlab/workloads/"


def container_name(cluster: str, host: str, purpose: str = "meter") -> str:
    """Not a workstation's name: host names cannot hold '_'."""
    return f"nowlab-{cluster}_{purpose}_{host}"


def probe_config(cluster: str, host: str, image: str, cores: Sequence[int], seconds: float | None = None) -> dict:
    """The probe container's parameters, as plain data: the cluster's label (so `remove` and `gc`
    take it), pinned to the metered cores, no cap, the probe as its whole command."""
    if not cores:
        raise ValueError(f"cores: none to meter on host {host!r}")
    argv = ["--cores", ",".join(map(str, sorted(cores)))] + ([] if seconds is None else ["--seconds", f"{seconds:g}"])
    return {"image": image, "name": container_name(cluster, host, "meter" if seconds is None else "probe"),
            "labels": {engine.LABEL: cluster, ROLE_LABEL: ROLE}, "entrypoint": PROBE, "command": argv,
            "cpuset_cpus": ",".join(map(str, sorted(cores))), "security_opt": ["no-new-privileges"]}


def probe_files(files: dict[str, bytes]) -> dict[str, bytes]:
    """Of a workstation's files, only the workloads (the probe is one of them): no keys."""
    return {k: v for k, v in files.items() if k.startswith(WORKLOADS)}


def create(c: docker.DockerClient, cfg: dict, files: dict[str, bytes], owner: dict[str, str]) -> str:
    hc = c.api.create_host_config(cpuset_cpus=cfg["cpuset_cpus"], security_opt=cfg["security_opt"], init=True)
    cid = c.api.create_container(cfg["image"], name=cfg["name"], labels={**cfg["labels"], **owner},
                                 entrypoint=cfg["entrypoint"], command=cfg["command"], host_config=hc,
                                 detach=True)["Id"]
    engine.copy_in(c, cid, probe_files(files))
    engine.start(c, cid)
    return cid


def read_factors(c: docker.DockerClient, cluster: str, host: str, image: str, cores: Sequence[int],
                 files: dict[str, bytes], owner: dict[str, str], kernel: str | None = None) -> dict[int, float]:
    """Each core's factor (reference cores per core) from a probe that runs PLACEMENT_READ_S a
    core and stops, as `meter.quick_factors` reads this machine's cores."""
    seconds = PLACEMENT_READ_S * len(cores)
    cid = create(c, probe_config(cluster, host, image, cores, seconds), files, owner)
    try:
        c.api.wait(cid, timeout=seconds + 60)
        out = c.api.logs(cid, stdout=True, stderr=False).decode(errors="replace")
    finally:
        c.api.remove_container(cid, force=True)
    samples = [s for line in out.splitlines() if (s := parse_sample(line)) is not None]
    got = factors_of(samples, kernel)
    missing = sorted(set(cores) - set(got))
    if missing:
        raise RuntimeError(f"host {host!r}: the probe gave no reading of core {missing[0]}")
    return got


class MeterStream:
    """Every host's probe output, as Samples whose `core` is the cluster's slot id.

    One thread per host follows its probe container's log through the host's engine; `drain`
    returns what arrived since the last call. A thread whose stream ends (a host gone, the
    container removed) is started again at the next `drain`, at most once per RETRY_S."""

    RETRY_S = 5.0

    def __init__(self, probes: dict[str, tuple[Callable[[], docker.DockerClient], str]],
                 slot_of: dict[tuple[str, int], int]) -> None:
        self.probes = probes      # host -> (its engine client, the probe container's id)
        self.slot_of = slot_of    # (host, core) -> slot id
        self._q: queue.Queue[Sample] = queue.Queue()
        self._threads = HostThreads(probes, self._follow, "nowlab-meter", self.RETRY_S)
        self._stop = threading.Event()
        start = time.time()
        self._last_t = {h: start for h in probes}  # a restarted follow skips what it had (since= is whole seconds)

    def _follow(self, host: str) -> None:
        client, cid = self.probes[host]
        buf = b""
        try:
            for chunk in client().api.logs(cid, stream=True, follow=True, stdout=True, stderr=False,
                                           since=int(self._last_t[host])):
                if self._stop.is_set():
                    return
                buf += chunk
                *lines, buf = buf.split(b"\n")
                for line in lines:
                    s = parse_sample(line.decode(errors="replace"))
                    slot = None if s is None else self.slot_of.get((host, s.core))
                    if s is not None and slot is not None and s.t > self._last_t[host]:
                        self._last_t[host] = s.t
                        self._q.put(Sample(s.t, slot, s.kernel, s.factor, s.cpu_s))
        except (docker.errors.DockerException, OSError):
            return  # `drain` starts it again later

    def drain(self) -> list[Sample]:
        self._threads.ensure()
        out: list[Sample] = []
        while True:
            try:
                out.append(self._q.get_nowait())
            except queue.Empty:
                return out

    def close(self) -> None:
        self._stop.set()
