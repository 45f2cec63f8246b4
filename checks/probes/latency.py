"""MPI round-trip and barrier latency between ranks 0 and 1, busy or polite, over a fixed time.

A time window (not a count) makes the mean span many CFS periods, so it measures the
steady throttling pattern rather than whether a short run happened to fit in one quota.
Usage: python3 latency.py busy|polite SECONDS
"""
import sys
import time

import numpy as np
from mpi4py import MPI

mode, window = sys.argv[1], float(sys.argv[2])
c = MPI.COMM_WORLD
b = np.zeros(4)


def wait(req):
    if mode == "busy":
        req.Wait()  # Open MPI spins here
    else:
        while not req.Test():
            time.sleep(0.0002)


def timed(step):
    n, t0 = 0, time.perf_counter()
    stop = np.zeros(1)
    while True:
        step()
        n += 1
        if c.rank == 0:
            stop[0] = time.perf_counter() - t0 > window
        wait(c.Ibcast(stop, root=0))
        if stop[0]:
            return (time.perf_counter() - t0) / n * 1000


def pingpong():
    if c.rank == 0:
        c.Send(b, 1)
        wait(c.Irecv(b, 1))
    else:
        wait(c.Irecv(b, 0))
        c.Send(b, 0)


rtt = timed(pingpong)
barrier = timed(lambda: wait(c.Ibarrier()))
if c.rank == 0:
    print(f"rtt_ms={rtt:.3f} barrier_ms={barrier:.3f}")
