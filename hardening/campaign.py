"""A fault campaign: one small live experiment per fault, the fault injected mid-run, and what it cost.

Issue 19 asks what a crash in the middle of a long run costs. Each fault here runs the same
small experiment (`nowlab run`, a separate process, as a user would), waits until a job is
running on the victim workstation, injects the fault, brings the run back the way a user
would (unpause, uncut, restart the engine, free the disk, `--resume`), and reads the results
store at the end. Per fault:

- lost: jobs stored as finished when the fault hit that are not finished at the end (target 0);
- duplicated: jobs launched again after they were stored as finished (target 0; the store's
  key (cell, job) keeps one row, so a re-run would only show in the segments' physical runs);
- detect_s: injection to the first sign the run saw it (a failed job stored, a cell marked
  interrupted, or the runner exiting); None when nothing noticed (the run absorbed it);
- recover_s: injection to the first job finished after it;
- leftovers: what `nowlab gc` leaves labelled for the campaign's cluster, and runners still up.

The injections act from outside nowlab, as the fault would: the Docker CLI for the
engine's view (kill, pause), `tc` inside the container for a cut link, signals for the
runner and the engine, a full filesystem under the results file.
"""
from __future__ import annotations

import io
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pandas as pd

from experiments.store import ResultsStore
from scheduler.jobs import Outcome

FAULTS = ("kill-workstation", "freeze-workstation", "cut-link", "restart-dockerd", "disk-full",
          "kill-runner", "flood-channel")
SHORT = ("kill-workstation", "kill-runner")  # the test command's short mode
VICTIM = "ws2"
CUT_DEVICE = "nlcut0"  # the ifb a cut link's packets are sent to, left down so it drops them
NOWLAB = str(Path(sys.executable).parent / "nowlab")
LABEL = "nowlab.cluster"


@dataclass
class FaultResult:
    fault: str
    lost: int | None = None
    duplicated: int | None = None
    detect_s: float | None = None
    recover_s: float | None = None
    leftovers: list[str] = field(default_factory=list)
    jobs: int = 0  # stored at the end
    failed: int = 0  # of which failed (the victim's, as a killed workstation should)
    refused_outside: int = 0  # control-channel connections refused for their address (the runner's log)
    refused_handshake: int = 0  # ... and refused at the handshake: a wrong or missing HMAC
    note: str = ""

    def row(self) -> dict:
        return asdict(self)


