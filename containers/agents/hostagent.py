"""The SSH backend's agent on a host: one workstation's cgroup, its processes, its teardown.

Standard library only: `up` copies this file to the host's nowlab folder and the backend
runs it there as `python3 hostagent.py OP ...` over ssh (one round trip per operation; the
answer is one JSON line), except `sample`, which stays and writes the monitor a line per
interval. It is one file because it is copied as one. The same module is imported by the tests, which run its code
against a folder laid out like cgroupfs: the files written are the real ones, only the
root differs.

How a workstation is capped depends on what the account may do, tried in this order:
  v2       cgroup v2, a child of the cgroupfs root the account can create (root, usually):
           cpu.max, cpuset.cpus, memory.max, cgroup.freeze;
  v1       cgroup v1 controllers (root): cpu.cfs_*, cpuset, cpuacct, freezer, memory;
  systemd  cgroup v2 through the user's systemd manager (no root): a slice whose CPUQuota,
           AllowedCPUs and MemoryMax systemd writes; every command runs in a scope of it;
  none     no cgroup rights: the workstation is reported *uncapped* (quota -1, the kernel's
           "no limit"), its processes only pinned to their core (sched_setaffinity).
Every process started for the workstation carries NOWLAB_SSH_CLUSTER=<cluster> in its
environment, inherited by its children (MPI's orted and ranks too): that mark, not a name
match, is how `teardown` and the uncapped counters find them.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterable

CGROUP_ROOT = Path("/sys/fs/cgroup")
PROC = Path("/proc")
MARK = "NOWLAB_SSH_CLUSTER"  # environment variable carried by every process of a workstation
STATE = "ws.json"  # the workstation's record in its folder (beside this file)
V1_CONTROLLERS = ("cpu", "cpuacct", "cpuset", "freezer", "memory")
UNCAPPED_QUOTA = -1  # cgroup v1's "no limit": what CpuLimits says for an uncapped workstation


@dataclass
class Workstation:
    """What `setup` decided, kept in STATE so every later operation finds it."""

    cluster: str
    name: str
    core: int
    period_us: int
    quota_us: int
    memory: int
    mode: str = "none"  # v2 | v1 | systemd | none
    cgroups: dict[str, str] = field(default_factory=dict)  # controller -> dir (v2: "unified" -> dir)
    slice: str = ""  # the systemd slice (mode systemd)
    shaped_dev: str = ""  # the interface `tc` shaped ("": not shaped)
    net_dev: str = ""  # the interface its peers are reached by: MPI is pinned to it ("": left to choose)
    key_comment: str = ""  # the authorized_keys comment of the cluster key this folder added

    @property
    def mark(self) -> str:
        return f"{MARK}={self.cluster}"


def cgroup_name(cluster: str, ws: str) -> str:
    return f"nowlab.{cluster}.{ws}"


def slice_name(cluster: str, ws: str) -> str:
    # '-' in a slice name means nesting to systemd: keep it out of the unit's own name
    return f"nowlab_{cluster.replace('-', '_')}_{ws.replace('-', '_')}.slice"


# -- the files each mode writes: pure, so the tests read them without a kernel -------------------
def v2_cap_writes(cg: Path, quota_us: int, period_us: int) -> list[tuple[Path, str]]:
    return [(cg / "cpu.max", f"{quota_us} {period_us}")]


def v1_cap_writes(cpu_dir: Path, quota_us: int, period_us: int) -> list[tuple[Path, str]]:
    """Period first: the kernel checks a quota against the period in force."""
    return [(cpu_dir / "cpu.cfs_period_us", str(period_us)), (cpu_dir / "cpu.cfs_quota_us", str(quota_us))]


def systemd_properties(quota_us: int, period_us: int, core: int, memory: int) -> list[str]:
    """`systemctl set-property` arguments: CPUQuota is a percentage of one CPU per period."""
    return [f"CPUQuota={100 * quota_us / period_us:.4g}%", f"CPUQuotaPeriodSec={period_us}us",
            f"AllowedCPUs={core}", f"MemoryMax={memory}"]


def systemd_scope_argv(slice_: str, argv: list[str]) -> list[str]:
    return ["systemd-run", "--user", "--scope", "--quiet", "--collect", f"--slice={slice_}", "--", *argv]


def _write(writes: list[tuple[Path, str]]) -> None:
    for path, value in writes:
        path.write_text(value)


def _try_mkdir(path: Path) -> bool:
    try:
        path.mkdir(exist_ok=True)
        return True
    except OSError:
        return False


# -- setting a workstation up ---------------------------------------------------------------------
def setup_v2(w: Workstation, root: Path) -> bool:
    """A child of the v2 root with cpu (and cpuset, memory) enabled; False if not allowed."""
    if not (root / "cgroup.controllers").exists():
        return False
    available = (root / "cgroup.controllers").read_text().split()
    if "cpu" not in available:
        return False
    try:
        enabled = (root / "cgroup.subtree_control").read_text().split()
        wanted = [c for c in ("cpu", "cpuset", "memory") if c in available and c not in enabled]
        for c in wanted:
            (root / "cgroup.subtree_control").write_text(f"+{c}")
    except OSError:
        return False
    cg = root / cgroup_name(w.cluster, w.name)
    if not _try_mkdir(cg):
        return False
    try:
        _write(v2_cap_writes(cg, w.quota_us, w.period_us))
        if (cg / "cpuset.cpus").exists():
            (cg / "cpuset.cpus").write_text(str(w.core))
        if (cg / "memory.max").exists():
            (cg / "memory.max").write_text(str(w.memory))
    except OSError:
        _rmdir(cg)
        return False
    w.mode, w.cgroups = "v2", {"unified": str(cg)}
    return True


def setup_v1(w: Workstation, root: Path) -> bool:
    """One child per v1 controller (cpu and cpuacct may be one mount); False if not allowed."""
    if not (root / "cpu" / "cpu.cfs_quota_us").exists():
        return False
    made: dict[str, Path] = {}
    for ctrl in V1_CONTROLLERS:
        if not (root / ctrl).is_dir():
            continue
        cg = root / ctrl / cgroup_name(w.cluster, w.name)  # cpu and cpuacct may be one mount: exist_ok
        if not _try_mkdir(cg):
            if ctrl == "cpu":
                _remove_dirs(made.values())
                return False
            continue  # a missing optional controller: counters fall back to /proc
        made[ctrl] = cg
    try:
        _write(v1_cap_writes(made["cpu"], w.quota_us, w.period_us))
        if "cpuset" in made:  # a cpuset takes no task before its cpus and mems are set
            (made["cpuset"] / "cpuset.mems").write_text((root / "cpuset" / "cpuset.mems").read_text().strip())
            (made["cpuset"] / "cpuset.cpus").write_text(str(w.core))
        if "memory" in made:
            (made["memory"] / "memory.limit_in_bytes").write_text(str(w.memory))
    except OSError:
        _remove_dirs(made.values())
        return False
    w.mode, w.cgroups = "v1", {ctrl: str(d) for ctrl, d in made.items()}
    return True


def setup_systemd(w: Workstation) -> bool:
    """A user slice with the cap, if the user's systemd manager answers and has the cpu controller."""
    if shutil.which("systemctl") is None or shutil.which("systemd-run") is None:
        return False
    # systemd accepts CPUQuota even where it cannot enforce it: the cpu controller must be
    # delegated to the user's manager (user@UID.service), or the slice would be uncapped.
    manager = CGROUP_ROOT / "user.slice" / f"user-{os.getuid()}.slice" / f"user@{os.getuid()}.service"
    try:
        if "cpu" not in (manager / "cgroup.controllers").read_text().split():
            return False
    except OSError:
        return False
    slice_ = slice_name(w.cluster, w.name)
    probe = subprocess.run(["systemctl", "--user", "set-property", "--runtime", slice_,
                            *systemd_properties(w.quota_us, w.period_us, w.core, w.memory)],
                           capture_output=True, text=True, check=False)
    if probe.returncode != 0:
        return False
    w.mode, w.slice = "systemd", slice_
    return True


