"""The cluster's overlay network and what Open MPI needs to use it, as plain data.

VXLAN wraps every frame in 50 bytes (outer Ethernet 14, IP 20, UDP 8, VXLAN 8), so the
overlay's MTU is the hosts' own less 50; left at 1500 on a 1500-byte underlay, large TCP
segments are fragmented or dropped and MPI stalls on its first big message (ompi#8213,
horovod#212). A workstation on the overlay also has docker_gwbridge (eth1, the same
private subnet on every host, routed nowhere between them): Open MPI, left to choose,
offers those addresses to its peers and hangs. So both its transports are told the
overlay by its subnet (`btl_tcp_if_include`, `oob_tcp_if_include` take CIDR), in the
image's MCA file and in the environment of every `docker exec`.

That is not enough by itself: Debian's Open MPI 4.1 picks the `cm` PML over libfabric's
`net` provider (priority 25 against ob1's 20), which ignores the BTL settings and chose
docker_gwbridge: `MPI_Init` completed and the first message never arrived. So the overlay
also pins `pml = ob1`, the PML whose TCP BTL the subnet above governs (measured: the hello
across two nodes hung with cm and ran at once with ob1; docs/multi-host.md). On one host the
image keeps cm, which has only eth0 to choose. The neighbour table a large cluster fills is
estimated here too (`neighbour_entries`), for `up` to check each host's limit. Pure: no Docker here.
"""
from __future__ import annotations

import ipaddress
import socket
from typing import Iterable

VXLAN_OVERHEAD = 50  # bytes each frame gains on the underlay
UNDERLAY_MTU = 1500  # the hosts' interface MTU when the engine does not say
MIN_MTU = 1280  # IPv6's minimum; below it the underlay is too small to carry an overlay usefully
MTU_OPTION = "com.docker.network.driver.mtu"
# Overlay subnets come from here (/24 each, skipping any subnet any host uses). Not Swarm's
# default address pool (10.0.0.0/8 in /24s, which the ingress network starts), so a later
# service cannot be given ours.
OVERLAY_POOL = ipaddress.ip_network("10.231.0.0/16")
MCA_FILE = "/etc/openmpi/openmpi-mca-params.conf"
MCA_KEYS = ("btl_tcp_if_include", "oob_tcp_if_include")  # set to the overlay's subnet
PML = ("pml", "ob1")  # the PML that honours btl_tcp_if_include


def overlay_mtu(underlay_mtu: int = UNDERLAY_MTU) -> int:
    """The overlay's MTU on an underlay of `underlay_mtu` bytes (VXLAN's 50 taken off)."""
    mtu = underlay_mtu - VXLAN_OVERHEAD
    if mtu < MIN_MTU:
        raise ValueError(f"mtu: an underlay of {underlay_mtu} bytes leaves {mtu} for the overlay (at least {MIN_MTU})")
    return mtu


def overlay_options(mtu: int) -> dict[str, str]:
    """Driver options of the overlay network (Docker wants strings)."""
    return {MTU_OPTION: str(mtu)}


def mpi_env(subnet: ipaddress.IPv4Network) -> dict[str, str]:
    """Open MPI's interface choice as environment: every process `docker exec` starts has it."""
    return {**{f"OMPI_MCA_{k}": str(subnet) for k in MCA_KEYS}, f"OMPI_MCA_{PML[0]}": PML[1]}


def mca_params(image_file: str, subnet: ipaddress.IPv4Network) -> str:
    """The image's MCA file with both transports pinned to the overlay's subnet, under ob1.

    The file is read by every Open MPI process, however started (mpiexec under docker exec,
    orted over ssh), which the environment is not: sshd starts a clean one."""
    ours = {*MCA_KEYS, PML[0]}
    lines = [line for line in image_file.splitlines() if line.split("=", 1)[0].strip() not in ours]
    lines += ["# The cluster's overlay, by subnet: never docker_gwbridge (testbed/backends/swarm/overlay.py).",
              *(f"{k} = {subnet}" for k in MCA_KEYS), f"{PML[0]} = {PML[1]}"]
    return "\n".join(lines) + "\n"


def covering(networks: Iterable[ipaddress.IPv4Network]) -> ipaddress.IPv4Network:
    """The smallest IPv4 network holding every one given (the control channel's allowed peers)."""
    nets = list(networks)
    if not nets:
        raise ValueError("networks: none given")
    for prefix in range(min(n.prefixlen for n in nets), -1, -1):
        net = ipaddress.IPv4Network(f"{nets[0].network_address}/{prefix}", strict=False)
        if all(n.subnet_of(net) for n in nets):
            return net
    raise AssertionError("0.0.0.0/0 holds every network")


def control_network(controller: str, host_addresses: Iterable[str],
                    bridges: Iterable[ipaddress.IPv4Network]) -> ipaddress.IPv4Network:
    """Where a workstation's connections to the controller come from. Not the overlay: the
    controller is not on it. A workstation reaches it through its docker_gwbridge, masqueraded
    to its host's address on another host, or straight from the bridge's subnet on the
    controller's own host; so the covering network of those."""
    nets = [ipaddress.IPv4Network(f"{a}/32") for a in [controller, *host_addresses]]
    return covering([*nets, *bridges])


def route_source(address: str, port: int) -> str:
    """The controller's own IPv4 address on the route to `address` (a UDP connect sends nothing)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect((address, port))
        return str(s.getsockname()[0])


# The kernel's neighbour (ARP) table is one per host, shared by every network namespace on it,
# and its hard limit is this sysctl (1,024 by default); past it new entries are refused and
# packets to unresolved peers are dropped ("neighbour table overflow" in the kernel log).
NEIGH_SYSCTL = "net.ipv4.neigh.default.gc_thresh3"
NEIGH_DEFAULT = 1024
# Below this many entries needed even the default limit leaves room: no host is asked.
NEIGH_CHECK_ABOVE = NEIGH_DEFAULT // 2


def neighbour_entries(on_host: int, total: int) -> int:
    """Neighbour entries a host may hold for a cluster of `total` workstations, `on_host` of them
    its own: each of its workstations may resolve every other one (one MPI job across them all),
    and the overlay's namespace holds one static entry per workstation on another host."""
    if not 0 <= on_host <= total:
        raise ValueError(f"on_host: {on_host} is not between 0 and the cluster's {total} workstations")
    return on_host * (total - 1) + (total - on_host)


def neighbour_warnings(need: dict[str, int], limit: dict[str, int | None]) -> list[str]:
    """One line per host whose neighbour table may overflow, naming the host, the entries the
    cluster may need, the limit in force and the fix; a limit that could not be read is said so
    when the need passes the default."""
    out = []
    for host, n in sorted(need.items()):
        have = limit.get(host)
        if have is None and n > NEIGH_DEFAULT:
            out.append(f"host {host}: may need {n} neighbour entries and its limit ({NEIGH_SYSCTL}) could not "
                       f"be read; the default is {NEIGH_DEFAULT}")
        elif have is not None and n > have:
            out.append(f"host {host}: may need {n} neighbour entries, above its limit of {have} "
                       f"({NEIGH_SYSCTL}); raise it there: sysctl -w {NEIGH_SYSCTL}={2 * n}")
    return out