@dataclass
class Campaign:
    """Where and what to run: the experiment config, its cluster's name, a folder for the stores."""

    config: Path
    cluster: str
    workdir: Path
    hold_s: float = 30.0  # how long a freeze or a cut link lasts
    timeout_s: float = 900.0
    log: Callable[[str], None] = print

    def run(self, faults: tuple[str, ...] = FAULTS) -> list[FaultResult]:
        unknown = sorted(set(faults) - set(FAULTS))
        if unknown:
            raise ValueError(f"faults: unknown {', '.join(unknown)} (known: {', '.join(FAULTS)})")
        self.workdir.mkdir(parents=True, exist_ok=True)
        return [self.one(f) for f in faults]

    # -- one fault ----------------------------------------------------------------------------
    def one(self, fault: str) -> FaultResult:
        result = FaultResult(fault)
        disk = self.workdir / f"{fault}-disk" if fault == "disk-full" else None
        if disk is not None:
            mount_small_disk(disk)
        out = (disk or self.workdir) / f"{fault}.sqlite"
        for stale in (out, out.with_name(out.name + "-wal"), out.with_name(out.name + "-shm")):
            stale.unlink(missing_ok=True)
        runner = Runner(self.config, out)
        try:
            self.log(f"{fault}: starting the run")
            runner.start()
            wait_until(lambda: stored(out)[0] >= 1, runner, self.timeout_s, "a stored job")
            wait_until(lambda: job_running_on(self.container(VICTIM)), runner, self.timeout_s, f"a job on {VICTIM}")
            done_before = done_jobs(out)
            count_before = len(done_before)
            t0 = time.monotonic()
            self.log(f"{fault}: injecting ({count_before} jobs done)")
            undo = self.inject(fault, runner, out)
            detect = Watch(out, runner, t0, count_before)
            detect.start()
            if undo is not None:
                time.sleep(self.hold_s)
                undo()
            if runner.wait_exit(self.timeout_s) != 0:  # the run stopped: a user resumes it
                self.log(f"{fault}: the runner stopped ({runner.tail()}); resuming")
                runner = Runner(self.config, out, resume=True)
                runner.start()
                detect.runner = runner
                if runner.wait_exit(self.timeout_s) != 0:
                    result.note = f"resume failed: {runner.tail()}"
            detect.stop()
            result.detect_s, result.recover_s = detect.detected_s, detect.recovered_s
            after = done_jobs(out)
            result.lost = len(done_before - after)
            result.duplicated = rerun_after_done(out)
            result.jobs, result.failed = stored(out)
            result.refused_outside, result.refused_handshake = refusals(*Runner.log_paths(out))
        except (TimeoutError, RuntimeError, OSError, subprocess.SubprocessError) as exc:
            result.note = f"{type(exc).__name__}: {exc}"
            runner.kill()
        finally:
            if disk is not None:
                unmount(disk)
        result.leftovers = self.gc()
        self.log(f"{fault}: {result.row()}")
        return result

    def container(self, ws: str) -> str:
        return f"nowlab-{self.cluster}-{ws}"

    def inject(self, fault: str, runner: "Runner", out: Path) -> Callable[[], None] | None:
        """Do the fault; returns what undoes it after hold_s (None: nothing to undo)."""
        victim = self.container(VICTIM)
        if fault == "kill-workstation":
            docker("kill", victim)
            return None
        if fault == "freeze-workstation":
            docker("pause", victim)
            return lambda: docker("unpause", victim, gone_ok=True)  # the run may have taken it as lost
        if fault == "cut-link":
            # Every packet arriving at the victim is redirected (tc ingress, u32 match all, mirred) to
            # an ifb device left down, which drops it: this kernel has no gact module for
            # `action drop`. The shaping's egress filters are untouched; its TCP connections stall
            # both ways. Undone by deleting the ingress qdisc and the device.
            docker("exec", victim, "ip", "link", "add", CUT_DEVICE, "type", "ifb")
            docker("exec", victim, "tc", "qdisc", "add", "dev", "eth0", "ingress")
            docker("exec", victim, "tc", "filter", "add", "dev", "eth0", "parent", "ffff:", "protocol", "all",
                   "prio", "1", "u32", "match", "u32", "0", "0", "action", "mirred", "egress", "redirect",
                   "dev", CUT_DEVICE)

            def reconnect() -> None:
                docker("exec", victim, "tc", "qdisc", "del", "dev", "eth0", "ingress", gone_ok=True)
                docker("exec", victim, "ip", "link", "del", CUT_DEVICE, gone_ok=True)
            return reconnect
        if fault == "restart-dockerd":
            restart_dockerd()
            return None
        if fault == "disk-full":
            filler = out.parent / "filler"
            fill(filler)
            return lambda: filler.unlink(missing_ok=True)
        if fault == "kill-runner":
            runner.kill()
            return None
        if fault == "flood-channel":
            address = runner.control_address()
            stop = threading.Event()
            threads = [threading.Thread(target=flood, args=(address, stop), daemon=True) for _ in range(8)]
            for t in threads:
                t.start()
            # and from inside the cluster, where the network check lets it through to the handshake
            docker("exec", "-d", victim, "python3", "-c", FLOOD_FROM_INSIDE, address[0], str(address[1]),
                   str(self.hold_s))
            return lambda: (stop.set(), [t.join(5) for t in threads])
        raise ValueError(f"fault: unknown {fault!r}")

    def gc(self) -> list[str]:
        """`nowlab gc --all`, then what is still labelled for the cluster, and runners still up."""
        subprocess.run([NOWLAB, "gc", "--all"], capture_output=True, text=True, timeout=300)
        flt = ["--filter", f"label={LABEL}={self.cluster}"]
        left = []
        for kind, argv in (("container", ["docker", "ps", "-a", "-q", *flt]),
                           ("network", ["docker", "network", "ls", "-q", *flt])):
            ids = subprocess.run(argv, capture_output=True, text=True, timeout=60).stdout.split()
            left += [f"{kind} {i}" for i in ids]
        runners = subprocess.run(["pgrep", "-f", f"nowlab run .*{self.workdir}"], capture_output=True, text=True)
        left += [f"runner pid {p}" for p in runners.stdout.split()]
        return left