def setup(w: Workstation, root: Path = CGROUP_ROOT) -> Workstation:
    """Cap the workstation by the first mode the account may use (module docstring)."""
    if not (setup_v2(w, root) or setup_v1(w, root) or setup_systemd(w)):
        w.mode, w.cgroups = "none", {}
    return w


# -- reading and writing a set-up workstation ----------------------------------------------------
def _dir(w: Workstation, controller: str) -> Path | None:
    """The workstation's cgroup dir holding `controller`'s files (v1: per controller)."""
    if w.mode == "v2":
        return Path(w.cgroups["unified"])
    if w.mode == "v1":
        return Path(w.cgroups[controller]) if controller in w.cgroups else None
    if w.mode == "systemd":
        return systemd_cgroup(w)
    return None


def systemd_cgroup(w: Workstation, root: Path = CGROUP_ROOT) -> Path | None:
    out = subprocess.run(["systemctl", "--user", "show", "-P", "ControlGroup", w.slice],
                         capture_output=True, text=True, check=False).stdout.strip()
    return root / out.lstrip("/") if out else None


def write_cap(w: Workstation, quota_us: int, period_us: int) -> Workstation:
    if w.mode == "v2":
        _write(v2_cap_writes(Path(w.cgroups["unified"]), quota_us, period_us))
    elif w.mode == "v1":
        cpu = _dir(w, "cpu")
        assert cpu is not None
        _write(v1_cap_writes(cpu, quota_us, period_us))
    elif w.mode == "systemd":
        subprocess.run(["systemctl", "--user", "set-property", "--runtime", w.slice,
                        *systemd_properties(quota_us, period_us, w.core, w.memory)[:2]], check=True)
    w.quota_us, w.period_us = quota_us, period_us
    return w


