"""Host side of the resident pool (workloads.pool): a Launcher whose launches are `run` lines.

`PoolLauncher.mpirun_popen(hosts, argv)` has the meaning of mpiexec on `hosts`: rank i
of the job runs on hosts[i], the job's stdout comes back, and its handle reports the
exit code. It connects to one free pool rank per host (all first, so a dead rank is
found before any member waits in MPI_Comm_create_group), proves to each that it holds
the cluster's secret (workloads/channel_auth.py, channel POOL; in the handle's thread, so
a launch returns at once as before, and no member gets a `run` line unless every member
accepted), then sends each the same `run` line. Nothing here knows how the pool was
started: the testbed gives the ranks and the secret (testbed/pool.py) and a way to start a
new world when this one is gone, and, where the host cannot reach the ranks' addresses
directly (a Swarm overlay), a `connect` that reaches them another way (testbed's SSH
gateway: a socket-like channel with sendall, recv, settimeout, shutdown and close).
Runs on the host: standard library only.
"""
from __future__ import annotations

import itertools
import selectors
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from workloads import channel_auth
from workloads.host.launch import OUT_OF_MEMORY, Handle, Launcher, LocalResult
from workloads.wire import pool as pool_wire

CANCELLED = 130  # a member stopped because another one failed, or the host cancelled the job
LOST = -1        # the member's connection closed without an exit: its rank (and world) died

# (address, timeout_s) -> a connected socket, or something that behaves as one; OSError if unreachable
Connect = Callable[[tuple[str, int], float], Any]


def direct(address: tuple[str, int], timeout_s: float) -> socket.socket:
    """A plain TCP connection, Nagle off (the `run` and `cancel` lines are small and urgent)."""
    sock = socket.create_connection(address, timeout=timeout_s)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


@dataclass(frozen=True)
class PoolRank:
    """One resident rank: where it listens and who it is in the pool's world."""

    host: str
    slot: int
    rank: int
    address: tuple[str, int]


def ping(address: tuple[str, int], secret: bytes, timeout_s: float = 2.0, connect: Connect = direct) -> dict:
    """One rank's pong; OSError if it does not answer (channel_auth.Refused if it does not take `secret`)."""
    with connect(address, timeout_s) as sock:
        rest = channel_auth.client_handshake(sock, secret, channel=channel_auth.POOL, timeout_s=timeout_s)
        sock.sendall(pool_wire.encode({"type": "ping"}))
        reply = pool_wire.Lines(sock, rest).read()
    if reply is None or reply["type"] != "pong":
        raise ConnectionError(f"{address[0]}:{address[1]}: no pong (got {reply!r})")
    return reply


def module_argv(argv: Sequence[str]) -> list[str]:
    """`python3 -m MODULE ARGS` as the pool's `MODULE ARGS`."""
    argv = list(argv)
    if not is_module_argv(argv):
        raise ValueError(f"argv: the pool runs `python3 -m MODULE ...` programs, got {' '.join(argv[:3])!r}")
    return argv[2:]