# -- the run under test ------------------------------------------------------------------------
class Runner:
    """`nowlab run CONFIG --out OUT` (or `--resume --out OUT`) as its own process group."""

    def __init__(self, config: Path, out: Path, resume: bool = False) -> None:
        self.argv = [NOWLAB, "run", "--resume", "--out", str(out)] if resume else [NOWLAB, "run", str(config), "--out", str(out)]
        self.log_path = self.log_paths(out)[1 if resume else 0]
        self.proc: subprocess.Popen | None = None

    @staticmethod
    def log_paths(out: Path) -> tuple[Path, Path]:
        """The first run's log and the resumed run's, beside the results store."""
        return out.with_name(out.stem + ".log"), out.with_name(out.stem + ".resume.log")

    def start(self) -> None:
        with open(self.log_path, "w") as log:
            self.proc = subprocess.Popen(self.argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    def poll(self) -> int | None:
        return None if self.proc is None else self.proc.poll()

    def wait_exit(self, timeout_s: float) -> int:
        assert self.proc is not None
        try:
            return self.proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.kill()
            raise TimeoutError(f"the run did not end within {timeout_s:.0f} s") from None

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def tail(self, n: int = 300) -> str:
        try:
            return " ".join(self.log_path.read_text(errors="replace")[-n:].split())
        except OSError:
            return ""

    def control_address(self) -> tuple[str, int]:
        """Where the runner's executor listens for its jobs (ss, by the runner's pid)."""
        assert self.proc is not None
        out = subprocess.run(["ss", "-Hltnp"], capture_output=True, text=True, timeout=10).stdout
        for line in out.splitlines():
            if f"pid={self.proc.pid}," in line:
                host, port = line.split()[3].rsplit(":", 1)
                return ("127.0.0.1" if host in ("*", "0.0.0.0") else host.strip("[]"), int(port))
        raise RuntimeError(f"the runner (pid {self.proc.pid}) listens on no TCP port")


class Watch(threading.Thread):
    """Polls the store from the injection on: when the run first noticed, and when it went on."""

    def __init__(self, out: Path, runner: Runner, t0: float, done_before: int) -> None:
        super().__init__(daemon=True)
        self.out, self.runner, self.t0, self.done_before = out, runner, t0, done_before
        self.detected_s: float | None = None
        self.recovered_s: float | None = None
        self._halt = threading.Event()
        self._failed_before = stored(out)[1]

    def run(self) -> None:
        while not self._halt.wait(0.5):
            now = time.monotonic() - self.t0
            done, failed, interrupted = progress(self.out)
            if self.detected_s is None and (failed > self._failed_before or interrupted or
                                            self.runner.poll() not in (None, 0)):
                self.detected_s = now
                # recovery counts from the detection: a job elsewhere that finished in between
                # (a frozen workstation is noticed only after 10 s) is not a recovery
                self.recovered_s, self.done_before = None, max(self.done_before, done)
            if self.recovered_s is None and done > self.done_before:
                self.recovered_s = now

    def stop(self) -> None:
        self._halt.set()
        self.join(5)
        if self.recovered_s is None and len(done_jobs(self.out)) > self.done_before:
            self.recovered_s = time.monotonic() - self.t0


# -- reading the store -------------------------------------------------------------------------
def _open(out: Path) -> ResultsStore | None:
    try:
        return ResultsStore.open(out, readonly=True) if out.exists() else None
    except (ValueError, OSError):
        return None  # being created, or the disk under it is full


def stored(out: Path) -> tuple[int, int]:
    """(jobs stored, of which failed)."""
    store = _open(out)
    if store is None:
        return 0, 0
    with store:
        jobs = store.jobs_frame()
    return len(jobs), int((jobs.status != Outcome.DONE).sum()) if len(jobs) else 0


def done_jobs(out: Path) -> set[tuple[int, int]]:
    store = _open(out)
    if store is None:
        return set()
    with store:
        jobs = store.jobs_frame()
    return {(int(c), int(j)) for c, j, s in zip(jobs.cell_id, jobs.job_id, jobs.status) if s == Outcome.DONE}


def progress(out: Path) -> tuple[int, int, bool]:
    """(jobs done, jobs failed, a cell interrupted)."""
    store = _open(out)
    if store is None:
        return 0, 0, False
    with store:
        jobs, cells = store.jobs_frame(), store.cells_frame()
    done = int((jobs.status == Outcome.DONE).sum()) if len(jobs) else 0
    return done, (len(jobs) - done), bool(len(cells) and (cells.status == "interrupted").any())


def rerun_after_done(out: Path) -> int:
    """Jobs a later segment launched again although an earlier one had stored them finished
    (each segment's physical runs are its artifact runs-N.csv)."""
    store = _open(out)
    if store is None:
        return 0
    count = 0
    with store:
        jobs = store.jobs_frame()
        for cell in store.cells_frame().cell_id:
            cell = int(cell)
            mine = jobs[(jobs.cell_id == cell) & (jobs.status == Outcome.DONE)]
            stored_in = dict(zip(mine.job_id.astype(int), mine.segment.astype(int)))
            artifacts = store.artifacts(cell)
            for seg in store.segments(cell):
                text = artifacts.get(f"runs-{seg['seq']}.csv")
                if text:
                    launched = set(pd.read_csv(io.StringIO(text)).job.astype(int))
                    count += sum(1 for j in launched if stored_in.get(j, seg["seq"]) < seg["seq"])
    return count


# -- injections --------------------------------------------------------------------------------
def docker(*argv: str, gone_ok: bool = False) -> None:
    """`docker ARGV`; with gone_ok, a container the run has already removed is not an error
    (undoing a freeze or a cut on a workstation the run took as lost and took down)."""
    done = subprocess.run(["docker", *argv], capture_output=True, text=True, timeout=120)
    if gone_ok and "No such container" in done.stderr:
        return
    if done.returncode != 0:
        raise RuntimeError(f"docker {' '.join(argv[:2])}: {done.stderr.strip()[:200]}")


def job_running_on(container: str) -> bool:
    """A pool rank takes its workload's name while it runs one (workloads/pool.py)."""
    probe = subprocess.run(["docker", "exec", container, "pgrep", "-x", "synthetic"], capture_output=True, timeout=30)
    return probe.returncode == 0


def wait_until(predicate: Callable[[], bool], runner: Runner, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        if runner.poll() is not None:
            raise RuntimeError(f"the run ended before {what}: {runner.tail()}")
        time.sleep(0.5)
    raise TimeoutError(f"no {what} within {timeout_s:.0f} s")


def restart_dockerd(log: Path = Path("/var/log/nowlab/dockerd.log"), timeout_s: float = 90.0) -> None:
    """Stop the engine (SIGTERM, as a package upgrade would) and start it again as bootstrap.sh does."""
    pids = subprocess.run(["pgrep", "-x", "dockerd"], capture_output=True, text=True).stdout.split()
    if not pids:
        raise RuntimeError("dockerd is not running")
    for pid in pids:
        os.kill(int(pid), signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    while subprocess.run(["pgrep", "-x", "dockerd"], capture_output=True).returncode == 0:
        if time.monotonic() > deadline:
            raise TimeoutError("dockerd did not stop")
        time.sleep(0.5)
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "a") as fh:
        subprocess.Popen(["dockerd"], stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                         start_new_session=True)
    while subprocess.run(["docker", "info"], capture_output=True).returncode != 0:
        if time.monotonic() > deadline:
            raise TimeoutError("dockerd did not come back")
        time.sleep(0.5)


def mount_small_disk(path: Path, size: str = "48m") -> None:
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], check=True, capture_output=True)


