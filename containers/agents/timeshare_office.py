"""The local job manager's registration office and its office manager's timer (containers/agents/timeshare_manager.py).

`Manager` keeps the table in force (and a pending one, and the resyncs), and at every slot
boundary stops and continues the checked-in jobs' processes by it: which slot holds a time is
workloads/wire/timeshare_table.py's `dispatch_at`, the arithmetic scheduler/timeshare/office.py
follows too. What a request may say is timeshare_requests.py; the processes, timeshare_processes.py.
"""
import collections
import math
import os
import signal
import sys
import threading
import time

# sibling files, not a package: timeshare_manager.py puts their folder on sys.path
from timeshare_processes import all_processes, cap_cores, descendants, proc_stat, tree_cpu_s
from timeshare_requests import OWNERS, RequestError, parse_policy, parse_table
from workloads.wire.timeshare_table import dispatch_at

BUDGET_POLL_MIN_S = 0.01  # proper share: the shortest wait between looks at a job's CPU use
LATENCIES_KEPT = 10_000
TIMELINE_KEPT = 10_000


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