class PoolHandle:
    """One job on the pool, from its `run` lines to every member's exit (the Handle protocol)."""

    def __init__(self, members: Sequence[PoolRank], argv: Sequence[str], env: dict[str, str] | None,
                 tag: int, *, secret: bytes, connect_timeout_s: float, on_exit: Callable[["PoolHandle"], None],
                 handshake_timeout_s: float | None = None, oom_kills: Callable[[str], int] | None = None,
                 connect: Connect = direct) -> None:
        self.members = list(members)
        self.on_exit = on_exit
        # each member's count of memory kills before the job: one more after it failed means
        # the kernel killed its rank at the workstation's memory limit
        self._oom_kills = oom_kills
        self._oom_before = {m.host: oom_kills(m.host) for m in self.members} if oom_kills else {}
        self.codes: list[int | None] = [None] * len(self.members)
        self.stdout = [""] * len(self.members)
        self.stderr = [""] * len(self.members)
        self.started_at: list[float | None] = [None] * len(self.members)
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._sent = False       # the `run` lines are out: a cancel is a `cancel` line from then on
        self._cancelled = False  # terminate() came before them: they are never sent
        socks: list[Any] = []
        try:
            for m in self.members:
                socks.append(connect(m.address, connect_timeout_s))
        except OSError as exc:
            for sock in socks:
                sock.close()
            raise ConnectionError(f"pool rank on {m.host} (slot {m.slot}) does not answer: {exc}") from exc
        self.socks = socks
        self._line = pool_wire.encode({"type": "run", "argv": list(argv), "env": dict(env or {}),
                                       "members": [m.rank for m in self.members], "tag": tag})
        threading.Thread(target=self._run, args=(secret, handshake_timeout_s), daemon=True,
                         name=f"nowlab-pool-{self.members[0].host}").start()

    def _run(self, secret: bytes, handshake_timeout_s: float | None) -> None:
        """Handshakes, `run` lines, then each member's report; closes and calls on_exit at the end."""
        rests = self._handshake(secret, handshake_timeout_s)
        if rests is not None and self._send_run_lines():
            self._read_reports(rests)
        for sock in self.socks:
            sock.close()
        self._done.set()
        self.on_exit(self)

    def _send_run_lines(self) -> bool:
        """Every member's `run` line, unless terminate() came first (then False: all cancelled)."""
        with self._lock:
            if self._cancelled:
                self.codes = [CANCELLED] * len(self.members)
                return False
            for sock in self.socks:
                sock.settimeout(None)
                try:
                    sock.sendall(self._line)
                except OSError:
                    pass  # that rank has gone: its reader finds the connection closed
            self._sent = True
            return True

    def _handshake(self, secret: bytes, timeout_s: float | None) -> list[bytes] | None:
        """Prove the cluster's secret to every member: each challenge answered before any acceptance
        is awaited, so it takes the slowest member's time, not the sum. What each member sent
        after its `ok`; None if one failed (its reason kept, the others cancelled: none got a line)."""
        deadline = channel_auth.deadline_after(timeout_s)
        i = 0
        try:
            for i, sock in enumerate(self.socks):
                channel_auth.answer_challenge(sock, secret, deadline, channel=channel_auth.POOL)
            rests = []
            for i, sock in enumerate(self.socks):
                rests.append(channel_auth.await_acceptance(sock, deadline, channel=channel_auth.POOL))
            return rests
        except OSError as exc:  # channel_auth.AuthError is one
            with self._lock:
                self.codes = [CANCELLED] * len(self.members)
                if not self._cancelled:
                    # refused: not the cluster's secret, a failed job; anything else: the rank went
                    self.codes[i] = 1 if isinstance(exc, channel_auth.Refused) else LOST
                    self.stderr[i] = f"{self.members[i].host}: pool handshake failed: {exc}\n"
            return None

    def _read_reports(self, rests: list[bytes]) -> None:
        """Every member's messages until each has reported its exit or gone, read in this one
        thread through a selector over the members' connections: one thread per job rather than
        one per member, which at 1,024 workstations was a thousand threads more (docs/scale.md)."""
        pending = list(rests)  # each member's bytes not yet a whole line (what came with its `ok` first)

        def take(i: int, chunk: bytes) -> bool:
            """Feed member i's bytes; True once it is finished (reported, or its connection failed)."""
            *lines, pending[i] = (pending[i] + chunk).split(b"\n")
            try:
                for line in lines:
                    got = self._on_message(i, pool_wire.decode(line))
                    if got is not None:
                        self._finish(i, *got)
                        return True
                if len(pending[i]) > pool_wire.MAX_LINE_BYTES:
                    raise pool_wire.WireError("line: longer than 4 MiB")
            except pool_wire.WireError as exc:
                self._finish(i, LOST, "", f"{self.members[i].host}: {exc}\n")
                return True
            return False

        with selectors.DefaultSelector() as sel:
            for i, sock in enumerate(self.socks):
                if not take(i, b""):
                    sel.register(sock, selectors.EVENT_READ, i)
            while sel.get_map():
                for key, _events in sel.select():
                    i = key.data
                    try:
                        chunk = self.socks[i].recv(65536)
                    except OSError as exc:
                        self._finish(i, LOST, "", f"{self.members[i].host}: {exc}\n")
                        sel.unregister(key.fileobj)
                        continue
                    if not chunk:  # closed without an exit: its rank (and world) died
                        self._finish(i, LOST, "", f"{self.members[i].host}: the pool rank closed without an exit\n")
                        sel.unregister(key.fileobj)
                    elif take(i, chunk):
                        sel.unregister(key.fileobj)

    def _on_message(self, i: int, message: dict[str, Any]) -> tuple[int, str, str] | None:
        """Member i's message: its (code, stdout, stderr) if it ends the member, else None."""
        if message["type"] == "started":
            self.started_at[i] = time.time()
        elif message["type"] == "exit":
            return int(message["code"]), message.get("stdout", ""), message.get("stderr", "")
        elif message["type"] == "error":
            return 1, "", f"{self.members[i].host}: {message.get('error')}\n"
        return None

    def _finish(self, i: int, code: int, out: str, err: str) -> None:
        if code not in (0, CANCELLED) and self.out_of_memory(i, err):
            sep = "" if not err or err.endswith("\n") else "\n"
            err = f"{err}{sep}{OUT_OF_MEMORY}{self.members[i].host}\n"  # last: the executor keeps the tail
        with self._lock:
            self.codes[i], self.stdout[i], self.stderr[i] = code, out, err
        if code not in (0, CANCELLED):
            self.terminate()  # the others would wait for this one forever

    def out_of_memory(self, i: int, err: str) -> bool:
        """Member i failed for memory: the kernel killed a process at its workstation's limit
        since the job started, or Python could not allocate (MemoryError)."""
        if "MemoryError" in err:
            return True
        host = self.members[i].host
        return self._oom_kills is not None and self._oom_kills(host) > self._oom_before.get(host, 0)

    @property
    def exit_code(self) -> int:
        failed = [c for c in self.codes if c not in (0, None)]
        real = [c for c in failed if c != CANCELLED]
        return (real or failed or [0])[0]

    def poll(self) -> int | None:
        return self.exit_code if self._done.is_set() else None

    def wait(self, timeout: float | None = None) -> LocalResult:
        if not self._done.wait(timeout):
            raise TimeoutError(f"pool job on {', '.join(m.host for m in self.members)} still running after {timeout} s")
        err = "".join(f"[{m.host}] {line}\n" for m, text in zip(self.members, self.stderr)
                      for line in text.splitlines())
        return LocalResult(self.exit_code, "".join(self.stdout), err)

    def output(self) -> str:
        with self._lock:
            return "".join(self.stdout)

    def terminate(self) -> None:
        """Cancel the members still running: each leaves at its next MPI wait. Before the `run`
        lines are out, none is sent, and a handshake still waiting is cut short."""
        with self._lock:
            if not self._sent:
                self._cancelled = True
                for sock in self.socks:
                    try:
                        sock.shutdown(socket.SHUT_RDWR)  # wakes a recv that close() would not
                    except OSError:
                        pass
                return
            running = [sock for sock, code in zip(self.socks, self.codes) if code is None]
        line = pool_wire.encode({"type": "cancel"})
        for sock in running:
            try:
                sock.sendall(line)
            except OSError:
                pass  # that member has gone already


