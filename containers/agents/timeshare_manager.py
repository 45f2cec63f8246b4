"""The local job manager of one workstation (Zhou & Brent §4-§5): a registration office as a daemon.

Ranks check in (a job name and a pid: the manager controls that process and its descendants),
the global manager gives a scheduling table and resynchronises its slot boundaries, and an
office-manager thread stops (SIGSTOP) every registered job that does not own the current slot and
continues (SIGCONT) the one that does. In a slot's sequential part and in dummy slots every
parallel job is stopped and only the owners run. Registered jobs the table does not name stay
stopped until a table gives them a slot; with no table in force the manager stops nothing.
A job that checks out (or whose processes all vanish) leaves its slot to sequential work until
the next table: the other slots keep their places, so they stay aligned with the other
workstations (scheduler/timeshare/office.py instead shifts the round up; the arithmetic of a
table in force is the same, and a test holds the two to it).

Runs inside a workstation (the image copies containers/agents/ whole):
    NOWLAB_CLUSTER_SECRET=<hex> python3 /opt/nowlab/agents/timeshare_manager.py --name ws1 --port 7717
Standard library, and workloads.channel_auth and workloads.control_gate (standard library
only themselves), found on the image's PYTHONPATH (/opt/nowlab) in the workloads/ folder
every workstation mounts; on the host, experiments/studies/zhou_brent/host.py puts the repository on
PYTHONPATH. It prints `listening HOST PORT` on stdout once it accepts requests (--port 0: any
free port).

Who may speak: only a peer that holds the cluster's secret (NOWLAB_CLUSTER_SECRET, in the
environment, never on the command line; without it the manager will not start). Before any
request, the handshake of workloads/channel_auth.py with the channel TIMESHARE; a wrong or
missing answer closes the connection, and workloads/control_gate.py (one thread for every
handshake) counts and logs it. `status` reports the count (`refused`).

Protocol: TCP, one JSON object a line, one JSON reply a line ({"ok": true, ...} or
{"ok": false, "error": "<one line naming the field>"}). Times are seconds on this
workstation's clock (time.time(), scaled by --drift-ppm to emulate a clock that runs off).
    {"op": "checkin", "job": "A", "pid": 123}
    {"op": "checkout", "job": "A", "pid": 123}     the pid is continued before it is let go
    {"op": "table", "round_s": 0.4, "at": T,        at: when round 0 begins (optional: keep the
     "workstation": "ws1",                          running rounds' boundaries, or now if none;
                                                    later than now with a table in force: the new
                                                    one is pending, the old one runs until T);
     "slots": [{"job": "A", "parallel_s": 0.2,      workstation optional, checked if given;
                "sequential_s": 0.0},               job null: a dummy slot (parallel_s 0)
               {"job": null, "parallel_s": 0, "sequential_s": 0.2}],
     "policy": "implicit", "cpu_cores": 0.3}      optional: the local policy inside a slot (below)
                                                    and this workstation's cap in cores (default:
                                                    read from its cgroup at each slot, `cap_cores`)
    {"op": "sync", "round": 12, "at": T}          round 12 begins at T; the reply's
                                                    correction_s is how far the local boundary was off
    {"op": "status"} (+ "latencies": true, "timeline": true for the raw lists)
Local policies (Zhou & Brent §3), for a table; the owners are the processes checked in as
"@owners" (OWNERS), e.g. containers/agents/owner.py's daemon:
- implicit (the default): the slot's job runs in its Δt_p, the owners whenever they are ready;
  they share the CPU as the workstation's scheduler lets them (ranks and owners both guests in
  a time-sharing run, so equal peers);
- dedicated: the same, but the owners are stopped while a job runs in its Δt_p: it runs
  alone, and the owners get Δt_s and the dummy slots;
- proper-share: the slot's job may run anywhere in its integrated slot Δt_p + Δt_s, beside the
  owners, until its processes have used Δt_p · cpu_cores of CPU time in that slot (its share
  at the workstation's cap); then it is stopped until the next slot. The owners are never
  stopped, so their commands wait less than behind a dedicated Δt_p.
A table is refused, the old one staying in force, when a job slot's β = parallel_s/round_s is
outside (0, 1], a dummy has parallel_s > 0, the widths do not add up to round_s, a job is
named twice or is not checked in: the error names the field (e.g. `slots[1].job: ...`).

Faults. A checked-in pid that has vanished (or whose pid was reused) is dropped at the next
boundary. On SIGTERM, SIGINT, SIGHUP, or when the timer thread or the server fails, the manager
continues every process it stopped before it exits. SIGKILL gives it no chance: a guardian
child, forked at start and told over a pipe which pids are stopped, sees the pipe close when
the manager dies however it dies and continues them; it ignores SIGTERM and SIGINT so it
outlives the manager. Only a SIGKILL of the guardian too (the container itself going) can leave
a rank stopped, and then the rank goes with the container. The global manager's watchdog
(experiments/studies/zhou_brent/manager_client.py) notices a dead manager from missed status polls.

Switch cost on this host (2 cores, Debian 12, shared with other runs, no container; 13:10 UTC
24 Nov 2026: `benchmarks/bench_timeshare_switch.py --slot-s 0.1 --duration-s 10`, two burning
jobs): slot end to the next process continued median 0.35 ms, 95th percentile 3.0 ms, max
7.0 ms (over 100 switches), of which the timer's wake-up median 0.17 ms, 95th percentile 2.9 ms;
one kill() is ~45 µs, and a SIGCONT now and then waits ~4 ms when the woken process takes the
core. The manager used 3.5 % of a core, most of it the /proc scan for the jobs' descendants
after each switch (~4.5 ms over this host's ~250 processes; a workstation has a few dozen).
The job's shares came out 0.496 and 0.504. The manager asks for niceness -10 so that a boundary
does not wait behind the ranks; where it may not (no CAP_SYS_NICE), it says so on stderr and
runs at the niceness it inherited. Inside a workstation it shares the container's CFS quota with
the ranks: a boundary that falls while the container is throttled waits for the next period.
"""
import argparse
import collections
import json
import logging
import math
import os
import signal
import socket
import sys
import threading
import time

