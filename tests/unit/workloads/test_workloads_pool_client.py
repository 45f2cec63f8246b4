"""The pool launcher's bookkeeping without MPI: a launch that cannot reach its ranks."""
from __future__ import annotations

import queue
import socket
import threading
import time

from workloads import channel_auth
from workloads.control_gate import Gate
from workloads.host.pool_client import LOST, PoolLauncher, PoolRank
from workloads.wire import pool as pool_wire

HELLO = ["python3", "-m", "workloads.hello"]
SECRET = channel_auth.new_secret()  # the cluster's, as these stand-in ranks hold it


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens once it is closed


def test_a_launch_on_a_workstation_gone_with_its_world_fails_like_mpiexec_would():
    dead = PoolRank("ws2", 0, 1, ("127.0.0.1", closed_port()))
    renewed: list[int] = []

    def renew():
        renewed.append(1)
        return []  # the new world spans the running workstations: ws2 is not one

    launcher = PoolLauncher([dead], secret=SECRET, renew=renew, connect_timeout_s=1.0, busy_wait_s=0.0)
    handle = launcher.mpirun_popen(["ws2"], HELLO)
    assert renewed == [1]
    assert handle.poll() == LOST
    res = handle.wait(1)
    assert res.exit_code == LOST and "ws2: no pool rank in the new world" in res.stderr


def test_without_a_way_to_renew_the_launch_fails_and_the_slot_is_free_again():
    dead = PoolRank("ws1", 0, 0, ("127.0.0.1", closed_port()))
    launcher = PoolLauncher([dead], secret=SECRET, connect_timeout_s=1.0, busy_wait_s=0.0)
    for _ in range(2):  # the failed launch released its slot: the second one is not refused as busy
        res = launcher.mpirun_popen(["ws1"], HELLO).wait(1)
        assert res.exit_code == LOST and "does not answer" in res.stderr


def a_rank_that_dies_after(reply: bytes, die: threading.Event | None = None) -> int:
    """A one-job 'rank' on localhost behind the pool's gate: reads the run line, sends `reply`,
    closes when `die` is set (at once without one), as a rank the kernel killed does."""
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    admitted: queue.SimpleQueue = queue.SimpleQueue()
    gate = Gate(server, SECRET, lambda sock, rest: admitted.put((sock, rest)), channel=channel_auth.POOL)

    def serve():
        conn, rest = admitted.get(timeout=10)
        with conn:
            assert pool_wire.Lines(conn, rest).read()["type"] == "run"
            conn.sendall(reply)
            if die is not None:
                die.wait(5)
        gate.close()

    threading.Thread(target=serve, daemon=True).start()
    return port


def test_a_rank_killed_at_its_memory_limit_fails_the_job_as_out_of_memory():
    kills = {"ws3": 4}  # the workstation's count of memory kills, as the cgroup keeps it
    die = threading.Event()
    port = a_rank_that_dies_after(b'{"type": "started", "at": 0}\n', die)
    launcher = PoolLauncher([PoolRank("ws3", 0, 0, ("127.0.0.1", port))], secret=SECRET, oom_kills=lambda ws: kills[ws],
                            connect_timeout_s=1.0, busy_wait_s=0.0)
    handle = launcher.mpirun_popen(["ws3"], HELLO)
    kills["ws3"] += 1  # the kernel kills the rank while the job runs
    die.set()
    res = handle.wait(5)
    assert res.exit_code == LOST
    assert res.stderr.splitlines()[-1] == "[ws3] out of memory on ws3"


def test_a_rank_lost_for_another_reason_is_not_called_out_of_memory():
    port = a_rank_that_dies_after(b'{"type": "started", "at": 0}\n')
    launcher = PoolLauncher([PoolRank("ws3", 0, 0, ("127.0.0.1", port))], secret=SECRET, oom_kills=lambda ws: 4,
                            connect_timeout_s=1.0, busy_wait_s=0.0)
    res = launcher.mpirun_popen(["ws3"], HELLO).wait(5)
    assert res.exit_code == LOST and "out of memory" not in res.stderr


