"""The speed meter on a Swarm's hosts: one probe container per host (workloads/speed_probe.py).

The speed keeper (testbed/keeper.py) holds each governed workstation at its reference speed
from the measured work per CPU-second of its host core. On one machine it measures in
process; the Swarm's hosts are elsewhere, so each host that runs workstations of the cluster
gets one more container of the workstation image, pinned to the cores those use, with no CPU
cap, running the probe, whose JSON lines the keeper follows through the host's engine
(testbed/backends/meter_stream.py). Placement of speed workstations reads each host's cores the same way, once,
with a probe that stops by itself (`read_factors`).

What it costs: the probe's ~1.4% of each metered core (as on one machine), and a quota written
through the engine (`docker update`, 15-200 ms) instead of a cgroup file, so the governor's
writes lag its readings on a busy engine.
"""
from __future__ import annotations

from collections.abc import Sequence

import docker

from testbed.backends.docker import engine
from testbed.meter import PLACEMENT_READ_S, factors_of, parse_sample

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
