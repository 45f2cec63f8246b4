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
table in force is the same: workloads/wire/timeshare_table.py, which both import).

This file is the daemon: its command line and its server. Beside it, copied with it, are
timeshare_office.py (`Manager`: the office, the table in force and the timer that stops and
continues by it), timeshare_requests.py (what a request may say) and timeshare_processes.py
(/proc, CPU time, and the guardian).

Runs inside a workstation (the image copies containers/agents/ whole):
    NOWLAB_CLUSTER_SECRET=<hex> python3 /opt/nowlab/agents/timeshare_manager.py --name ws1 --port 7717
Standard library, and workloads.channel_auth, workloads.control_gate and
workloads.wire.timeshare_table (standard library only themselves), found on the image's
PYTHONPATH (/opt/nowlab) in the workloads/ folder every workstation mounts; on the host,
experiments/studies/zhou_brent/host.py puts the repository on PYTHONPATH. It prints `listening HOST PORT` on stdout once it accepts requests (--port 0: any
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
import json
import logging
import os
import signal
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the sibling files, not a package
from timeshare_office import Manager  # noqa: E402
from timeshare_processes import Guardian  # noqa: E402
from timeshare_requests import RequestError  # noqa: E402
from workloads import channel_auth  # noqa: E402
from workloads.control_gate import Gate  # noqa: E402

MAX_LINE_BYTES = 1 << 20


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