def test_a_memory_error_in_the_job_is_out_of_memory_too():
    port = a_rank_that_dies_after(b'{"type": "exit", "code": 1, "stdout": "", "stderr": "MemoryError: ..."}\n')
    launcher = PoolLauncher([PoolRank("ws1", 0, 0, ("127.0.0.1", port))], secret=SECRET, connect_timeout_s=1.0,
                            busy_wait_s=0.0)
    res = launcher.mpirun_popen(["ws1"], HELLO).wait(5)
    assert res.exit_code == 1 and res.stderr.splitlines()[-1] == "[ws1] out of memory on ws1"


def a_rank(talk) -> int:
    """A one-job stand-in rank behind the pool's gate: reads the run line, then `talk(conn, lines)`."""
    server = socket.create_server(("127.0.0.1", 0))
    admitted: queue.SimpleQueue = queue.SimpleQueue()
    gate = Gate(server, SECRET, lambda sock, rest: admitted.put((sock, rest)), channel=channel_auth.POOL)

    def serve():
        conn, rest = admitted.get(timeout=10)
        with conn:
            lines = pool_wire.Lines(conn, rest)
            assert lines.read()["type"] == "run"
            talk(conn, lines)
        gate.close()

    threading.Thread(target=serve, daemon=True).start()
    return server.getsockname()[1]


def test_one_thread_reads_every_members_reports_even_split_across_packets():
    """A job's members are read by one selector in the job's thread, not a thread each; an exit
    line that arrives in pieces (1 MB of output) is put together, and stdout keeps member order."""
    go = threading.Event()

    def talk(k):
        def run(conn, _lines):
            conn.sendall(b'{"type": "started"}\n')
            go.wait(10)
            line = pool_wire.encode({"type": "exit", "code": 0, "stdout": f"m{k}:" + "x" * (1 << 20 if k == 2 else 3),
                                     "stderr": ""})
            for piece in (line[:7], line[7:70_000], line[70_000:]):
                conn.sendall(piece)
                time.sleep(0.02)
        return run

    ranks = [PoolRank(f"ws{k}", 0, k, ("127.0.0.1", a_rank(talk(k)))) for k in range(4)]
    launcher = PoolLauncher(ranks, secret=SECRET, connect_timeout_s=1.0, busy_wait_s=0.0)
    handle = launcher.mpirun_popen([r.host for r in ranks], HELLO)
    deadline = time.monotonic() + 5
    while None in handle.started_at and time.monotonic() < deadline:
        time.sleep(0.01)
    readers = [t for t in threading.enumerate() if t.name.startswith("nowlab-pool-ws")]  # the job's, named by its first host
    go.set()
    res = handle.wait(10)
    assert len(readers) == 1 and None not in handle.started_at
    assert res.exit_code == 0, res.stderr
    assert [part[:3] for part in res.stdout.split("m")[1:]] == ["0:x", "1:x", "2:x", "3:x"]
    assert len(res.stdout) == 4 * len("m0:") + 3 * 3 + (1 << 20)


def test_a_member_that_fails_cancels_the_others_and_one_that_sends_junk_is_lost():
    cancelled: queue.SimpleQueue = queue.SimpleQueue()

    def fails(conn, _lines):
        conn.sendall(b'{"type": "exit", "code": 3, "stdout": "", "stderr": "boom"}\n')

    def waits(conn, lines):
        cancelled.put(lines.read()["type"])  # the host's cancel, sent when the other member failed
        conn.sendall(b'{"type": "exit", "code": 130, "stdout": "", "stderr": ""}\n')

    ranks = [PoolRank("ws1", 0, 0, ("127.0.0.1", a_rank(waits))), PoolRank("ws2", 0, 1, ("127.0.0.1", a_rank(fails)))]
    res = PoolLauncher(ranks, secret=SECRET, connect_timeout_s=1.0, busy_wait_s=0.0).mpirun_popen(
        ["ws1", "ws2"], HELLO).wait(10)
    assert res.exit_code == 3 and cancelled.get(timeout=5) == "cancel" and "[ws2] boom" in res.stderr

    def junk(conn, _lines):
        conn.sendall(b'{"type": "started"}\nnot json\n')

    res = PoolLauncher([PoolRank("ws1", 0, 0, ("127.0.0.1", a_rank(junk)))], secret=SECRET, connect_timeout_s=1.0,
                       busy_wait_s=0.0).mpirun_popen(["ws1"], HELLO).wait(10)
    assert res.exit_code == LOST and "not JSON" in res.stderr