def limits(w: Workstation) -> dict[str, object]:
    """The cap and pinning as the kernel holds them; quota -1 when nothing caps the workstation."""
    if w.mode == "systemd" and not ((d := _dir(w, "cpu")) and (d / "cpu.max").exists()):
        # the slice has no cgroup until its first process: systemd writes the cap then
        return {"quota_us": w.quota_us, "period_us": w.period_us, "cpuset": str(w.core)}
    if w.mode in ("v2", "systemd"):
        d = _dir(w, "cpu")
        assert d is not None
        quota, period = (d / "cpu.max").read_text().split()
        cpus = (d / "cpuset.cpus").read_text().strip() if (d / "cpuset.cpus").exists() else str(w.core)
        return {"quota_us": UNCAPPED_QUOTA if quota == "max" else int(quota), "period_us": int(period),
                "cpuset": cpus or str(w.core)}
    if w.mode == "v1":
        cpu, cpuset = _dir(w, "cpu"), _dir(w, "cpuset")
        assert cpu is not None
        cpus = (cpuset / "cpuset.cpus").read_text().strip() if cpuset else str(w.core)
        return {"quota_us": int((cpu / "cpu.cfs_quota_us").read_text()),
                "period_us": int((cpu / "cpu.cfs_period_us").read_text()), "cpuset": cpus}
    return {"quota_us": UNCAPPED_QUOTA, "period_us": w.period_us, "cpuset": str(w.core)}


def marked_pids(w: Workstation, proc: Path = PROC) -> list[int]:
    """Processes whose environment carries the workstation's mark (not this one)."""
    mark = w.mark.encode()
    found = []
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if mark in (entry / "environ").read_bytes().split(b"\0"):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def _pid_cpu_ns(pid: int, proc: Path = PROC) -> int:
    try:
        return int((proc / str(pid) / "schedstat").read_text().split()[0])
    except (OSError, IndexError, ValueError):
        return 0


def usage_ns(w: Workstation) -> int:
    """CPU time of the workstation since it started: the cgroup's, else its marked processes' now."""
    if w.mode in ("v2", "systemd") and (d := _dir(w, "cpu")) is not None and (d / "cpu.stat").exists():
        for line in (d / "cpu.stat").read_text().splitlines():
            key, _, value = line.partition(" ")
            if key == "usage_usec":
                return int(value) * 1000
    if w.mode == "v1":
        d = _dir(w, "cpuacct")
        if d is not None and (d / "cpuacct.usage").exists():
            return int((d / "cpuacct.usage").read_text())
    return sum(_pid_cpu_ns(p) for p in marked_pids(w))


