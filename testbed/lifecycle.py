"""Bringing a cluster up with the load its spec asks for, and always taking it down.

`Cluster.create` builds the workstations; the owners the spec gives start here, on top,
so the cluster module never imports the load package (docs/architecture.md).
"""
from __future__ import annotations

import contextlib
from typing import Iterator

from testbed.backends import Backend
from testbed.cluster import Cluster, Progress, quiet
from testbed.load import owners
from testbed.spec import ClusterSpec


def up(spec: ClusterSpec, *, progress: Progress = quiet, ready_timeout: float = 60.0,
       backend: Backend | None = None) -> Cluster:
    """A running cluster of `spec`, its owners started; nothing is left behind on failure.
    `backend`: where (testbed.backends.get(kind, spec)); None: Docker on this host."""
    c = Cluster.create(spec, progress=progress, ready_timeout=ready_timeout, backend=backend)
    try:
        owners.start_from_spec(c)
    except BaseException:
        c.down()
        raise
    return c


@contextlib.contextmanager
def cluster(spec: ClusterSpec, *, progress: Progress = quiet) -> Iterator[Cluster]:
    """Bring a cluster up for the block and always take it down."""
    c = up(spec, progress=progress)
    try:
        yield c
    finally:
        c.down()
