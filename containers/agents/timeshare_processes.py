"""The processes a local job manager controls: /proc, CPU time and cap, and the guardian that continues them.

Standard library only (containers/agents/timeshare_manager.py runs inside a workstation).
"""
import collections
import os
import signal

CLK_TCK = os.sysconf("SC_CLK_TCK")


def cap_cores():
    """This workstation's CPU cap in cores, read afresh (a governor moves it): its CFS quota over
    its period (cgroup v1, as the container sees its own), or the cores it may run on if uncapped."""
    try:
        with open("/sys/fs/cgroup/cpu/cpu.cfs_quota_us") as q, open("/sys/fs/cgroup/cpu/cpu.cfs_period_us") as p:
            quota, period = int(q.read()), int(p.read())
        if quota > 0 and period > 0:
            return quota / period
    except (OSError, ValueError):
        pass
    return float(len(os.sched_getaffinity(0)))


def tree_cpu_s(pids):
    """CPU time (user + system) the live processes among pids have used, in s."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                raw = fh.read()
        except (FileNotFoundError, ProcessLookupError):
            continue
        fields = raw[raw.rindex(b")") + 2:].split()
        total += int(fields[11]) + int(fields[12])
    return total / CLK_TCK


def proc_stat(pid):
    """(state, ppid, start ticks) of a process, or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            raw = fh.read()
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = raw[raw.rindex(b")") + 2:].split()  # the command name may hold spaces and brackets
    return fields[0].decode(), int(fields[1]), int(fields[19])


def all_processes():
    """Every live process as {pid: (ppid, start ticks)} (one pass over /proc)."""
    out = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = proc_stat(int(name))
            if st is not None and st[0] not in ("Z", "X"):
                out[int(name)] = (st[1], st[2])
    return out


def descendants(roots, processes):
    """The roots (pid -> start ticks, still the same process) and every process below them."""
    children = collections.defaultdict(list)
    for pid, (ppid, _) in processes.items():
        children[ppid].append(pid)
    tree = {}
    todo = [p for p, ticks in roots.items() if p in processes and processes[p][1] == ticks]
    while todo:
        pid = todo.pop()
        if pid not in tree:
            tree[pid] = processes[pid][1]
            todo.extend(children[pid])
    return tree


class Guardian:
    """A child that continues every pid it was told is stopped once the manager's pipe closes."""

    def __init__(self):
        read_fd, self._write_fd = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            os.close(self._write_fd)
            self._serve(read_fd)
        os.close(read_fd)

    @staticmethod
    def _serve(read_fd):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # outlive the manager: it may be told to stop first
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        held = {}
        try:
            with os.fdopen(read_fd, "rb") as pipe:
                for line in pipe:
                    sign, pid, ticks = line.split()
                    if sign == b"+":
                        held[int(pid)] = int(ticks)
                    else:
                        held.pop(int(pid), None)
        finally:
            for pid, ticks in held.items():
                st = proc_stat(pid)
                if st is not None and st[2] == ticks:
                    try:
                        os.kill(pid, signal.SIGCONT)
                    except ProcessLookupError:
                        pass
            os._exit(0)

    def tell(self, sign, pid, ticks):
        try:
            os.write(self._write_fd, f"{sign} {pid} {ticks}\n".encode())
        except OSError:  # the guardian is gone: the manager still cleans up after itself
            pass

    def close(self):
        try:
            os.close(self._write_fd)
        except OSError:
            pass
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass
