"""Link shaping rendered as tc commands (argument lists without the leading "tc").

Layout on a workstation's interface (egress only; a link A->B is shaped on A):

    root qdisc 1: htb, default 1:2
      class 1:1      rate = ceil = egress           the workstation's total egress
        class 1:2    ceil = egress                  traffic to anything but a peer
        class 1:N    ceil = min(link, egress)       one per peer, N = 0x100 + peer index
                     u32 filter: ip dst <peer>/32 -> 1:N

Every peer gets its class from the start, capped or not, so a link's rate can be changed
live with one `class change` and no filter surgery. Leaves are guaranteed egress/(n+1)
and borrow up to their ceil, which keeps the sum within the egress cap.
Nothing here touches a kernel: the commands are data, tested as such, and run by a backend.
"""
from __future__ import annotations

from dataclasses import dataclass

from testbed.spec import ClusterSpec
from testbed.units import tc_rate

DEV = "eth0"
ROOT = "1:1"
DEFAULT_LEAF = "1:2"
# Bytes a class may send per round when borrowing: ten full frames. Set explicitly because
# HTB's rate/r2q default is far above its 200000-byte limit at these rates (and warns).
QUANTUM = "15140"


@dataclass(frozen=True)
class LinkPlan:
    """The rates one workstation's qdisc enforces, all in bit/s."""

    egress: int
    peers: tuple[tuple[str, str, int], ...]  # (peer name, peer ip, ceil) in spec order


def classid(peer_index: int) -> str:
    return f"1:{0x100 + peer_index:x}"


def _burst(rate: int) -> str:
    # 5 ms of traffic, but at least 4 full frames: enough to carry GSO bursts at the
    # rate without letting short windows overshoot it.
    return f"{max(4 * 1514, rate // 8 // 200)}b"


def plan(spec: ClusterSpec, name: str, ips: dict[str, str]) -> LinkPlan:
    egress = spec.egress(name)
    links = spec.link_rates(name)
    peers = tuple((p, ips[p], min(links.get(p, egress), egress)) for p in spec.names if p != name)
    return LinkPlan(egress=egress, peers=peers)


def _leaf_rate(p: LinkPlan, ceil: int) -> int:
    return max(8, min(ceil, p.egress // (len(p.peers) + 1)))


def class_commands(p: LinkPlan, spec: ClusterSpec, verb: str, dev: str = DEV) -> list[list[str]]:
    cmds = [["class", verb, "dev", dev, "parent", "1:", "classid", ROOT, "htb",
             "rate", tc_rate(p.egress), "ceil", tc_rate(p.egress),
             "burst", _burst(p.egress), "cburst", _burst(p.egress), "quantum", QUANTUM]]
    cmds.append(["class", verb, "dev", dev, "parent", ROOT, "classid", DEFAULT_LEAF, "htb",
                 "rate", tc_rate(_leaf_rate(p, p.egress)), "ceil", tc_rate(p.egress),
                 "burst", _burst(p.egress), "cburst", _burst(p.egress), "quantum", QUANTUM])
    for peer, _ip, ceil in p.peers:
        cmds.append(["class", verb, "dev", dev, "parent", ROOT, "classid", classid(spec.names.index(peer)), "htb",
                     "rate", tc_rate(_leaf_rate(p, ceil)), "ceil", tc_rate(ceil),
                     "burst", _burst(ceil), "cburst", _burst(ceil), "quantum", QUANTUM])
    return cmds


def setup_commands(spec: ClusterSpec, name: str, ips: dict[str, str], dev: str = DEV) -> list[list[str]]:
    """Everything a fresh interface needs; `replace` on the root makes it idempotent."""
    p = plan(spec, name, ips)
    cmds = [["qdisc", "replace", "dev", dev, "root", "handle", "1:", "htb", "default", DEFAULT_LEAF.split(":")[1]]]
    cmds += class_commands(p, spec, "add", dev)
    for peer, ip, _ceil in p.peers:
        cmds.append(["filter", "add", "dev", dev, "parent", "1:", "protocol", "ip", "prio", "1",
                     "u32", "match", "ip", "dst", f"{ip}/32", "flowid", classid(spec.names.index(peer))])
    return cmds


def change_commands(spec: ClusterSpec, name: str, ips: dict[str, str], dev: str = DEV) -> list[list[str]]:
    """Bring a running interface to what `spec` now says for `name`, without a restart."""
    return class_commands(plan(spec, name, ips), spec, "change", dev)


def as_script(cmds: list[list[str]]) -> str:
    """The NOWLAB_TC form read by the entrypoint: one command per line."""
    for cmd in cmds:
        if any(not arg or any(ch.isspace() for ch in arg) for arg in cmd):
            raise ValueError(f"tc argument with whitespace cannot be passed line-wise: {cmd}")
    return "\n".join(" ".join(cmd) for cmd in cmds)