def processes_cpu_ns(w: Workstation, contains: str, proc: Path = PROC) -> int:
    text = contains.encode()
    total = 0
    for pid in marked_pids(w, proc):
        try:
            if text in (proc / str(pid) / "cmdline").read_bytes():
                total += _pid_cpu_ns(pid, proc)
        except OSError:
            continue
    return total


def oom_kills(w: Workstation) -> int:
    d = _dir(w, "memory")
    if d is None:
        return 0
    for name in ("memory.events", "memory.oom_control"):
        if (d / name).exists():
            for line in (d / name).read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
    return 0


def hold(w: Workstation, held: bool) -> None:
    """Freeze or thaw every process of the workstation (the cgroup's freezer, else signals)."""
    d = _dir(w, "freezer") if w.mode == "v1" else _dir(w, "cpu")
    try:
        if d is not None and (d / "cgroup.freeze").exists():
            (d / "cgroup.freeze").write_text("1" if held else "0")
            return
        if d is not None and (d / "freezer.state").exists():
            (d / "freezer.state").write_text("FROZEN" if held else "THAWED")
            return
    except OSError:
        pass  # a freezer the login may not write: signals do the same, process by process
    for pid in marked_pids(w):
        try:
            os.kill(pid, signal.SIGSTOP if held else signal.SIGCONT)
        except ProcessLookupError:
            continue


def mpi_interface_env(dev: str) -> dict[str, str]:
    """Open MPI on one interface: its TCP BTL and out-of-band channel, under the ob1 PML.
    Debian's Open MPI 4.1 otherwise picks `pml cm` over libfabric's `net` provider, which
    reads neither setting and has no interface parameter of its own (FI_NET_IFACE,
    FI_TCP_IFACE: no effect, measured), and chose the wrong interface on the Swarm overlay
    (docs/multi-host.md). The cost: ob1 progresses only inside MPI calls, so polite waits
    slow it (CG n = 500 on 3 workstations: 1.26-1.40 s against cm's 0.77-0.85 s)."""
    if not dev:
        return {}
    return {"OMPI_MCA_pml": "ob1", "OMPI_MCA_btl_tcp_if_include": dev, "OMPI_MCA_oob_tcp_if_include": dev}


def join_env(folder: Path, environ: dict[str, str], net_dev: str = "") -> dict[str, str]:
    """What a workstation's process sees besides its caller's environment: this folder's ssh
    wrapper first on PATH (so mpiexec and the ssh masters use the cluster's ssh_config), its
    workloads on PYTHONPATH, Open MPI's remote daemons started through `join` too (so they
    and their ranks land in the workstation), no binding by Open MPI (the ranks keep the
    workstation's core), its session folders in the workstation's folder, not /tmp, and its
    transports on the interface the cluster's peers are reached by."""
    return {"PATH": f"{folder}/bin:{environ.get('PATH', '/usr/local/bin:/usr/bin:/bin')}",
            "PYTHONPATH": str(folder) + (f":{environ['PYTHONPATH']}" if environ.get("PYTHONPATH") else ""),
            "PYTHONDONTWRITEBYTECODE": "1",
            "OMPI_MCA_orte_launch_agent": f"python3 {folder}/hostagent.py join -- orted",
            "OMPI_MCA_hwloc_base_binding_policy": "none",
            "OMPI_MCA_orte_tmpdir_base": f"{folder}/run",  # Open MPI's session dirs go with the folder
            **mpi_interface_env(net_dev)}


