"""The monitor's readings on a Swarm's hosts: one sampler container per host, not an exec per reading.

Without it a monitor sample costs three `docker exec` per workstation through its host's
engine (the cap, the owners' CPU time, the tc counters), about 0.07 core of the measured
host each at one sample a second (docs/scale.md, "The first bottleneck"). The sampler
(containers/agents/host_sampler.py) runs once per host that holds workstations of the
cluster, outside their caps, and writes one line a second with every workstation's
readings; the controller follows each host's stdout through the host's engine, one
stream per host, and the monitor reads the newest line (`SampleStream.latest`).

The container is started by the first monitor that asks, named by what it reads (the mark,
the tc command, the interval), so every later monitor of the cluster shares it. It carries
the cluster's label, so `remove` and `gc` take it with the workstations, and it stops by
itself once its workstations are gone.

What it costs: one process per host (pid namespace "host", SYS_PTRACE and SYS_ADMIN, to read
through /proc/<pid>/root and enter network namespaces), a few file reads and one `nsenter tc` a
workstation a second, charged to no workstation's cap; its log is capped at 1 MB.
"""
from __future__ import annotations

import hashlib
import json
import shlex
from collections.abc import Callable, Iterator, Sequence

import docker
import docker.errors

from testbed.backends.base import Sampled
from testbed.backends.docker import engine
from testbed.backends.swarm import readings
from testbed.backends.sample_lines import LineSampleStream
from workloads.wire import sampler_lines

ROLE_LABEL = engine.ROLE_LABEL
ROLE = "sampler"
PROGRAM = "/opt/nowlab/agents/host_sampler.py"
# Enough to read another container's files through /proc/<pid>/root (SYS_PTRACE) and enter its
# network namespace (SYS_ADMIN, for setns): not privileged, which a Docker-in-Docker node
# without every capability cannot grant ("unable to apply caps").
CAPS = ("SYS_ADMIN", "SYS_PTRACE")


def container_name(cluster: str, host: str, mark: str, tc_argv: Sequence[str], interval_s: float) -> str:
    """Named by what it reads: a monitor asking the same finds it, one asking other things gets its own."""
    what = hashlib.sha256(json.dumps([mark, list(tc_argv), interval_s]).encode()).hexdigest()[:8]
    return f"nowlab-{cluster}_sampler-{what}_{host}"


def sampler_config(cluster: str, host: str, image: str, workstations: dict[str, str], *, mark: str,
                   tc_argv: Sequence[str], interval_s: float) -> dict:
    """The sampler container's parameters, as plain data: `workstations` maps each of the
    host's workstation names to its container id."""
    if not workstations:
        raise ValueError(f"workstations: none to sample on host {host!r}")
    if interval_s <= 0:
        raise ValueError(f"interval_s: must be above 0, not {interval_s}")
    argv = ["--interval", f"{interval_s:g}", "--mark", mark, "--tc", shlex.join(tc_argv),
            *[f"{ws}={cid}" for ws, cid in sorted(workstations.items())]]
    return {"image": image, "name": container_name(cluster, host, mark, tc_argv, interval_s),
            "labels": {engine.LABEL: cluster, ROLE_LABEL: ROLE}, "entrypoint": ["python3", PROGRAM],
            "command": argv, "pid_mode": "host", "cap_add": list(CAPS), "security_opt": ["apparmor=unconfined"],
            "log_config": {"type": "json-file", "config": {"max-size": "1m", "max-file": "1"}}}


def ensure(c: docker.DockerClient, cfg: dict, owner: dict[str, str]) -> str:
    """The running sampler of this name, started if there is none (another monitor's, if it got there first)."""
    api = c.api
    try:
        found = api.inspect_container(cfg["name"])
    except docker.errors.NotFound:
        found = None
    if found is not None and found["State"]["Running"]:
        return found["Id"]
    if found is not None:  # ended (its workstations were gone for a while): a new one
        api.remove_container(found["Id"], force=True)
    hc = api.create_host_config(pid_mode=cfg["pid_mode"], cap_add=cfg["cap_add"], security_opt=cfg["security_opt"],
                                init=True, log_config=cfg["log_config"])
    try:
        cid = api.create_container(cfg["image"], name=cfg["name"], labels={**cfg["labels"], **owner},
                                   entrypoint=cfg["entrypoint"], command=cfg["command"], host_config=hc,
                                   detach=True)["Id"]
    except docker.errors.APIError as exc:
        if exc.status_code != 409:  # 409: another monitor made it meanwhile
            raise
        return api.inspect_container(cfg["name"])["Id"]
    engine.start(c, cid)
    return cid


def _reading(r: dict) -> Sampled:
    """One workstation's raw files, as the monitor's reading (the cgroup version worked out here)."""
    return Sampled(t=float(r["t"]), limits=readings.limits(r), procs_ns=readings.procs_ns(r),
                   tc=str(r.get("tc") or ""))


def parse_line(line: str) -> dict[str, Sampled]:
    """One sampler line -> each workstation's readings ({} for a line that is not one)."""
    return sampler_lines.parse(line, _reading)


class SampleStream(LineSampleStream):
    """Every host's sampler container, its stdout followed through the host's engine
    (sample_lines.py); a host whose stream ended is asked again, which starts its sampler
    again if it had stopped."""

    def __init__(self, samplers: dict[str, Callable[[], tuple[docker.DockerClient, str]]], stale_s: float) -> None:
        self.samplers = samplers  # host -> () -> (its engine client, the sampler's id), starting it if needed
        super().__init__(samplers, self._attach, parse_line, stale_s,
                         (docker.errors.DockerException, OSError, RuntimeError))

    def _attach(self, host: str) -> Iterator[bytes]:
        client, cid = self.samplers[host]()
        yield from client.api.attach(cid, stream=True, stdout=True, stderr=False, logs=False)
