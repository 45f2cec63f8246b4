"""Helpers shared by the benchmarks: medians and a rich table."""
from __future__ import annotations

import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("NOWLAB_HOME", str(Path.home() / ".nowlab-bench"))

from experiments.analysis_io import console, table  # noqa: E402,F401  (the benchmarks' console and table)


def median(values: list[float]) -> float:
    return statistics.median(values)


def cpu_self_s() -> float:
    """CPU seconds this process (every thread) has used so far."""
    import resource

    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def containers_cpu_s(client, names: list[str]) -> float:
    """CPU seconds the named containers have used so far, from their cgroups on this machine."""
    from testbed.backends.docker.cgroups import read_usage_ns

    return sum(read_usage_ns(client.api.inspect_container(name)["Id"]) for name in names) / 1e9