def join(w: Workstation, argv: list[str], folder: Path, *, detach: bool = False) -> None:
    """Become one of the workstation's processes (cgroup, core, mark) and exec `argv`;
    detached: in a session of its own, output to the folder's daemons.log, and return at once."""
    if detach:
        if os.fork():
            os._exit(0)
        os.setsid()
        null = os.open(os.devnull, os.O_RDONLY)
        log = os.open(folder / "daemons.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
    os.environ.update(join_env(folder, dict(os.environ), w.net_dev))
    os.environ[MARK] = w.cluster
    if w.mode in ("v2", "v1"):
        for d in sorted(set(w.cgroups.values())):
            procs = Path(d) / "cgroup.procs"
            try:
                procs.write_text(str(os.getpid()))
            except OSError as exc:
                print(f"hostagent: cannot join {d}: {exc}", file=sys.stderr)
    elif w.mode == "systemd":
        argv = systemd_scope_argv(w.slice, argv)
    try:
        os.sched_setaffinity(0, {w.core})
    except OSError as exc:
        print(f"hostagent: cannot pin to core {w.core}: {exc}", file=sys.stderr)
    os.execvp(argv[0], argv)


def _rmdir(d: Path) -> None:
    for _ in range(50):  # a killed process leaves its cgroup a moment later
        try:
            d.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.02)


def _remove_dirs(dirs: Iterable[Path | str]) -> None:
    for d in sorted({Path(x) for x in dirs}):
        _rmdir(d)


def strip_key(authorized_keys: str, comment: str) -> str:
    """authorized_keys without the lines whose comment is the cluster's."""
    keep = [line for line in authorized_keys.splitlines() if not (comment and line.split()[-1:] == [comment])]
    return "".join(line + "\n" for line in keep)


IMAGE_TMP = ("nowlab-zygote.sock", "nowlab-pool-output", "nowlab")  # warm.py, pool.py, workloads/checkpoint.py


def image_tmp_files(tmp: Path = Path("/tmp")) -> list[Path]:
    """What the layers above leave at fixed /tmp names (the zygote's socket, the ssh masters',
    the pool's output, the checkpoints), this login's only: it runs one cluster per host
    (fit.py), so they are this cluster's. A container lost them with itself; a host does not."""
    found = []
    for p in [*tmp.glob("nowlab-mux-*"), *(tmp / name for name in IMAGE_TMP)]:
        try:
            if p.lstat().st_uid == os.getuid():
                found.append(p)
        except FileNotFoundError:
            continue
    return found


def authorize(keys: Path, line: str) -> bool:
    """Add the cluster key's line to authorized_keys (once); True if it was added."""
    keys.parent.mkdir(mode=0o700, exist_ok=True)
    text = keys.read_text() if keys.exists() else ""
    if line.strip() in text.splitlines():
        return False
    with keys.open("a") as fh:
        fh.write(("" if not text or text.endswith("\n") else "\n") + line.strip() + "\n")
    keys.chmod(0o600)
    return True


def teardown(w: Workstation, folder: Path, tmp: Path = Path("/tmp")) -> dict[str, int]:
    """Kill the marked processes, remove cgroups, qdisc, the cluster key and the folder."""
    hold(w, False)
    killed = 0
    for _ in range(20):
        pids = marked_pids(w)
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                continue
        time.sleep(0.05)
    _remove_dirs(Path(d) for d in w.cgroups.values())
    if w.mode == "systemd":
        subprocess.run(["systemctl", "--user", "stop", w.slice], capture_output=True, check=False)
    if w.shaped_dev:
        subprocess.run(["tc", "qdisc", "del", "dev", w.shaped_dev, "root"], capture_output=True, check=False)
    for p in image_tmp_files(tmp):
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)
        else:
            p.unlink(missing_ok=True)
    keys = Path.home() / ".ssh" / "authorized_keys"
    if w.key_comment and keys.exists():
        keys.write_text(strip_key(keys.read_text(), w.key_comment))
    shutil.rmtree(folder, ignore_errors=True)
    return {"processes": killed, "cgroups": len(set(w.cgroups.values())), "qdiscs": int(bool(w.shaped_dev))}


# -- the command line the backend calls -----------------------------------------------------------
def read_tc(tc_argv: list[str], timeout_s: float) -> str:
    """`stamp\\ntc output`, stamped midway as the monitor's own read is ("" if it failed)."""
    t0 = time.time()
    try:
        res = subprocess.run(tc_argv, capture_output=True, text=True, timeout=timeout_s)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return f"{(t0 + time.time()) / 2:.6f}\n{res.stdout}" if res.returncode == 0 else ""


