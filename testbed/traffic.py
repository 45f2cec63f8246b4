"""Background traffic between chosen pairs of workstations, at given rates.

Each flow is an iperf3 TCP stream paced at its rate (`-b`), from src to dst, so the
available bandwidth of the link src->dst falls by about that rate, as the MPI loading
program of Sanjay & Vadhiyar §5.1 made it fall. Flows run until stopped; their pids sit
in files inside the workstations, so another process can stop them.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from testbed.calibrate import frame_ratio
from testbed.spec import SpecError
from testbed.units import RateError, parse_rate

if TYPE_CHECKING:
    from testbed.cluster import Cluster

BASE_PORT = 5301  # iperf3's default 5201 stays free for calibration
RUN_DIR = "/run/nowlab-traffic"


def _port(c: "Cluster", src: str) -> int:
    return BASE_PORT + c.workstations.index(src)


def start(c: "Cluster", src: str, dst: str, rate: int | str) -> None:
    """Start (or replace) the flow src->dst at `rate`."""
    for field, ws in (("src", src), ("dst", dst)):
        if ws not in c.workstations:
            raise SpecError(f"{field}: unknown workstation {ws!r} (known: {', '.join(c.workstations)})")
    if src == dst:
        raise SpecError("dst: traffic from a workstation to itself")
    try:
        bits = parse_rate(rate)
    except RateError as exc:
        raise SpecError(f"rate: {exc}") from None
    stop(c, src, dst)
    port = _port(c, src)
    tag = f"{src}-{dst}"
    c.exec(dst, ["mkdir", "-p", RUN_DIR]).check("mkdir")
    c.exec(src, ["mkdir", "-p", RUN_DIR]).check("mkdir")
    c.start(dst, ["sh", "-c", f"echo $$ > {RUN_DIR}/server-{tag}.pid; exec iperf3 -s -p {port}"])
    c.wait_listening(dst, port)
    # iperf3 paces TCP payload; scale so that the frames on the wire, which is what HTB and
    # every rate in nowlab count, come to `bits`.
    payload = int(bits / frame_ratio(1500))
    c.start(src, ["sh", "-c", f"echo $$ > {RUN_DIR}/client-{tag}.pid; "
                              f"exec iperf3 -c {c.ips[dst]} -p {port} -b {payload} -t 86400 --connect-timeout 5000"])


def stop(c: "Cluster", src: str | None = None, dst: str | None = None) -> int:
    """Stop the flow src->dst, or every flow; returns how many processes were stopped."""
    pattern = f"*-{src}-{dst}.pid" if src and dst else "*.pid"
    stopped = 0
    for ws in c.workstations:
        out = c.exec(ws, ["sh", "-c", f'for f in {RUN_DIR}/{pattern}; do [ -e "$f" ] || continue; '
                                      f'kill "$(cat "$f")" 2>/dev/null && echo x; rm -f "$f"; done'])
        stopped += out.stdout.count("x")
    return stopped
