"""The local job manager (containers/agents/timeshare_manager.py) on real processes of this host, and its client.

The live tests start the manager on 127.0.0.1 and check in CPU-burning children as jobs; they
read what the kernel says (/proc/<pid>/stat: CPU time and state), not what the manager says.
"""
from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from experiments.studies.zhou_brent.host import AGENT, manager_env
from experiments.studies.zhou_brent.manager_client import ManagerClient, ManagerRefused, Watchdog, WireSlot
from workloads import channel_auth

SHARE_TOLERANCE = 0.15  # each job's CPU within 15 % of its half: the host is shared and noisy
CLK_TCK = os.sysconf("SC_CLK_TCK")


def load_agent():
    spec = importlib.util.spec_from_file_location("timeshare_manager_agent", AGENT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


agent = load_agent()
requests = sys.modules["timeshare_requests"]  # the agent's sibling files, on sys.path once it is loaded
office_module = sys.modules[agent.Manager.__module__]


# --- pure: what a table request may say ----------------------------------------------------------

@pytest.mark.parametrize("request_, field", [
    ({"round_s": 0.4, "slots": [{"job": "A", "parallel_s": 0.0, "sequential_s": 0.4}]}, "slots[0].parallel_s: β"),
    ({"round_s": 0.4, "slots": [{"job": "A", "parallel_s": 0.8}]}, "slots[0].parallel_s: β"),
    ({"round_s": 0.4, "slots": [{"job": "A", "parallel_s": 0.2}, {"job": "B", "parallel_s": 0.1}]}, "slots: widths add up"),
    ({"round_s": 0.4, "slots": [{"job": "A", "parallel_s": 0.2}, {"job": "C", "parallel_s": 0.2}]}, "slots[1].job: unknown job C"),
    ({"round_s": 0.4, "slots": [{"job": "A", "parallel_s": 0.2}, {"job": "A", "parallel_s": 0.2}]}, "slots[1].job: A has more"),
    ({"round_s": 0.4, "slots": [{"job": None, "parallel_s": 0.2, "sequential_s": 0.2}]}, "slots[0].parallel_s: a dummy"),
    ({"round_s": -1, "slots": [{"job": "A", "parallel_s": 0.2}]}, "round_s:"),
    ({"round_s": 0.4, "slots": [{"job": "A", "parallel": 0.4}]}, "slots[0].parallel: unknown field"),
    ({"round_s": 0.4, "workstation": "ws9", "slots": [{"job": "A", "parallel_s": 0.4}]}, "workstation:"),
])
def test_a_bad_table_is_refused_in_one_line_naming_the_field(request_, field):
    with pytest.raises(requests.RequestError) as err:
        requests.parse_table(request_, {"A", "B"}, "ws1")
    assert str(err.value).startswith(field)
    assert "\n" not in str(err.value)


# --- live: real processes on this host ----------------------------------------------------------

def stat(pid: int) -> tuple[str, float] | None:
    """(state, CPU seconds) from the kernel, None once the process is gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return None
    f = raw.rsplit(")", 1)[1].split()
    return f[0], (int(f[11]) + int(f[12])) / CLK_TCK


def wait_until(predicate, timeout_s: float, step_s: float = 0.02) -> bool:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(step_s)
    return predicate()


@dataclass
class Live:
    manager: subprocess.Popen
    client: ManagerClient
    burners: list[subprocess.Popen]
    guardian_pid: int | None


@pytest.fixture
def live() -> Iterator[Live]:
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    secret = channel_auth.new_secret()
    manager = subprocess.Popen([sys.executable, str(AGENT), "--name", "ws1", "--host", "127.0.0.1", "--port", "0"],
                               env=manager_env(secret), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    guardian_pid = None
    try:
        line = manager.stdout.readline()
        assert line.startswith("listening"), line + manager.stderr.read()
        client = ManagerClient("127.0.0.1", int(line.split()[2]), timeout_s=1.0, secret=secret)
        guardian_pid = client.status().guardian_pid
        yield Live(manager, client, burners, guardian_pid)
    finally:
        for p in burners:
            p.kill()
        if manager.poll() is None:
            manager.terminate()
        manager.wait(timeout=5)
        for p in burners:
            p.wait(timeout=5)
        if guardian_pid is not None:  # it leaves when the manager's pipe closes
            assert wait_until(lambda: stat(guardian_pid) is None or stat(guardian_pid)[0] == "Z", 5.0)


def two_jobs(live: Live) -> float:
    """A and B in slots of 0.2 s; returns when round 0 begins (a little after now)."""
    a, b = live.burners
    live.client.checkin("A", a.pid)
    live.client.checkin("B", b.pid)
    at_s = time.time() + 0.1
    live.client.table(0.4, [WireSlot("A", 0.2), WireSlot("B", 0.2)], at_s=at_s, workstation="ws1")
    return at_s


def sleep_until(t_s: float) -> None:
    time.sleep(max(0.0, t_s - time.time()))


def test_two_jobs_get_half_the_cpu_each_by_the_table_and_a_bad_table_leaves_it_in_force(live):
    at_s = two_jobs(live)
    sleep_until(at_s)
    before = [stat(p.pid)[1] for p in live.burners]
    sleep_until(at_s + 1.6)
    with pytest.raises(ManagerRefused) as err:
        live.client.table(0.4, [WireSlot("A", 0.2), WireSlot("C", 0.2)])
    assert str(err.value) == "slots[1].job: unknown job C (checked in: A, B)"
    sleep_until(at_s + 3.2)  # whole rounds, so each job had as many slots
    used = [stat(p.pid)[1] - b for p, b in zip(live.burners, before)]
    total = sum(used)
    print(f"CPU s of the two jobs over 8 rounds (3.2 s): {used}")
    for u in used:
        assert abs(u - total / 2) <= SHARE_TOLERANCE * total / 2, used
    status = live.client.status(timeline=True)
    assert status.round_s == 0.4 and set(status.jobs) == {"A", "B"}  # the old table still in force
    ran = [job for _, job in status.timeline[1:]]
    assert ran == [("A", "B")[i % 2] for i in range(len(ran))] or ran == [("B", "A")[i % 2] for i in range(len(ran))]
    assert status.switches >= 14  # 16 boundaries in 3.2 s, each a switch
    assert status.latency.count >= 10 and status.latency.max_s < 0.1
    print(f"switch latency: median {status.latency.median_s * 1e3:.2f} ms, max {status.latency.max_s * 1e3:.2f} ms;"
          f" manager CPU {status.cpu_s:.3f} s")


def test_a_replans_table_waits_for_its_boundary_then_takes_over(live):
    at_s = two_jobs(live)
    switch_s = at_s + 4 * 0.4  # a round boundary of the running table, about 1.7 s away
    assert live.client.table(0.4, [WireSlot("A", 0.4)], at_s=switch_s, workstation="ws1") == switch_s
    assert live.client.status().pending_at_s == switch_s
    sleep_until(at_s + 0.05)
    before = [stat(p.pid)[1] for p in live.burners]
    sleep_until(switch_s - 0.05)  # the old table still alternates A and B
    mid = [stat(p.pid)[1] for p in live.burners]
    sleep_until(switch_s + 1.2)  # the new one gives A every slot
    after = [stat(p.pid)[1] for p in live.burners]
    old = [m - b for m, b in zip(mid, before)]
    new = [a - m for a, m in zip(after, mid)]
    print(f"CPU s before the boundary {old}, after it {new}")
    assert min(old) > 0.3 * max(old), old
    assert new[1] <= 0.1 * new[0] and new[0] > 0.6, new
    status = live.client.status()
    assert status.pending_at_s is None and status.stopped == (live.burners[1].pid,)


def cpu_and_stops(pids: list[int], seconds: float) -> tuple[list[float], list[int]]:
    """CPU s each pid used over `seconds`, and how many of ~100 samples found each stopped."""
    before = [stat(p)[1] for p in pids]
    stopped = [0] * len(pids)
    end = time.time() + seconds
    while time.time() < end:
        for i, p in enumerate(pids):
            stopped[i] += stat(p)[0] == "T"
        time.sleep(seconds / 100)
    return [stat(p)[1] - b for p, b in zip(pids, before)], stopped


@pytest.mark.parametrize("policy", ["dedicated", "proper-share"])
def test_the_owners_run_by_the_local_policy(live, policy):
    job, owner = live.burners
    for proc in live.burners:  # one core for both, as in a workstation
        os.sched_setaffinity(proc.pid, {0})
    live.client.checkin("A", job.pid)
    live.client.checkin("@owners", owner.pid)
    with pytest.raises(ManagerRefused, match=r"^slots\[0\].job: @owners is the owners' name"):
        live.client.table(0.4, [WireSlot("@owners", 0.2, 0.2)])
    with pytest.raises(ManagerRefused, match=r"^policy: unknown 'fair'"):
        live.client.table(0.4, [WireSlot("A", 0.2, 0.2)], policy="fair")
    at_s = time.time() + 0.1
    # proper share at a cap of 0.5 core: the job's Δt_p of 0.2 s is 0.1 CPU s a slot
    live.client.table(0.4, [WireSlot("A", 0.2, 0.2)], at_s=at_s, workstation="ws1", policy=policy, cpu_cores=0.5)
    sleep_until(at_s)
    (job_cpu, owner_cpu), (job_stops, owner_stops) = cpu_and_stops([job.pid, owner.pid], 2.4)  # 6 rounds
    print(f"{policy}: job {job_cpu:.2f} CPU s, owner {owner_cpu:.2f} CPU s over 2.4 s; "
          f"stopped in {job_stops} and {owner_stops} of 100 samples")
    assert live.client.status().policy == policy
    if policy == "dedicated":  # the job alone in Δt_p, the owner alone in Δt_s: halves
        assert 30 <= owner_stops <= 70 and 30 <= job_stops <= 70
        assert job_cpu == pytest.approx(owner_cpu, rel=0.35)
    else:  # the owner never stopped; the job shares the core with it until it has had 0.1 CPU s, then stops
        assert owner_stops == 0 and 5 <= job_stops <= 80  # ~50 on an idle core: the job stops once it has had 0.1
        assert job_cpu == pytest.approx(6 * 0.1, rel=0.25)
        assert owner_cpu > 1.2 * job_cpu  # 2x on an idle core; the host is shared


def test_sigterm_continues_every_stopped_process(live):
    two_jobs(live)
    assert wait_until(lambda: any(stat(p.pid)[0] == "T" for p in live.burners), 1.0)
    live.manager.send_signal(signal.SIGTERM)
    assert live.manager.wait(timeout=5) == 0
    assert wait_until(lambda: all(stat(p.pid)[0] != "T" for p in live.burners), 1.0)
    time.sleep(0.3)  # nothing stops them after it has gone
    assert [stat(p.pid)[0] for p in live.burners] == ["R", "R"]


def test_after_sigkill_the_watchdog_reports_it_within_its_bound_and_the_guardian_continues_the_ranks(live):
    two_jobs(live)
    watchdog = Watchdog({"ws1": live.client}, poll_s=0.2, missed_polls=2)
    assert watchdog.poll() == []
    assert wait_until(lambda: any(stat(p.pid)[0] == "T" for p in live.burners), 1.0)
    dead, stop = [], threading.Event()
    thread = threading.Thread(target=watchdog.run, args=(stop, dead.append))
    thread.start()
    killed_s = time.monotonic()
    live.manager.kill()
    try:
        assert wait_until(lambda: bool(dead), watchdog.bound_s + 0.5)
    finally:
        stop.set()
        thread.join()
    assert [d.workstation for d in dead] == ["ws1"]
    assert dead[0].noticed_s - killed_s <= watchdog.bound_s
    # the manager could not clean up; its guardian saw the pipe close and continued what it held
    assert wait_until(lambda: all(stat(p.pid)[0] != "T" for p in live.burners), 1.0)
    assert watchdog.poll() == []  # reported once


def test_a_vanished_pid_is_dropped_and_a_checked_out_one_is_left_running(live):
    two_jobs(live)
    a, b = live.burners
    b.kill()
    b.wait()
    assert wait_until(lambda: ("B", b.pid) in live.client.status().dropped, 1.0)
    assert wait_until(lambda: stat(a.pid)[0] == "T", 1.0)  # B's slot is sequential time now: A is stopped in it
    live.client.checkout("A", a.pid)
    assert wait_until(lambda: stat(a.pid)[0] == "R", 0.5)
    time.sleep(0.5)
    assert stat(a.pid)[0] == "R" and live.client.status().jobs == {}


def test_bad_requests_get_one_line_naming_the_field(live):
    with pytest.raises(ManagerRefused, match=r"^pid: no live process"):
        live.client.checkin("A", 2 ** 22 + 12345)
    with pytest.raises(ManagerRefused, match=r"^round: no table"):
        live.client.sync(3, time.time())
    with pytest.raises(ManagerRefused, match=r"^op: unknown 'stop'"):
        live.client.request({"op": "stop"})


def test_sync_moves_the_boundaries_and_reports_the_correction(live):
    two_jobs(live)
    status = live.client.status()
    at_s = time.time() + 0.05
    correction_s = live.client.sync(100, at_s)
    assert live.client.status().syncs == 1 and status.syncs == 0
    # round 100 now begins at at_s, so A (slot 0) holds the CPU from at_s to at_s + 0.2
    time.sleep(max(0.0, at_s + 0.1 - time.time()))
    assert live.client.status().running == "A"
    assert isinstance(correction_s, float)


def test_a_drifting_clock_runs_off_the_hosts_by_its_rate():
    manager = agent.Manager("ws1", drift_ppm=100_000)  # 10 % fast: the skew studies' workstation clocks
    host_s, local_s = time.time(), manager.clock()
    time.sleep(0.2)
    gained_s = (manager.clock() - local_s) - (time.time() - host_s)
    assert gained_s == pytest.approx(0.02, abs=0.005)


def test_a_timer_that_fails_continues_what_it_stopped(monkeypatch):
    burner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    failed = threading.Event()
    manager = agent.Manager("ws1", on_failure=failed.set)
    timer = threading.Thread(target=manager.run_timer)
    try:
        manager.handle({"op": "checkin", "job": "A", "pid": burner.pid})
        manager.handle({"op": "table", "round_s": 0.8, "at": time.time() + 0.1,  # A's slot, then from at 0.6 s of dummy
                        "slots": [{"job": None, "sequential_s": 0.6}, {"job": "A", "parallel_s": 0.2}]})
        timer.start()
        assert wait_until(lambda: stat(burner.pid)[0] == "T", 1.0)

        def broken(*_args):
            raise RuntimeError("a bug in the office")

        monkeypatch.setattr(office_module, "dispatch_at", broken)
        with manager.cond:
            manager.cond.notify_all()  # wake the timer now, inside the dummy slot
        assert failed.wait(1.0)
        timer.join(timeout=1.0)
        assert stat(burner.pid)[0] != "T" and manager.failure == "timer: RuntimeError: a bug in the office"
    finally:
        manager.release()
        burner.kill()
        burner.wait()