def sample_line(w: Workstation, contains: str, tc_argv: list[str], timeout_s: float = 5.0,
                proc: Path = PROC) -> dict:
    """The monitor's three reads of this workstation at once: {"t", "ws": {name: {"t", "limits",
    "procs_ns", "tc"}}} (testbed/backends/ssh/sampling.py parses it)."""
    t = time.time()
    got = {"t": t, "limits": limits(w), "procs_ns": processes_cpu_ns(w, contains, proc),
           "tc": read_tc(tc_argv, timeout_s) if tc_argv else ""}
    return {"t": time.time(), "ws": {w.name: got}}


def sample(w: Workstation, folder: Path, interval_s: float, contains: str, tc_argv: list[str]) -> int:
    """One line per interval until the controller closes the channel (a write fails) or the
    workstation is torn down (its record is gone). One process for the cluster's life instead
    of a python3 start per read: two per workstation per second cost the workstation ~0.1
    core of the very CPU the monitor measures. It runs outside the workstation's cgroup."""
    nxt = time.monotonic()
    while (folder / STATE).exists():
        try:
            line = sample_line(w, contains, tc_argv, timeout_s=max(1.0, 2 * interval_s))
        except (OSError, ValueError) as exc:  # a cgroup going away under us: say so, go on
            line = {"t": time.time(), "ws": {}, "error": f"{type(exc).__name__}: {exc}"}
        try:
            sys.stdout.write(json.dumps(line, separators=(",", ":")) + "\n")
            sys.stdout.flush()
        except BrokenPipeError:
            return 0
        nxt += interval_s
        time.sleep(max(0.0, nxt - time.monotonic()))
        if time.monotonic() - nxt > interval_s:  # fell behind (the host was busy): no burst to catch up
            nxt = time.monotonic()
    return 0


def load(folder: Path) -> Workstation:
    return Workstation(**json.loads((folder / STATE).read_text()))


def save(w: Workstation, folder: Path) -> None:
    tmp = folder / (STATE + ".tmp")
    tmp.write_text(json.dumps(asdict(w)))
    tmp.replace(folder / STATE)


def main(args: list[str]) -> int:
    folder = Path(__file__).resolve().parent
    op, rest = args[0], args[1:]
    if op == "setup":
        cluster, name, core, quota, period, memory = rest
        w = setup(Workstation(cluster, name, int(core), int(period), int(quota), int(memory),
                              key_comment=f"nowlab-{cluster}"))
        save(w, folder)
        print(json.dumps(asdict(w)))
        return 0
    if op == "authorize":
        print(json.dumps(authorize(Path.home() / ".ssh" / "authorized_keys", rest[0])))
        return 0
    if op == "teardown" and not (folder / STATE).exists():  # `up` failed before setup: files only
        w = Workstation(folder.name, "", 0, 0, 0, 0, key_comment=f"nowlab-{folder.name}")
        print(json.dumps(teardown(w, folder)))
        return 0
    w = load(folder)
    if op in ("join", "detach"):
        join(w, rest[1:] if rest[:1] == ["--"] else rest, folder, detach=op == "detach")
        return 127  # not reached: exec replaced us
    if op == "cap":
        save(write_cap(w, int(rest[0]), int(rest[1])), folder)
        out: object = None
    elif op == "limits":
        out = limits(w)
    elif op == "usage":
        out = usage_ns(w)
    elif op == "procs-cpu":
        out = processes_cpu_ns(w, rest[0])
    elif op == "sample":  # INTERVAL_S MARK_TEXT [-- TC ARGV...]
        interval, contains, tc = float(rest[0]), rest[1], rest[3:] if rest[2:3] == ["--"] else []
        return sample(w, folder, interval, contains, tc)
    elif op == "oom":
        out = oom_kills(w)
    elif op == "hold":
        hold(w, rest[0] == "1")
        out = None
    elif op == "net-dev":
        w.net_dev = rest[0]
        save(w, folder)
        out = None
    elif op == "shaped":
        w.shaped_dev = rest[0]
        save(w, folder)
        out = None
    elif op == "teardown":
        out = teardown(w, folder)
    else:
        print(f"hostagent: unknown operation {op!r}", file=sys.stderr)
        return 2
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
