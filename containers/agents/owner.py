"""The owner of a workstation, as Menascé & Rao's validation daemon (§4).

N processes form a closed workload: each sleeps for an exponential think time (mean Z
seconds), then computes for an exponential demand (mean D seconds of CPU time at this
workstation's speed), and repeats. The demand is counted in CPU time, not wall time, so
a burst that is slowed by other owners still does exactly its demand. Runs at normal
priority; guests run at SCHED_IDLE, so owners have preemptive priority over them.

Runs inside a workstation (standard library only):
    python3 /opt/nowlab/agents/owner.py --n 2 --z 5 --d 1 --speed 0.25 --seed 7
Each burst's demand is D seconds of the workstation's time: D*cap seconds of CPU time, at the
cap its cgroup holds when the burst starts (`cap_cores`). Why read it each time: a governed
workstation's quota moves with the host's speed (one held 0.083 core where the speed read at
`up` gave 0.050, 29 Nov 2026), and a demand counted at a cap fixed at `up` makes a burst last
D x that cap / the quota now, not D. --speed (the cap in cores) is the fallback where no
quota can be read.

--log FILE appends a line per burst, `index start_s response_s cpu_s`: when the owner's
command began (time.time()), how long it took in wall time and the CPU time it used. That
is the owners' response time Zhou & Brent's proper-share policy is judged by (§3). Each line
is one write to a file opened for appending, so the processes' lines do not interleave.
"""
import argparse
import os
import random
import signal
import sys
import time


CGROUP_V1 = ("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "/sys/fs/cgroup/cpu/cpu.cfs_period_us")
CGROUP_V2 = "/sys/fs/cgroup/cpu.max"


def cap_cores(fallback: float, v1: tuple = CGROUP_V1, v2: str = CGROUP_V2) -> float:
    """The CPU cap this workstation's cgroup holds now, in cores; `fallback` when there is none
    (no quota, or no file to read it from)."""
    try:
        with open(v1[0]) as q, open(v1[1]) as p:
            quota, period = int(q.read()), int(p.read())
    except (OSError, ValueError):
        try:
            with open(v2) as f:
                text = f.read().split()
            quota, period = (-1, 1) if text[0] == "max" else (int(text[0]), int(text[1]))
        except (OSError, ValueError, IndexError):
            return fallback
    return quota / period if quota > 0 and period > 0 else fallback


def owner(index: int, seed: int, z: float, d: float, speed: float, log_fd: int | None = None) -> None:
    """One owner process. Each cycle uses its demand of CPU time in all: what sleeping and
    waking cost since the last burst (about 0.2 ms here) is taken off the next burst, or
    short bursts would overshoot their demand by 10% and more."""
    rng = random.Random(seed * 1009 + index)
    x = 1.0
    owed = 0.0
    last = time.process_time()
    while True:
        time.sleep(rng.expovariate(1.0 / z))
        demand = rng.expovariate(1.0 / d) * cap_cores(speed)
        wall0 = time.time()
        t0 = time.process_time()
        owed += t0 - last
        target = demand - owed
        owed = max(0.0, -target)  # a burst shorter than the overhead carries the rest over
        while time.process_time() - t0 < target:
            for _ in range(200):
                x = x * 1.0000001 + 1e-9
        last = time.process_time()
        if log_fd is not None:
            os.write(log_fd, f"{index} {wall0:.6f} {time.time() - wall0:.6f} {last - t0:.6f}\n".encode())


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, required=True)
    p.add_argument("--z", type=float, required=True, help="mean think time, s")
    p.add_argument("--d", type=float, required=True, help="mean CPU demand at the workstation's speed, s")
    p.add_argument("--speed", type=float, required=True, help="the workstation's cap, cores, where its cgroup's cannot be read")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--pidfile", default="/run/nowlab-owner.pid")
    p.add_argument("--log", default=None, help="append each burst's start, response and CPU time here")
    a = p.parse_args()
    log_fd = os.open(a.log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644) if a.log else None
    children = []
    for i in range(a.n):
        pid = os.fork()
        if pid == 0:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            owner(i, a.seed, a.z, a.d, a.speed, log_fd)
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