from workloads import channel_auth
from workloads.control_gate import Gate

WIDTH_TOLERANCE_S = 1e-9  # as scheduler/timeshare/slots.py: rounding, not an error
OWNERS = "@owners"  # the name the owners' processes check in under: sequential work, never in a slot
POLICIES = ("implicit", "dedicated", "proper-share")
BUDGET_POLL_MIN_S = 0.01  # proper share: the shortest wait between looks at a job's CPU use
CLK_TCK = os.sysconf("SC_CLK_TCK")
LATENCIES_KEPT = 10_000
TIMELINE_KEPT = 10_000
MAX_LINE_BYTES = 1 << 20


class RequestError(ValueError):
    """A request the manager refuses: the message is one line naming the field."""


# --- the slot arithmetic (agrees with scheduler/timeshare/office.py: tests say so) -------------

def dispatch_at(slots, round_s, anchor_s, now_s):
    """Which slot holds now_s, for a table whose round 0 begins at anchor_s.

    slots: (job or None, parallel_s, sequential_s) in order. Returns (index, job, sequential,
    slot_start_s, until_s): job is the slot's own job (None for a dummy); sequential says that
    now_s is past its parallel part, so no parallel job runs until until_s.
    """
    laps = math.floor((now_s - anchor_s) / round_s)
    start_s = anchor_s + laps * round_s
    for _ in range(2):  # rounding can leave now_s a hair past the last slot of a lap
        for i, (job, parallel_s, sequential_s) in enumerate(slots):
            width_s = parallel_s + sequential_s
            if width_s > 0 and now_s < start_s + width_s:
                if now_s < start_s + parallel_s:
                    return i, job, False, start_s, start_s + parallel_s
                return i, job, True, start_s, start_s + width_s
            start_s += width_s
    raise RequestError("slots: no slot has a width")  # parse_table refuses such tables


