"""Helpers shared by the benchmarks, checks and hardening harnesses: medians, a rich table, CPU counters.

Kept here, the lowest of the three top packages, so checks/ and hardening/ import it
(`benchmarks._common`) rather than each keeping a copy."""
from __future__ import annotations

import os
import statistics
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from testbed.backends import Backend, MachineId

os.environ.setdefault("NOWLAB_HOME", str(Path.home() / ".nowlab-bench"))

from experiments.analysis_io import console, table  # noqa: E402,F401  (after NOWLAB_HOME: the benchmarks' console and table)


def median(values: list[float]) -> float:
    return statistics.median(values)


def cpu_self_s() -> float:
    """CPU seconds this process (every thread) has used so far."""
    import resource

    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def machines_cpu_s(backend: Backend, machines: list[MachineId]) -> float:
    """CPU seconds the machines have used so far, as their backend counts them
    (`Backend.cpu_usage_ns`: for Docker, a container's cgroup on this machine)."""
    return sum(backend.cpu_usage_ns(m) for m in machines) / 1e9
