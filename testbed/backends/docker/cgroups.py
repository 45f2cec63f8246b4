"""The host's cgroup v1 files of Docker's containers (cgroupfs driver): read and write caps
and CPU counters directly.

A file read costs microseconds and a write about 0.2 ms, against 15 ms for a `docker
update` here (over 200 ms while the host is busy), which is why caps that change on a
schedule and counters read every second go through these files and not through dockerd.
"""
from __future__ import annotations

from pathlib import Path

from testbed.backends.base import CpuCap, CpuLimits

CGROUP_ROOT = Path("/sys/fs/cgroup")
PARENT = "docker"  # every container's cgroup is <root>/<controller>/docker/<container id>
MAX_CPU_SHARES = 262144  # the kernel's largest cpu.shares


def cgroup_dir(container_id: str, controller: str, root: Path = CGROUP_ROOT) -> Path:
    if not container_id or "/" in container_id or container_id in (".", ".."):
        raise ValueError(f"container_id: not a container id: {container_id!r}")
    return root / controller / PARENT / container_id


def cgroup_file(container_id: str, controller: str, filename: str, root: Path = CGROUP_ROOT) -> Path:
    return cgroup_dir(container_id, controller, root) / filename


def read_limits(container_id: str, root: Path = CGROUP_ROOT) -> CpuLimits:
    def read(controller: str, name: str) -> str:
        return cgroup_file(container_id, controller, name, root).read_text().strip()

    return CpuLimits(quota_us=int(read("cpu", "cpu.cfs_quota_us")), period_us=int(read("cpu", "cpu.cfs_period_us")),
                     cpuset=read("cpuset", "cpuset.cpus"))


def read_usage_ns(container_id: str, root: Path = CGROUP_ROOT) -> int:
    return int(cgroup_file(container_id, "cpuacct", "cpuacct.usage", root).read_text())


def read_oom_kills(container_id: str, root: Path = CGROUP_ROOT) -> int:
    """The memory cgroup's `oom_kill` count: processes killed at the container's memory limit
    (a kernel without the field, before 4.13, reads 0)."""
    return parse_oom_kills(cgroup_file(container_id, "memory", "memory.oom_control", root).read_text())


def parse_oom_kills(text: str) -> int:
    """`oom_kill N` from memory.oom_control (v1) or memory.events (v2); 0 without the line."""
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if key == "oom_kill":
            return int(value)
    return 0


def write_cap(container_id: str, cap: CpuCap, root: Path = CGROUP_ROOT) -> None:
    """Period first: the kernel checks the quota against the period in force."""
    cpu = cgroup_dir(container_id, "cpu", root)
    (cpu / "cpu.cfs_period_us").write_text(str(cap.period_us))
    (cpu / "cpu.cfs_quota_us").write_text(str(cap.quota_us))


def write_frozen(container_id: str, frozen: bool, root: Path = CGROUP_ROOT) -> None:
    """Freeze or thaw every process of the container (cgroup v1 freezer), behind dockerd's back:
    an owner's burst that leaves its guests nothing. Dropping the cap to its floor instead
    needs a 1 s CFS period, whose timer stays armed after the cap is restored: the guest
    stalled another 0.6 s after a 0.4 s burst (24 Nov 2026), frozen it resumed at once."""
    (cgroup_dir(container_id, "freezer", root) / "freezer.state").write_text("FROZEN" if frozen else "THAWED")


def is_frozen(container_id: str, root: Path = CGROUP_ROOT) -> bool:
    try:
        return cgroup_file(container_id, "freezer", "freezer.state", root).read_text().strip() != "THAWED"
    except OSError:
        return False


def processes_cpu_ns(procs_file: Path, command_contains: str, proc: Path = Path("/proc")) -> int:
    """CPU time (schedstat, ns) of the processes listed in a cgroup.procs file whose command
    line contains the text; a process that ends between the listing and the read counts 0."""
    total = 0
    try:
        pids = procs_file.read_text().split()
    except OSError:
        return 0
    mark = command_contains.encode()
    for pid in pids:
        try:
            if mark in (proc / pid / "cmdline").read_bytes():
                total += int((proc / pid / "schedstat").read_text().split()[0])
        except (OSError, IndexError, ValueError):
            continue
    return total


def prioritize_workstations(root: Path = CGROUP_ROOT) -> bool:
    """Give the containers' parent cgroup the largest CPU weight the kernel allows.

    Caps only bound a workstation from above; with the default weight, busy host processes
    (the controller, a build, a simulation) took 60% of 0.1-core caps here. At the maximum
    weight the caps were delivered within 2% under the same host load. The caps still sum to
    at most 90% of each core, so the host keeps the rest. False if the parent does not exist.
    """
    shares = root / "cpu" / PARENT / "cpu.shares"
    if not shares.exists():
        return False
    if int(shares.read_text()) != MAX_CPU_SHARES:
        shares.write_text(str(MAX_CPU_SHARES))
    return True