class FailedLaunch:
    """A launch that could not reach its ranks, reported as mpiexec would: an exit code, at once.

    The executor then fails the job (and the runner looks for a dead workstation), instead
    of the launch raising in the middle of a scheduling decision."""

    def __init__(self, hosts: Sequence[str], reason: str) -> None:
        self.hosts = list(hosts)
        self.stderr = "".join(f"[{h}] {reason}\n" for h in self.hosts[:1])
        self.exit_code = LOST

    def poll(self) -> int:
        return self.exit_code

    def wait(self, timeout: float | None = None) -> LocalResult:
        return LocalResult(self.exit_code, "", self.stderr)

    def output(self) -> str:
        return ""

    def terminate(self) -> None:
        pass


def is_module_argv(argv: Sequence[str]) -> bool:
    return len(argv) >= 3 and argv[0] == "python3" and argv[1] == "-m"


class PoolLauncher:
    """Jobs on resident ranks: one free slot per listed host, lowest slot first.

    Anything but a `python3 -m MODULE` program goes to `fallback` (mpiexec), if given.
    """

    def __init__(self, ranks: Sequence[PoolRank], *, secret: bytes,
                 renew: Callable[[], Sequence[PoolRank]] | None = None,
                 fallback: Launcher | None = None, connect_timeout_s: float = 5.0,
                 handshake_timeout_s: float | None = None,
                 busy_wait_s: float = 15.0, oom_kills: Callable[[str], int] | None = None,
                 connect: Connect = direct) -> None:
        self.secret = secret  # the cluster's (NOWLAB_CLUSTER_SECRET): the ranks serve no one else
        # None: a member starved or frozen by its owner is waited for, as its `run` line was
        # before the handshake; the launch itself returns at once either way
        self.handshake_timeout_s = handshake_timeout_s
        self._renew = renew
        self._oom_kills = oom_kills  # workstation -> memory kills so far (testbed: the cgroup's count)
        self.fallback = fallback
        self.connect_timeout_s = connect_timeout_s
        self.connect = connect
        # A slot stays busy until its job's every member has reported; after a workstation died
        # the others report (their world ended) a few seconds later: wait that long for them.
        self.busy_wait_s = busy_wait_s
        self._lock = threading.Condition()
        self._busy: set[tuple[str, int]] = set()
        self._tags = itertools.count(1)
        self._generation = 0
        self._set_ranks(ranks)

    def _set_ranks(self, ranks: Sequence[PoolRank]) -> None:
        self.ranks: dict[str, list[PoolRank]] = {}
        for r in sorted(ranks, key=lambda r: (r.host, r.slot)):
            self.ranks.setdefault(r.host, []).append(r)

    def _claim(self, hosts: Sequence[str]) -> list[PoolRank]:
        if len(set(hosts)) != len(hosts):
            raise ValueError(f"hosts: list each workstation once (got {', '.join(hosts)})")
        chosen = []
        for h in hosts:
            if h not in self.ranks:
                raise ValueError(f"hosts: {h} has no pool rank (pool: {', '.join(self.ranks)})")
            free = [r for r in self.ranks[h] if (h, r.slot) not in self._busy]
            if not free:
                raise RuntimeError(f"{h}: all {len(self.ranks[h])} pool slots are busy")
            chosen.append(free[0])
        self._busy.update((r.host, r.slot) for r in chosen)
        return chosen

    def _release(self, handle: PoolHandle, generation: int) -> None:
        with self._lock:
            if generation != self._generation:
                return  # a job of a world restart() replaced: its slots are not this world's
            self._busy.difference_update((m.host, m.slot) for m in handle.members)
            self._lock.notify_all()

    def _claim_waiting(self, hosts: list[str]) -> list[PoolRank]:
        """_claim, waiting up to busy_wait_s for busy slots to be released (call with the lock held)."""
        deadline = time.monotonic() + self.busy_wait_s
        while True:
            try:
                return self._claim(hosts)
            except RuntimeError:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise
                self._lock.wait(min(left, 0.5))

    def _drained(self) -> bool:
        """Wait (lock held) up to busy_wait_s for every slot to be released; True if all were."""
        deadline = time.monotonic() + self.busy_wait_s
        while self._busy and time.monotonic() < deadline:
            self._lock.wait(0.5)
        return not self._busy

    def _new_world(self) -> None:
        """(lock held) Replace the world: its slots all free, late releases of the old one ignored."""
        self._busy.clear()
        self._generation += 1
        self._set_ranks(self._renew())

    def _open(self, members: list[PoolRank], program: list[str], env: dict[str, str] | None, tag: int,
              generation: int) -> PoolHandle:
        """The job's handle; on ConnectionError its slots are released first."""
        try:
            return PoolHandle(members, program, env, tag, secret=self.secret, connect_timeout_s=self.connect_timeout_s,
                              handshake_timeout_s=self.handshake_timeout_s,
                              on_exit=lambda h: self._release(h, generation), oom_kills=self._oom_kills,
                              connect=self.connect)
        except ConnectionError:
            with self._lock:
                self._busy.difference_update((m.host, m.slot) for m in members)
            raise

    def restart(self) -> None:
        """A new world, once the jobs still running on this one have reported.

        After a workstation died, a rank that shared a job with it may still hold traffic
        for it, and Open MPI aborts that rank's whole process when the send fails (a job
        on ws1 and ws2 was cancelled, and ws1's rank died in the next job it ran).
        """
        if self._renew is None:
            raise RuntimeError("this pool cannot start a new world (no renew given)")
        with self._lock:
            self._drained()  # what is still busy then hangs on the dead rank: the new world kills it
            self._new_world()

    def mpirun_popen(self, hosts: Sequence[str], argv: Sequence[str], *,
                     env: dict[str, str] | None = None) -> Handle:
        if self.fallback is not None and not is_module_argv(argv):
            return self.fallback.mpirun_popen(hosts, argv, env=env)
        program = module_argv(argv)
        with self._lock:
            members = self._claim_waiting(list(hosts))
            tag = next(self._tags) % 32000 + 1
            generation = self._generation
        try:
            return self._open(members, program, env, tag, generation)
        except ConnectionError as exc:
            with self._lock:
                # the dead world's jobs still report; if some go on running, the world is not
                # dead, one rank is
                if self._renew is None or not self._drained():
                    return FailedLaunch(hosts, str(exc))
                self._new_world()
                generation = self._generation
                gone = [h for h in hosts if h not in self.ranks]
                if gone:  # its workstation died with the old world
                    return FailedLaunch(hosts, f"{gone[0]}: no pool rank in the new world (pool: {', '.join(self.ranks)})")
                members = self._claim(list(hosts))
        try:
            return self._open(members, program, env, tag, generation)
        except ConnectionError as again:
            return FailedLaunch(hosts, str(again))