def parse_table(request, registered, workstation):
    """A table request as (round_s, slots), or RequestError naming the bad field."""
    round_s = request.get("round_s")
    if not (isinstance(round_s, (int, float)) and not isinstance(round_s, bool)
            and math.isfinite(round_s) and round_s > 0):
        raise RequestError(f"round_s: must be a positive time in s, got {round_s!r}")
    named_ws = request.get("workstation")
    if named_ws is not None and named_ws != workstation:
        raise RequestError(f"workstation: this is {workstation}, given the table of {named_ws!r}")
    raw = request.get("slots")
    if not isinstance(raw, list) or not raw:
        raise RequestError("slots: must be a non-empty list")
    slots, seen = [], set()
    for i, s in enumerate(raw):
        if not isinstance(s, dict):
            raise RequestError(f"slots[{i}]: must be an object with job, parallel_s, sequential_s")
        extra = sorted(set(s) - {"job", "parallel_s", "sequential_s"})
        if extra:
            raise RequestError(f"slots[{i}].{extra[0]}: unknown field (known: job, parallel_s, sequential_s)")
        job = s.get("job")
        widths = []
        for field in ("parallel_s", "sequential_s"):
            w = s.get(field, 0.0)
            if not (isinstance(w, (int, float)) and not isinstance(w, bool) and math.isfinite(w) and w >= 0):
                raise RequestError(f"slots[{i}].{field}: must be a time >= 0 in s, got {w!r}")
            widths.append(float(w))
        if job is None:
            if widths[0] > 0:
                raise RequestError(f"slots[{i}].parallel_s: a dummy slot (job null) has no parallel part, "
                                   f"got {widths[0]:g}")
        else:
            if not isinstance(job, str) or not job:
                raise RequestError(f"slots[{i}].job: must be a job name or null, got {job!r}")
            beta = widths[0] / round_s
            if not 0 < beta <= 1 + WIDTH_TOLERANCE_S:
                raise RequestError(f"slots[{i}].parallel_s: β = parallel_s/round_s = {beta:g} is outside (0, 1]")
            if job == OWNERS:
                raise RequestError(f"slots[{i}].job: {OWNERS} is the owners' name, not a job's")
            if job in seen:
                raise RequestError(f"slots[{i}].job: {job} has more than one slot")
            if job not in registered:
                raise RequestError(f"slots[{i}].job: unknown job {job} "
                                   f"(checked in: {', '.join(sorted(registered)) or 'none'})")
            seen.add(job)
        slots.append((job, widths[0], widths[1]))
    total_s = math.fsum(p + q for _, p, q in slots)
    if abs(total_s - round_s) > WIDTH_TOLERANCE_S * max(1.0, round_s):
        raise RequestError(f"slots: widths add up to {total_s:g} s, not round_s = {round_s:g} s")
    return float(round_s), tuple(slots)


def parse_policy(request):
    """A table request's (policy, cpu_cores), or RequestError naming the field."""
    policy = request.get("policy", "implicit")
    if policy not in POLICIES:
        raise RequestError(f"policy: unknown {policy!r} (known: {', '.join(POLICIES)})")
    cores = request.get("cpu_cores")
    if cores is None:
        return policy, None
    if not (isinstance(cores, (int, float)) and not isinstance(cores, bool) and math.isfinite(cores) and cores > 0):
        raise RequestError(f"cpu_cores: must be the workstation's cap in cores (> 0), got {cores!r}")
    return policy, float(cores)


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


# --- processes -------------------------------------------------------------------------------

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


# --- the manager -----------------------------------------------------------------------------

