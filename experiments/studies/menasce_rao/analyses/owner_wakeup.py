"""How late a guest waiting for a message wakes beside owners (issue 15, after the owner_class analysis).

    .venv/bin/python -m experiments.studies.menasce_rao.analyses.owner_wakeup --messages 150 --rounds 4

Eq. 7 inflates a task's compute by 1/(1 - U_ow) and nothing else. A task of the wave front also
waits for its predecessors' messages, blocked; when a message arrives while an owner holds the
workstation, the guest (SCHED_IDLE) runs only once the owners are done, and then perhaps only in
the cgroup's next CFS period. This measures that delay directly: a sender on one workstation sends
its wall clock every --every s; a receiver on another, started as a guest, records arrival minus
stamp (the containers share the host's clock). Rounds alternate no owners and Table 3's owners
(N = 2, D = 0.2 s, Z = 1 s) on the receiver's workstation. Beside the measurement: what M/M/1//N
predicts a random arrival waits for the owners, p1·D + p2·2D (D in the workstation's time).
"""
from __future__ import annotations

import argparse
import statistics
import sys

from experiments.analysis_io import console, table, use_bench_home
from testbed import from_dict
from testbed.cluster import GUEST_PREFIX
from testbed.lifecycle import cluster
from testbed.load import owners
from testbed.load.model import owners_at_cpu
from testbed.spec import OwnerLoad

N, D, Z = 2, 0.2, 1.0
PORT = 5601
RECEIVER = """import socket, struct, sys, time
n = int(sys.argv[1])
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", %d)); s.listen(1)
c, _ = s.accept()
buf = b""
for _ in range(n):
    while len(buf) < 8:
        buf += c.recv(64)
    (t,), buf = struct.unpack("d", buf[:8]), buf[8:]
    print(f"{time.time() - t:.6f}", flush=True)
""" % PORT
SENDER = """import random, socket, struct, sys, time
host, n, every = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
s = socket.create_connection((host, %d), timeout=30)
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
rng = random.Random(7)
for _ in range(n):
    time.sleep(every * rng.uniform(0.5, 1.5))
    s.sendall(struct.pack("d", time.time()))
""" % PORT


def predicted_wait(n: int, d: float, z: float) -> float:
    """Mean time a random arrival waits for the owners on the CPU (M/M/1//N, FCFS among owners,
    priority over the guest): sum over k busy owners of p_k · k · D (memoryless service)."""
    return sum(p * k * d for k, p in enumerate(owners_at_cpu(n, z, d)))


def main() -> int:
    use_bench_home()
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--speed", type=float, default=0.265, help="reference cores, governed")
    parser.add_argument("--messages", type=int, default=150)
    parser.add_argument("--every", type=float, default=0.4, help="mean seconds between messages")
    parser.add_argument("--rounds", type=int, default=4, help="alternating: no owners, owners, ...")
    args = parser.parse_args()
    if args.messages < 10 or args.every <= 0 or args.rounds < 2 or args.speed <= 0:
        parser.error("--messages: at least 10; --every, --speed: above 0; --rounds: at least 2")
    spec = from_dict({"name": "owner-wake", "defaults": {"governor": True, "egress": "100mbit"},
                      "workstation": [{"name": "recv", "speed": args.speed}, {"name": "send", "speed": args.speed}]})
    got: dict[bool, list[float]] = {False: [], True: []}
    with cluster(spec) as c:
        ip = c.ips["recv"]
        for r in range(args.rounds):
            loaded = r % 2 == 1
            if loaded:
                owners.start(c, {"recv": OwnerLoad(n=N, z=Z, d=D)}, r)
            try:
                rx = c.start("recv", [*GUEST_PREFIX, "python3", "-c", RECEIVER, str(args.messages)])
                c.wait_listening("recv", PORT, timeout=30)
                tx = c.start("send", [*GUEST_PREFIX, "python3", "-c", SENDER, ip, str(args.messages), str(args.every)])
                tx.wait(timeout=args.messages * args.every * 3 + 60).check("sender")
                lat = [float(x) for x in rx.wait(timeout=60).check("receiver").stdout.split()]
            finally:
                if loaded:
                    owners.stop(c, ["recv"])
            got[loaded].extend(lat)
            console.log(f"round {r} ({'owners' if loaded else 'no owners'}): median {statistics.median(lat) * 1e3:.1f} ms, "
                        f"mean {statistics.fmean(lat) * 1e3:.1f} ms")
    rows = []
    for loaded in (False, True):
        lat = sorted(got[loaded])
        p90 = lat[int(0.9 * (len(lat) - 1))]
        rows.append(["owners N=2 D=0.2 Z=1" if loaded else "no owners", str(len(lat)),
                     f"{statistics.fmean(lat) * 1e3:.1f}", f"{statistics.median(lat) * 1e3:.1f}", f"{p90 * 1e3:.1f}",
                     f"{max(lat) * 1e3:.1f}"])
    extra = statistics.fmean(got[True]) - statistics.fmean(got[False])
    table(f"a blocked guest's wake-up after a message, at {args.speed} reference cores (governed)",
          ["receiver's workstation", "messages", "mean (ms)", "median (ms)", "90th pct (ms)", "max (ms)"], rows)
    console.print(f"owners add {extra * 1e3:.1f} ms a message on average; M/M/1//N's wait for the owners: "
                  f"{predicted_wait(N, D, Z) * 1e3:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
