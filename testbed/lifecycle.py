"""Bringing a cluster up with the load its spec asks for, and always taking it down.

The start-up order lives here, in `start` and `up`: the workstations (`Cluster.provision`:
machines, links, SSH), the warm launch paths, the resident MPI world, the speed keeper, then
the owners. `Cluster` only builds and drives the machines; it starts none of these itself,
and the load (testbed.load) sits above it (docs/architecture.md).
"""
from __future__ import annotations

import contextlib
from typing import Iterator

from testbed import pool, warm
from testbed.backends import Backend
from testbed.cluster import Cluster, Progress, quiet
from testbed.load import owners
from testbed.spec import ClusterSpec


def start(spec: ClusterSpec, *, progress: Progress = quiet, ready_timeout: float = 60.0,
          backend: Backend | None = None) -> Cluster:
    """A running cluster of `spec`, ready for jobs but without its owners; nothing is left
    behind on failure. `backend`: where (testbed.backends.get(kind, spec)); None: Docker here.
    What the backend cannot do is skipped: warm paths without SSH, the keeper without caps, and a
    backend that starts MPI on this host (local) starts its own pool."""
    c = Cluster.provision(spec, progress=progress, ready_timeout=ready_timeout, backend=backend)
    caps = c.backend.capabilities
    try:
        if caps.ssh_login:
            warm.warm(c)  # ssh masters and zygotes, in the background: launches get faster once they are up
        if not caps.host_mpi:  # (local: its own pool, started by the first `job_launcher`)
            pool.start(c)  # the resident MPI world, in the background: `Cluster.job_launcher` waits for it
        c.start_keeper()  # meter + governor (none without caps); cap mode and the owners run on top
        c.mark_ready()
    except BaseException:
        c.down()  # Ctrl-C included
        raise
    return c


def up(spec: ClusterSpec, *, progress: Progress = quiet, ready_timeout: float = 60.0,
       backend: Backend | None = None) -> Cluster:
    """A running cluster of `spec`, its owners started; nothing is left behind on failure."""
    c = start(spec, progress=progress, ready_timeout=ready_timeout, backend=backend)
    try:
        owners.start_from_spec(c)
    except BaseException:
        c.down()
        raise
    return c


@contextlib.contextmanager
def cluster(spec: ClusterSpec, *, progress: Progress = quiet, backend: Backend | None = None) -> Iterator[Cluster]:
    """Bring a cluster up for the block and always take it down. `backend`: as for `start`."""
    c = up(spec, progress=progress, backend=backend)
    try:
        yield c
    finally:
        c.down()