class Manager:
    """The registration office and its office manager's timer, behind one lock."""

    def __init__(self, workstation, drift_ppm=0.0, guardian=None, on_failure=None):
        self.workstation = workstation
        self.on_failure = on_failure  # called after a failed timer has released everything: the daemon ends
        self.rate = 1.0 + drift_ppm * 1e-6
        self.epoch_s = time.time()
        self.guardian = guardian
        self.cond = threading.Condition()
        self.members = {}    # job -> {root pid: start ticks}: what checked in
        self.trees = {}      # job -> {pid: start ticks}: the roots and their descendants
        self.stopped = {}    # pid -> start ticks: what this manager stopped and must continue
        self.table = None    # (round_s, slots)
        self.pending = None  # (table, anchor_s): a replan that takes over at anchor_s (a round boundary)
        self.anchor_s = None  # when round 0 of the table began, on this clock
        self.running = None  # the job marked out
        self.owners_run = True  # whether the owners (OWNERS) are marked out
        self.budget = None   # proper share: ((slot index, slot start), its job's CPU time then, the cap in cores)
        self.slot = None     # (index, job, sequential, start_s, until_s) at the last boundary
        self.boundary_s = None  # the boundary the timer is waiting for
        self.switches = 0
        self.latencies_s = collections.deque(maxlen=LATENCIES_KEPT)  # slot end -> next process continued
        self.wake_late_s = collections.deque(maxlen=LATENCIES_KEPT)   # slot end -> the timer awake: the part the OS owes
        self.timeline = collections.deque(maxlen=TIMELINE_KEPT)
        self.syncs = 0
        self.last_correction_s = None
        self.dropped = []
        self.closing = False
        self.failure = None
        self.refusals = None  # the gate's count of connections it closed, once it listens

    def clock(self):
        """This workstation's time: the host's, run at (1 + drift) from the start."""
        now = time.time()
        return self.epoch_s + (now - self.epoch_s) * self.rate

    # requests ------------------------------------------------------------------------------
    def handle(self, request):
        if not isinstance(request, dict):
            raise RequestError("request: must be a JSON object with an op")
        op = request.get("op")
        handler = {"checkin": self._checkin, "checkout": self._checkout, "table": self._table,
                   "sync": self._sync, "status": self._status}.get(op)
        if handler is None:
            raise RequestError(f"op: unknown {op!r} (known: checkin, checkout, table, sync, status)")
        with self.cond:
            if self.closing:
                raise RequestError("op: the manager is shutting down")
            reply = handler(request)
            self.cond.notify_all()
        return reply

    @staticmethod
    def _job_pid(request):
        job, pid = request.get("job"), request.get("pid")
        if not isinstance(job, str) or not job:
            raise RequestError(f"job: must be a non-empty name, got {job!r}")
        if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
            raise RequestError(f"pid: must be a positive integer, got {pid!r}")
        return job, pid

    def _checkin(self, request):
        job, pid = self._job_pid(request)
        st = proc_stat(pid)
        if st is None or st[0] in ("Z", "X"):
            raise RequestError(f"pid: no live process {pid} on {self.workstation}")
        for other, roots in self.members.items():
            if pid in roots:
                raise RequestError(f"pid: {pid} is already checked in (job {other})")
        self.members.setdefault(job, {})[pid] = st[2]
        self._refresh_trees()
        self._apply(self.running, self.owners_run)
        return {"job": job, "pids": sorted(self.trees.get(job, {}))}

    def _checkout(self, request):
        job, pid = self._job_pid(request)
        if pid not in self.members.get(job, {}):
            raise RequestError(f"pid: {pid} is not checked in as job {job}")
        gone = self.trees.get(job, {})
        del self.members[job][pid]
        if not self.members[job]:
            del self.members[job]
        self._refresh_trees()
        for p, ticks in gone.items():
            if p not in self.trees.get(job, {}):
                self._cont(p, ticks)
        if self.running == job and job not in self.members:
            self.running = None
        return {"job": job, "left": job not in self.members}

    def _table(self, request):
        table = parse_table(request, set(self.members) - {OWNERS}, self.workstation) + parse_policy(request)
        at = request.get("at")
        if at is not None and not (isinstance(at, (int, float)) and math.isfinite(at)):
            raise RequestError(f"at: must be a time in s on this workstation's clock, got {at!r}")
        if at is not None and self.table is not None and at > self.clock():
            # A replan (Zhou & Brent §5): the running round finishes under the old table, and
            # the new one begins at its boundary; a later table replaces a pending one.
            self.pending = (table, float(at))
            self.boundary_s = None
            return {"round_s": table[0], "slots": len(table[1]), "anchor_s": self.anchor_s, "pending_at": float(at)}
        self.pending = None
        self.table = table
        self.anchor_s = float(at) if at is not None else (self.anchor_s if self.anchor_s is not None else self.clock())
        self.boundary_s = None  # the timer replans from the new table without counting a switch
        return {"round_s": table[0], "slots": len(table[1]), "anchor_s": self.anchor_s}

    def _promote(self, now_s):
        """Put a pending table in force once its time has come."""
        if self.pending is not None and now_s >= self.pending[1]:
            (self.table, self.anchor_s), self.pending = self.pending, None

    def _sync(self, request):
        rnd, at = request.get("round"), request.get("at")
        if not isinstance(rnd, int) or isinstance(rnd, bool) or rnd < 0:
            raise RequestError(f"round: must be an integer >= 0, got {rnd!r}")
        if not (isinstance(at, (int, float)) and not isinstance(at, bool) and math.isfinite(at)):
            raise RequestError(f"at: must be a time in s on this workstation's clock, got {at!r}")
        if self.table is None:
            raise RequestError("round: no table in force to resynchronise")
        if self.pending is not None and at - rnd * self.pending[0][0] >= self.pending[1] - self.pending[0][0] / 2:
            # a resync of the pending table's rounds, a little before this clock reached their start
            (self.table, self.anchor_s), self.pending = self.pending, None
        round_s = self.table[0]
        correction_s = at - (self.anchor_s + rnd * round_s)
        self.anchor_s = at - rnd * round_s
        self.boundary_s = None
        self.syncs += 1
        self.last_correction_s = correction_s
        return {"correction_s": correction_s, "anchor_s": self.anchor_s}

    def _status(self, request):
        def summary(values):
            v = sorted(values)
            return {"count": len(v), "median": v[len(v) // 2] if v else None,
                    "p95": v[min(len(v) - 1, int(0.95 * len(v)))] if v else None, "max": v[-1] if v else None}

        slot = None
        if self.slot is not None:
            index, job, sequential, start_s, until_s = self.slot
            slot = {"index": index, "job": job, "sequential": sequential, "start_s": start_s, "until_s": until_s}
        reply = {
            "workstation": self.workstation, "now_s": self.clock(), "running": self.running, "slot": slot,
            "round_s": self.table[0] if self.table else None, "anchor_s": self.anchor_s,
            "policy": self.table[2] if self.table else None, "owners_running": self.owners_run,
            "pending_at": self.pending[1] if self.pending is not None else None,
            "jobs": {j: sorted(t) for j, t in self.trees.items()},
            "stopped": sorted(self.stopped), "switches": self.switches, "syncs": self.syncs,
            "last_correction_s": self.last_correction_s, "dropped": list(self.dropped),
            "cpu_s": time.process_time(), "nice": os.getpriority(os.PRIO_PROCESS, 0), "guardian_pid": self.guardian.pid if self.guardian else None,
            "latency_s": summary(self.latencies_s), "wake_late_s": summary(self.wake_late_s),
            "refused": self.refusals.total if self.refusals is not None else 0,
        }
        if request.get("latencies"):
            reply["latencies_s"] = list(self.latencies_s)
        if request.get("timeline"):
            reply["timeline"] = [list(e) for e in self.timeline]
        return reply

    # the office manager's timer ------------------------------------------------------------
    def run_timer(self):
        """Thread body: at every boundary, stop and continue; any failure releases everything."""
        try:
            self._timer_loop()
        except Exception as exc:  # a crash must not leave ranks stopped: release, then end the daemon
            self.failure = f"timer: {type(exc).__name__}: {exc}"
            print(self.failure, file=sys.stderr, flush=True)
            self.release()
            if self.on_failure is not None:
                self.on_failure()

    def _timer_loop(self):
        with self.cond:
            while not self.closing:
                now_s = self.clock()
                due_s = self.boundary_s
                self._promote(now_s)
                owners_run = True
                poll_s = math.inf
                if self.table is None:
                    self.slot, wanted = None, None
                    wait_s = None
                else:
                    self.slot = dispatch_at(self.table[1], self.table[0], self.anchor_s, now_s)
                    index, job, sequential, start_s, until_s = self.slot
                    policy = self.table[2]
                    if policy == "proper-share":  # the integrated slot: Δt_p of CPU anywhere in Δt_p + Δt_s
                        _, parallel_s, sequential_s = self.table[1][index]
                        self.slot = (index, job, False, start_s, start_s + parallel_s + sequential_s)
                        left_s = self._budget_left(index, start_s, job, parallel_s) if job in self.members else 0.0
                        wanted = job if left_s > 0 else None
                        if wanted is not None:  # it cannot use its CPU faster than the cap allows
                            poll_s = max(BUDGET_POLL_MIN_S, left_s / self.budget[2])
                    else:
                        wanted = None if sequential or job not in self.members else job
                    owners_run = not (policy == "dedicated" and wanted is not None)
                changed = self._apply(wanted, owners_run)
                if changed:
                    done_s = self.clock()
                    self.switches += 1
                    self.timeline.append((done_s, wanted))
                    if due_s is not None and now_s >= due_s:
                        self.latencies_s.append(done_s - due_s)
                        self.wake_late_s.append(now_s - due_s)
                next_s = None if self.table is None else min(self.slot[4], self.pending[1] if self.pending else math.inf)
                self.boundary_s = next_s
                self._refresh_trees()  # off the switch's path: new children of a job, vanished pids
                self._apply(self.running, self.owners_run)
                if next_s is not None:  # timed from after the work above, or every boundary is late by it
                    wait_s = max(0.0, min((next_s - self.clock()) / self.rate, poll_s))
                self.cond.wait(timeout=wait_s)

    def _refresh_trees(self):
        procs = all_processes()
        for job in list(self.members):
            roots = self.members[job]
            for pid, ticks in list(roots.items()):
                if pid not in procs or procs[pid][1] != ticks:
                    del roots[pid]
                    self.dropped.append({"job": job, "pid": pid})
                    self.stopped.pop(pid, None)
            if not roots:
                del self.members[job]
        self.trees = {job: descendants(roots, procs) for job, roots in self.members.items()}
        for pid in [p for p in self.stopped if p not in procs]:
            del self.stopped[pid]

    def _budget_left(self, index, start_s, job, parallel_s):
        """Proper share: the CPU time `job` may still use in the slot that began at start_s (s)."""
        key = (index, round(start_s, 6))
        used_s = tree_cpu_s(self.trees.get(job, {}))
        if self.budget is None or self.budget[0] != key:
            self.budget = (key, used_s, self.table[3] or cap_cores())
        return parallel_s * self.budget[2] - (used_s - self.budget[1])

    def _apply(self, wanted, owners_run=True):
        """Mark `wanted` out (continue it) and every other registered job in (stop it), the owners
        out or in by owners_run; True if the job marked out changed.

        With no table in force, nothing is kept stopped.
        """
        changed = wanted != self.running
        self.running = wanted
        self.owners_run = owners_run
        for job, tree in self.trees.items():
            run = self.table is None or (owners_run if job == OWNERS else job == wanted)
            for pid, ticks in tree.items():
                if run and pid in self.stopped:
                    self._cont(pid, ticks)
                elif not run and pid not in self.stopped:
                    self._stop(pid, ticks)
        return changed

    def _stop(self, pid, ticks):
        if self.guardian:
            self.guardian.tell("+", pid, ticks)  # before the stop: a stopped pid is always held
        try:
            os.kill(pid, signal.SIGSTOP)
            self.stopped[pid] = ticks
        except ProcessLookupError:
            if self.guardian:
                self.guardian.tell("-", pid, ticks)

    def _cont(self, pid, ticks):
        try:
            os.kill(pid, signal.SIGCONT)
        except ProcessLookupError:
            pass
        self.stopped.pop(pid, None)
        if self.guardian:
            self.guardian.tell("-", pid, ticks)

    def release(self):
        """Continue every process this manager stopped, and stop the timer for good."""
        with self.cond:
            self.closing = True
            for pid, ticks in list(self.stopped.items()):
                st = proc_stat(pid)
                if st is not None and st[2] == ticks:
                    self._cont(pid, ticks)
                else:
                    self.stopped.pop(pid, None)
            self.cond.notify_all()


def reply_to(manager, line):
    """The reply to one request line, as a dict (a refusal names the field)."""
    try:
        return {"ok": True, **manager.handle(json.loads(line))}
    except json.JSONDecodeError as exc:
        return {"ok": False, "error": f"request: not JSON ({exc.msg} at column {exc.colno})"}
    except UnicodeDecodeError:
        return {"ok": False, "error": "request: not UTF-8"}
    except RequestError as exc:
        return {"ok": False, "error": str(exc).splitlines()[0]}


def serve_connection(manager, sock, rest):
    """Thread body for one client that passed the handshake: a reply to each line until it closes
    (the host keeps its connections, experiments/studies/zhou_brent/manager_client.py).

    `rest` is what it sent after its answer. A line longer than MAX_LINE_BYTES gets an error
    reply and the connection is closed."""
    data = rest
    try:
        with sock:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # a kept connection: no reply waits for an ACK
            while True:
                while b"\n" not in data:
                    if len(data) > MAX_LINE_BYTES:
                        sock.sendall(json.dumps({"ok": False, "error": f"request: longer than {MAX_LINE_BYTES} bytes"})
                                     .encode() + b"\n")
                        return
                    chunk = sock.recv(65536)
                    if not chunk:
                        return
                    data += chunk
                line, _, data = data.partition(b"\n")
                sock.sendall(json.dumps(reply_to(manager, line)).encode() + b"\n")
    except OSError:
        return  # the client went: nothing to answer


def main(argv=None):
    p = argparse.ArgumentParser(description="The local job manager of one workstation (Zhou & Brent).")
    p.add_argument("--name", required=True, help="this workstation's name, as the tables give it")
    p.add_argument("--host", default="0.0.0.0")
    p.add_argument("--port", type=int, default=7717, help="TCP port; 0 picks a free one")
    p.add_argument("--drift-ppm", type=float, default=0.0,
                   help="run this workstation's clock off the host's by this many parts per million")
    p.add_argument("--nice", type=int, default=-10,
                   help="niceness to ask for: a boundary must not wait behind the ranks it switches "
                        "(kept at the inherited one where the workstation may not raise priority)")
    a = p.parse_args(argv)
    try:
        secret = channel_auth.secret_from_env(name=channel_auth.TIMESHARE.secret_env)
    except ValueError as exc:
        p.error(str(exc))
    if secret is None:  # never serve unauthenticated: a request stops and continues processes
        p.error(f"{channel_auth.TIMESHARE.secret_env} is not set: the manager serves only peers that hold "
                f"the cluster's secret (experiments/studies/zhou_brent/cluster.py and host.py give it)")
    logging.basicConfig(level=logging.WARNING, format=f"timeshare manager {a.name}: %(message)s")
    try:
        os.setpriority(os.PRIO_PROCESS, 0, a.nice)
    except PermissionError:
        print(f"nice: may not set {a.nice}, running at {os.getpriority(os.PRIO_PROCESS, 0)}", file=sys.stderr)
    guardian = Guardian()  # fork before any thread starts

    def stop(_sig, _frame):
        raise SystemExit(0)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, stop)
    manager = Manager(a.name, a.drift_ppm, guardian, on_failure=lambda: os.kill(os.getpid(), signal.SIGTERM))
    gate = None
    try:
        listener = socket.create_server((a.host, a.port), backlog=64)

        def admitted(sock, rest):
            threading.Thread(target=serve_connection, args=(manager, sock, rest), daemon=True).start()

        gate = Gate(listener, secret, admitted, channel=channel_auth.TIMESHARE)
        manager.refusals = gate.refusals
        timer = threading.Thread(target=manager.run_timer, name="office-manager", daemon=True)
        timer.start()
        host, port = listener.getsockname()[:2]
        print(f"listening {host} {port}", flush=True)
        while gate.running:  # a signal ends it (SystemExit); so does a failed gate, by falling out
            time.sleep(0.2)
        print("server: the gate stopped", file=sys.stderr, flush=True)
        return 1
    finally:
        manager.release()
        if gate is not None:
            gate.close()
        guardian.close()


if __name__ == "__main__":
    raise SystemExit(main())