def unmount(path: Path) -> None:
    subprocess.run(["umount", "-l", str(path)], capture_output=True)
    shutil.rmtree(path, ignore_errors=True)


def fill(path: Path) -> None:
    """Write zeros until the filesystem refuses more."""
    block = b"\0" * (1 << 20)
    with open(path, "wb") as fh:
        try:
            while True:
                fh.write(block)
                fh.flush()
        except OSError:
            pass


# Run in a workstation (standard library only): answers each greeting with a wrong HMAC, or
# with a forged message instead of an answer, for argv[3] seconds.
FLOOD_FROM_INSIDE = """
import os, socket, sys, time
host, port, end = sys.argv[1], int(sys.argv[2]), time.monotonic() + float(sys.argv[3])
n = 0
while time.monotonic() < end:
    try:
        with socket.create_connection((host, port), timeout=2.0) as s:
            s.recv(128)
            s.sendall(os.urandom(32).hex().encode() + b"\\n" if n % 2 else b'{"type": "done", "job": 1}\\n')
            s.recv(16)
    except OSError:
        time.sleep(0.01)
    n += 1
"""


def refusals(*logs: Path) -> tuple[int, int]:
    """(refused outside the cluster's networks, refused at the handshake), from the runners' logs
    (the first run's and, when there was one, the resumed run's)."""
    lines: list[str] = []
    for log in logs:
        try:
            text = log.read_text(errors="replace")
        except FileNotFoundError:
            continue
        lines += [ln for ln in text.splitlines() if "control channel: refused" in ln]
    outside = sum("outside the allowed" in ln for ln in lines)
    return outside, len(lines) - outside


def flood(address: tuple[str, int], stop: threading.Event) -> None:
    """Open connections to the runner's control port and send forged messages and garbage."""
    while not stop.is_set():
        try:
            with socket.create_connection(address, timeout=1.0) as s:
                s.sendall(b'{"type": "done", "job": 1}\n' * 50 + os.urandom(512))
        except OSError:
            time.sleep(0.01)
