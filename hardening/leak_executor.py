"""Does the live executor's process grow with the jobs it has run? (issue 19's soak, narrowed)

    python -m hardening.leak_executor --jobs 300 --every 0.4

Runs one stream of short malleable jobs under a policy on the host's own Open MPI
(workloads.host.launch.LocalLauncher: real mpiexec, real control channel, no containers), and
samples this process's resident memory and Python's live objects by type from a side thread.
Prints RSS at each tenth of the jobs (and at the end before and after malloc_trim) and the object types whose counts grew most from the
first tenth to the end: a type that grows with the jobs names what is kept.
"""
from __future__ import annotations

import argparse
import collections
import gc
import threading
import time
import tracemalloc

from experiments.census import malloc_trim, rss_mib
from scheduler.live import Arrival, LiveExecutor
from experiments.traces.live_inputs import job_class
from workloads.host.launch import LocalLauncher

HOSTS = ["ws1", "ws2", "ws3", "ws4"]


def census() -> collections.Counter[str]:
    gc.collect()
    return collections.Counter(type(o).__qualname__ for o in gc.get_objects())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=300)
    ap.add_argument("--every", type=float, default=0.4, help="seconds between arrivals")
    ap.add_argument("--policy", default="EQUI")
    ap.add_argument("--sample", type=float, default=5.0, help="seconds between RSS samples")
    ap.add_argument("--trace", action="store_true", help="also print tracemalloc's top growth by line")
    a = ap.parse_args()
    if a.trace:
        tracemalloc.start(8)
    cls = job_class("short", {
        "argv": ["python3", "-m", "workloads.synthetic", "--phases", "6", "--mults", "2000000",
                 "--redist-bytes", str(64 * 1024)],
        "W": 4.0, "alpha": 0.3, "beta": 0.1, "pmax": 4})
    arrivals = [Arrival(i, cls, i * a.every) for i in range(a.jobs)]
    ex = LiveExecutor(arrivals, a.policy, LocalLauncher(), HOSTS, "127.0.0.1", run_timeout_s=a.jobs * a.every + 600,
                      connect_timeout_s=60, job_timeout_s=120)
    samples: list[tuple[float, float]] = []
    stop = threading.Event()
    t0 = time.monotonic()

    def sampler() -> None:
        while not stop.wait(a.sample):
            samples.append((time.monotonic() - t0, rss_mib()))

    first = census()
    snap0 = tracemalloc.take_snapshot() if a.trace else None
    rss0 = rss_mib()
    threading.Thread(target=sampler, daemon=True).start()
    result = ex.run()
    stop.set()
    last = census()
    if snap0 is not None:
        snap1 = tracemalloc.take_snapshot()
        print("traced growth by line (top 12):")
        for st in snap1.compare_to(snap0, "lineno")[:12]:
            print(f"  {st.size_diff / 1024:8.1f} KiB  {st.count_diff:+6d}  {st.traceback[0]}")
        total = sum(st.size_diff for st in snap1.compare_to(snap0, "filename"))
        print(f"traced total growth: {total / 2**20:.2f} MiB")
    done = sum(s.status == "done" for s in result.states)
    print(f"{done}/{a.jobs} done, {result.summary()['preemptions']} preemptions; RSS {rss0:.1f} -> {rss_mib():.1f} MiB")
    for t, r in samples[:: max(1, len(samples) // 10)]:
        print(f"  t={t:6.0f} s  RSS {r:7.1f} MiB")
    grown = sorted(((last[k] - first[k], k) for k in last), reverse=True)[:15]
    print("object types grown most (count at start -> end):")
    for d, k in grown:
        print(f"  {k:40s} {first[k]:7d} -> {last[k]:7d}  (+{d})")
    print(f"results still held: {len(result.states)} job states, {len(result.timeline)} timeline events")
    before = rss_mib()
    malloc_trim()
    print(f"RSS {before:.1f} MiB, {rss_mib():.1f} MiB after malloc_trim (what glibc's heaps kept of freed memory)")


if __name__ == "__main__":
    main()
