"""The owner of a workstation, as Menascé & Rao's validation daemon (§4).

N processes form a closed workload: each sleeps for an exponential think time (mean Z
seconds), then computes for an exponential demand (mean D seconds of CPU time at this
workstation's speed), and repeats. The demand is counted in CPU time, not wall time, so
a burst that is slowed by other owners still does exactly its demand. Runs at normal
priority; guests run at SCHED_IDLE, so owners have preemptive priority over them.

Runs inside a workstation (standard library only):
    python3 /opt/nowlab/agents/owner.py --n 2 --z 5 --d 1 --speed 0.25 --seed 7
--speed is the workstation's CPU cap in cores: D seconds at its speed are D*speed seconds
of CPU time on the host core it is pinned to.
"""
import argparse
import os
import random
import signal
import sys
import time


def owner(index: int, seed: int, z: float, d: float, speed: float) -> None:
    """One owner process. Each cycle uses its demand of CPU time in all: what sleeping and
    waking cost since the last burst (about 0.2 ms here) is taken off the next burst, or
    short bursts would overshoot their demand by 10% and more."""
    rng = random.Random(seed * 1009 + index)
    x = 1.0
    owed = 0.0
    last = time.process_time()
    while True:
        time.sleep(rng.expovariate(1.0 / z))
        demand = rng.expovariate(1.0 / d) * speed
        t0 = time.process_time()
        owed += t0 - last
        target = demand - owed
        owed = max(0.0, -target)  # a burst shorter than the overhead carries the rest over
        while time.process_time() - t0 < target:
            for _ in range(200):
                x = x * 1.0000001 + 1e-9
        last = time.process_time()


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, required=True)
    p.add_argument("--z", type=float, required=True, help="mean think time, s")
    p.add_argument("--d", type=float, required=True, help="mean CPU demand at the workstation's speed, s")
    p.add_argument("--speed", type=float, required=True, help="the workstation's cap, cores")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--pidfile", default="/run/nowlab-owner.pid")
    a = p.parse_args()
    children = []
    for i in range(a.n):
        pid = os.fork()
        if pid == 0:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            owner(i, a.seed, a.z, a.d, a.speed)
            os._exit(0)
        children.append(pid)

    def stop(_sig, _frame):
        for pid in children:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        try:
            os.unlink(a.pidfile)
        except FileNotFoundError:
            pass
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    with open(a.pidfile, "w") as fh:
        fh.write(str(os.getpid()))
    while True:
        signal.pause()


if __name__ == "__main__":
    raise SystemExit(main())
