"""Calibration: what each workstation and link really delivers under the caps in force.

CPU: every workstation spins at once and the host reads each cgroup's cpuacct counter,
so the share is the kernel's own accounting of CPU time given, not an estimate made in
the guest. Each burner stamps when it ran (testbed/burner.py); a window that some burner
did not cover raises burner.WindowNotCovered instead of giving a wrong share.
Links: iperf3 TCP one link at a time; the rate is counted at the link layer (TCP goodput
scaled to whole frames, which is what HTB meters), with goodput kept alongside.
"""
from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass

from testbed import burner, state
from testbed.backends import require
from testbed.burner import Span
from testbed.cluster import Cluster, Progress, quiet
from testbed.remote_exec import RemoteProcess
from testbed.parallel import parallel


@dataclass(frozen=True)
class CpuSample:
    workstation: str
    requested: float  # cores
    measured: float  # cores
    window: Span  # when the counters were read (s, CLOCK_REALTIME)
    burner: Span  # when the workstation's burner ran, stamped inside it
    # requested is then the cap reserved as the governor's ceiling, which holds the quota below it
    governed: bool = False

    @property
    def error(self) -> float:
        return (self.measured - self.requested) / self.requested


@dataclass(frozen=True)
class LinkSample:
    src: str
    dst: str
    requested: int  # bit/s at the link layer
    measured: int  # bit/s at the link layer
    goodput: int  # bit/s of TCP payload

    @property
    def error(self) -> float:
        return (self.measured - self.requested) / self.requested


STOP_WAIT_S = 30.0  # for a stopped burner's exec to end and hand over its end stamp
START_ATTEMPTS = 2  # the burners are started afresh once when one did not stamp its start in time


class BurnersNotStarted(TimeoutError):
    """Some burner did not stamp its start within the timeout."""


def _wait_started(procs: dict[str, RemoteProcess], timeout: float, progress: Progress) -> None:
    """Return once every burner has stamped its start; a burner that exits first is an error."""
    deadline = time.monotonic() + timeout
    waiting = set(procs)
    while waiting:
        for ws in sorted(waiting):
            if burner.parse(procs[ws].output()).started is not None:
                waiting.discard(ws)
            elif procs[ws].poll() is not None:
                res = procs[ws].wait(0)
                raise RuntimeError(f"{ws}: the CPU burner exited with code {res.exit_code} before it started: "
                                   f"{(res.stderr or res.stdout).strip()[-200:]}")
        progress("cpu: starting burners", len(procs) - len(waiting), len(procs))
        if waiting and time.monotonic() > deadline:
            raise BurnersNotStarted(f"cpu calibration: burners on {', '.join(sorted(waiting))} not running "
                                    f"after {timeout:g} s")
        if waiting:
            time.sleep(0.05)


def measure_cpu(c: Cluster, seconds: float = 5.0, warmup: float = 1.0,
                workstations: list[str] | None = None, *, start_timeout: float = 60.0,
                progress: Progress = quiet) -> list[CpuSample]:
    """Cores each workstation gets while all of them spin, from the cgroups' cpuacct counters.

    The burners start together and the window opens only once every one has stamped its
    start (plus `warmup`); they are stopped after it closes. Raises burner.WindowNotCovered
    if any burner's own stamps show it was not running for the whole window.

    A burner that has not stamped its start in `start_timeout` stops them all, and they are
    started again, once: on 30 Nov 2026 one of eight did not start in 60 s on a loaded host
    and ended a demo that nothing else was wrong with. Nothing was measured by then.
    """
    for _ in range(START_ATTEMPTS - 1):
        try:
            return _measure_cpu_once(c, seconds, warmup, workstations, start_timeout, progress)
        except BurnersNotStarted:
            progress("cpu: a burner did not start; starting them again", 0, 1)
    return _measure_cpu_once(c, seconds, warmup, workstations, start_timeout, progress)


