"""Background traffic between chosen pairs of workstations, at given rates.

Each flow is an iperf3 TCP stream paced at its rate (`-b`), from src to dst, so the
available bandwidth of the link src->dst falls by about that rate, as the MPI loading
program of Sanjay & Vadhiyar §5.1 made it fall. Flows run until stopped. A flow is found
again by its exact command line (`pkill -x -f`), so another process can stop it and no
shell or pid file is needed: the server of src->dst listens on src's port, and the client
is the only one that dials dst's address on that port.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from testbed.backends import require
from testbed.burner import ere_literal
from testbed.calibrate import frame_ratio
from testbed.parallel import parallel
from testbed.spec import SpecError
from testbed.units import RateError, parse_rate

if TYPE_CHECKING:
    from testbed.cluster import Cluster

BASE_PORT = 5301  # iperf3's default 5201 stays free for calibration
DURATION_S = 86400  # a flow runs until stopped; this only bounds a forgotten one
CONNECT_TIMEOUT_MS = 5000
STOP_WAIT_S = 5.0  # how long a restart waits for the old server to exit
IPV4_ERE = "[0-9]+[.][0-9]+[.][0-9]+[.][0-9]+"


def _port(c: "Cluster", src: str) -> int:
    return BASE_PORT + c.workstations.index(src)


def check_workstation(field: str, ws: str, known: Sequence[str]) -> str:
    """`ws` if it names a workstation of the cluster; else a one-line error naming the field."""
    if ws not in known:
        raise SpecError(f"{field}: unknown workstation {ws!r} (known: {', '.join(known)})")
    return ws


def server_argv(port: int) -> list[str]:
    return ["iperf3", "-s", "-p", str(port)]


def client_argv(ip: str, port: int, payload_bits: int) -> list[str]:
    """The paced client; `payload_bits` is TCP payload in bit/s (iperf3's `-b`)."""
    return ["iperf3", "-c", ip, "-p", str(port), "-b", str(payload_bits), "-t", str(DURATION_S),
            "--connect-timeout", str(CONNECT_TIMEOUT_MS)]


def _client_ere(ip_ere: str, port_ere: str) -> str:
    return (f"iperf3 -c {ip_ere} -p {port_ere} -b [0-9]+ -t {DURATION_S} "
            f"--connect-timeout {CONNECT_TIMEOUT_MS}")


def _ports_ere(ports: Sequence[int]) -> str:
    return "(" + "|".join(str(p) for p in ports) + ")"


def flow_patterns(ip: str, port: int) -> tuple[str, str]:
    """(server on dst, client on src) of one flow, as POSIX EREs for `pkill -x -f`."""
    return f"iperf3 -s -p {port}", _client_ere(ere_literal(ip), str(port))


def any_flow_patterns(ports: Sequence[int]) -> tuple[str, str]:
    """(any server, any client) of the flows on the given ports: the cluster's traffic ports
    only, so a calibration's iperf3 on 5201 survives."""
    p = _ports_ere(ports)
    return f"iperf3 -s -p {p}", _client_ere(IPV4_ERE, p)


def pkill_argv(pattern: str) -> list[str]:
    """TERM every process whose whole command line matches `pattern`; prints how many."""
    return ["pkill", "--count", "-TERM", "-x", "-f", pattern]


def pidwait_argv(pattern: str) -> list[str]:
    """Wait until no process's whole command line matches `pattern`."""
    return ["pidwait", "-x", "-f", pattern]


def start(c: "Cluster", src: str, dst: str, rate: int | str) -> None:
    """Start (or replace) the flow src->dst at `rate`."""
    require(c.backend, "shapes_links", f"traffic: the flow {src}->{dst}")
    check_workstation("src", src, c.workstations)
    check_workstation("dst", dst, c.workstations)
    if src == dst:
        raise SpecError("dst: traffic from a workstation to itself")
    try:
        bits = parse_rate(rate)
    except RateError as exc:
        raise SpecError(f"rate: {exc}") from None
    port = _port(c, src)
    if stop(c, src, dst):
        # the old server must free the port before the new one binds it, or the new one
        # fails and wait_listening sees the old one, which is about to go
        server, _client = flow_patterns(c.ips[dst], port)
        c.exec(dst, pidwait_argv(server), timeout=STOP_WAIT_S)
    c.start(dst, server_argv(port))
    c.wait_listening(dst, port)
    # iperf3 paces TCP payload; scale so that the frames on the wire, which is what HTB and
    # every rate in nowlab count, come to `bits`.
    payload = int(bits / frame_ratio(1500))
    c.start(src, client_argv(c.ips[dst], port, payload))


def parse_count(stdout: str) -> int:
    """pkill --count's output (one number; empty or odd output counts as none)."""
    text = stdout.strip()
    return int(text) if text.isdigit() else 0


def _pkill(c: "Cluster", ws: str, pattern: str) -> int:
    return parse_count(c.exec(ws, pkill_argv(pattern)).stdout)  # exit 1 when nothing matched


def stop(c: "Cluster", src: str | None = None, dst: str | None = None) -> int:
    """Stop the flow src->dst, or every flow; returns how many processes were stopped."""
    require(c.backend, "shapes_links", "traffic: stopping flows")
    if (src is None) != (dst is None):
        raise SpecError(f"{'dst' if dst is None else 'src'}: give both src and dst, or neither (to stop all)")
    if src is not None and dst is not None:
        check_workstation("src", src, c.workstations)
        check_workstation("dst", dst, c.workstations)
        server, client = flow_patterns(c.ips[dst], _port(c, src))
        # the client first: a client whose server went first exits on its own, uncounted
        return _pkill(c, src, client) + _pkill(c, dst, server)
    server, client = any_flow_patterns([_port(c, ws) for ws in c.workstations])
    # every workstation at once (an exec waits most of a second on a small cap); the clients
    # everywhere before the servers, as above
    return sum(sum(parallel(lambda ws: _pkill(c, ws, pattern), c.workstations)) for pattern in (client, server))