def _measure_cpu_once(c: Cluster, seconds: float, warmup: float, workstations: list[str] | None,
                      start_timeout: float, progress: Progress) -> list[CpuSample]:
    require(c.backend, "cpu_caps", "calibration: the CPU each workstation gets")  # before any burner starts
    names = workstations or c.workstations
    limit = start_timeout + warmup + seconds + STOP_WAIT_S
    procs = dict(zip(names, parallel(lambda ws: c.start(ws, burner.argv(limit)), names)))
    try:
        _wait_started(procs, start_timeout, progress)
        progress("cpu: all workstations busy", 0, 1)
        time.sleep(warmup)
        opened = time.time()
        before = {ws: c.cpu_usage_ns(ws) for ws in names}
        t0 = time.monotonic()
        time.sleep(seconds)
        after = {ws: c.cpu_usage_ns(ws) for ws in names}
        wall = time.monotonic() - t0
        window = burner.Span(opened, time.time())
        progress("cpu: all workstations busy", 1, 1)
    finally:
        # Stopped inside the workstation: ending the exec does not end the loop there, and
        # whatever runs next (a profile, a job) must not share the cap with it.
        parallel(lambda ws: c.exec(ws, burner.pkill_argv()), names)
    runs = {ws: burner.parse(procs[ws].wait(timeout=STOP_WAIT_S).stdout) for ws in names}
    burner.check_coverage(window, runs)
    return [CpuSample(ws, c.spec.cpu(ws), (after[ws] - before[ws]) / 1e9 / wall, window,
                      burner.Span(runs[ws].started, runs[ws].ended), c.spec.governed(ws)) for ws in names]


# HTB meters whole frames: a full TCP segment of MTU-52 payload bytes (20 IP + 32 TCP with
# timestamps) travels in an MTU+14 byte Ethernet frame. The interface byte counters can't be
# used instead: with GSO they count one header per 64 KB super-packet.
TCP_IP_HEADERS = 52
ETHERNET_HEADER = 14


def frame_ratio(mtu: int) -> float:
    return (mtu + ETHERNET_HEADER) / (mtu - TCP_IP_HEADERS)


def measure_link(c: Cluster, src: str, dst: str, seconds: float = 3.0, warmup: float = 1.0) -> LinkSample:
    """Rate src->dst: receiver-side TCP goodput over the steady part of a stream, as frames."""
    require(c.backend, "shapes_links", f"calibration: the link {src}->{dst}")
    server = c.start(dst, ["iperf3", "-s", "-1", "-J"])
    try:
        c.wait_listening(dst, 5201)
        c.exec(src, ["iperf3", "-c", c.ips[dst], "-t", f"{warmup + seconds:g}"],
               timeout=warmup + seconds + 30).check(f"iperf3 {src}->{dst}")
        report = json.loads(server.wait(timeout=30).check(f"iperf3 server on {dst}").stdout)
    finally:
        if server.poll() is None:
            server.terminate()
    steady = [iv["sum"] for iv in report["intervals"] if iv["sum"]["start"] >= warmup - 1e-6]
    goodput = sum(x["bytes"] for x in steady) * 8 / sum(x["seconds"] for x in steady)
    mtu = int(c.exec(src, ["cat", "/sys/class/net/eth0/mtu"]).check("read mtu").stdout)
    return LinkSample(src, dst, c.spec.link_rate(src, dst), int(goodput * frame_ratio(mtu)), int(goodput))


def default_links(c: Cluster) -> list[tuple[str, str]]:
    """A ring (every egress once) plus every declared per-link cap, each measured once."""
    names = c.workstations
    pairs = [(names[i], names[(i + 1) % len(names)]) for i in range(len(names))] if len(names) > 1 else []
    for ws in names:
        for peer in c.spec.link_rates(ws):
            if (ws, peer) not in pairs:
                pairs.append((ws, peer))
    return pairs


def calibrate(c: Cluster, *, cpu_seconds: float = 5.0, link_seconds: float = 3.0,
              links: list[tuple[str, str]] | None = None, progress: Progress = quiet) -> dict:
    """CPU shares and link rates, saved as the cluster's calibration.json.

    Raises burner.WindowNotCovered (a RuntimeError) when a CPU burner did not run for the
    whole window; nothing is saved then, so a wrong share never reaches the predictions.
    """
    cpu = measure_cpu(c, cpu_seconds, progress=progress)
    pairs = default_links(c) if links is None else links
    samples = []
    for i, (src, dst) in enumerate(pairs):
        progress(f"link {src}->{dst}", i, len(pairs))
        samples.append(measure_link(c, src, dst, link_seconds))
    progress("links", len(pairs), len(pairs))
    result = {
        "cluster": c.name, "time": time.time(), "spec": c.spec.model_dump(by_alias=True),
        "cpu": [asdict(s) | {"error": s.error} for s in cpu],
        "links": [asdict(s) | {"error": s.error} for s in samples],
    }
    path = state.cluster_dir(c.name) / "calibration.json"
    path.write_text(json.dumps(result, indent=2))
    result["path"] = str(path)
    return result
