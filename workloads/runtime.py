"""The preemption library of §2.4, independent of the application.

Design: every resize ends the MPI job and the scheduler relaunches it.
  * LOSER (new set inside the old): at the safe point the released ranks send
    their rows to the kept ranks over MPI (the bytes cross the shaped links),
    every kept rank checkpoints its new block to its own local disk, and the
    whole job exits, releasing all its processors. The relaunch on the subset
    finds each block already where it belongs and resumes at once.
  * WINNER (new set contains the old): each rank checkpoints its block to its
    local disk and the job exits. The scheduler restarts it on the superset; the
    old ranks load their blocks and send rows to the new ranks over MPI.
Shrinking inside the running job (a sub-communicator) was rejected: mpiexec on
the released hosts would still own the job, so their processors would not really
be released, and growing needs a relaunch anyway. Relaunching on each resize
treats both directions alike and needs nothing from a backend but "start
mpiexec on these hosts", so it works for SSH hosts as for Docker.

The coordinator (rank 0, the lowest-numbered) alone talks to the scheduler.
Runs inside the containers: standard library, numpy and mpi4py only.
"""
from __future__ import annotations

import json
import socket
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from mpi4py import MPI

from workloads import channel_auth, checkpoint, polite, timeshare_checkin
from workloads.checkpoint import LocalState
from workloads.coordinator_channel import ControlClient, control_address
from workloads.redistribute import redistribute
from workloads.redistribution_plan import resize_kind
from workloads.wire.control import RESULT_PREFIX

PARTITION_TIMEOUT_S = 600.0
# The job's communicator when a resident pool rank (workloads.pool) runs the module;
# None when mpiexec started it, and the job is the whole MPI_COMM_WORLD.
POOL_COMM: MPI.Comm | None = None


def job_comm() -> MPI.Comm:
    """This job's communicator: the pool's sub-communicator, or MPI_COMM_WORLD."""
    return POOL_COMM if POOL_COMM is not None else MPI.COMM_WORLD


@dataclass
class JobConfig:
    """What the launcher tells every rank on the command line."""

    job: str
    hosts: list[str]
    control: str | None = None
    resume: bool = False
    ckpt_root: Path = checkpoint.DEFAULT_ROOT
    wait: str = polite.WaitMode.POLITE.value


@dataclass
class Malleable:
    """Start or resume a job, and run the preemption sequence at safe points."""

    comm: MPI.Comm
    config: JobConfig
    client: ControlClient | None = None
    restore_stats: dict[str, Any] = field(default_factory=dict)
    released: dict[str, Any] | None = None
    placement: list[str] = field(default_factory=list)  # each rank's real host name
    timeshare: timeshare_checkin.Registration | None = None  # checked in with a time-sharing manager

    def __post_init__(self) -> None:
        if self.comm.Get_size() != len(self.config.hosts):
            raise ValueError(f"{self.comm.Get_size()} ranks but hosts {self.config.hosts}")
        polite.set_wait_mode(self.config.wait)

    @property
    def rank(self) -> int:
        return self.comm.Get_rank()

    @property
    def host(self) -> str:
        return self.config.hosts[self.rank]

    @property
    def is_coordinator(self) -> bool:
        return self.rank == 0

    def start(self, fresh: Callable[[], LocalState]) -> LocalState:
        """A new state from `fresh`, or the checkpointed one moved to the current hosts.

        First the rank checks in with its workstation's time-sharing manager, if there is one
        (NOWLAB_TIMESHARE): from then on the manager's table decides when it runs.
        """
        self.timeshare = timeshare_checkin.check_in(self.config.job, self.host)
        state = self._resume() if self.config.resume else fresh()
        self.placement = polite.bcast_json(self.comm, polite.gather_json(self.comm, socket.gethostname()))
        if self.is_coordinator:
            address = control_address(self.config.control)
            if address is not None:
                secret = channel_auth.secret_from_env()
                if secret is None:
                    raise RuntimeError(f"job {self.config.job}: {channel_auth.SECRET_ENV} is not set, "
                                       f"so the controller at {address[0]}:{address[1]} would refuse it")
                self.client = ControlClient(address, secret)
                self.client.send({"type": "hello", "job": self.config.job, "hosts": self.config.hosts,
                                  "iteration": state.scalars.get("iteration", 0),
                                  "resumed": self.config.resume})
                if self.config.resume:
                    self.client.send({"type": "restored", **self.restore_stats})
        return state

    def _resume(self) -> LocalState:
        cfg = self.config
        t0 = time.perf_counter()
        meta = checkpoint.read_meta(cfg.ckpt_root, cfg.job, self.host)
        holders = polite.allgather_int(self.comm, 1 if meta is not None else 0)
        if not any(holders):
            raise RuntimeError(f"job {cfg.job}: no checkpoint on any of {cfg.hosts}")
        root = holders.index(1)
        meta = polite.bcast_json(self.comm, meta, root=root)
        old_hosts = meta["layout_hosts"]
        kind = resize_kind(old_hosts, cfg.hosts)
        if kind == "loser":
            raise RuntimeError(f"checkpoint laid out for {old_hosts} cannot shrink at restart to {cfg.hosts}")
        old = (checkpoint.load_arrays(cfg.ckpt_root, cfg.job, self.host, meta["arrays"])
               if self.host in old_hosts else {})
        polite.barrier(self.comm)
        t_loaded = time.perf_counter()
        arrays, stats = redistribute(self.comm, cfg.hosts, old, meta["n_rows"], old_hosts, cfg.hosts)
        polite.barrier(self.comm)
        t1 = time.perf_counter()
        checkpoint.remove(cfg.ckpt_root, cfg.job, self.host)
        moved = polite.allreduce_int(self.comm, stats.bytes_sent)
        load_s = polite.allreduce_scalar(self.comm, t_loaded - t0, MPI.MAX)
        self.restore_stats = {"role": "winner" if kind == "winner" else "resume",
                              "from_hosts": old_hosts, "bytes_moved": moved,
                              "load_s": load_s, "redistribution_s": t1 - t_loaded,
                              "iteration": meta["scalars"].get("iteration", 0)}
        return LocalState(arrays, meta["n_rows"], meta["scalars"])

    def safe_point(self, state: LocalState) -> bool:
        """Call after each phase/iteration. Returns True if this rank must now exit.

        The coordinator looks for a preemption request and then all ranks enter one
        non-blocking allreduce (MAX) of that flag. The allreduce is the phase's
        barrier: nobody leaves it before everyone is at the safe point, and it
        carries the coordinator's decision, so one collective does the work of a
        barrier plus a broadcast.
        """
        request = None
        if self.client is not None:
            request = self.client.poll("preempt")
        if not polite.allreduce_int(self.comm, 1 if request is not None else 0, MPI.MAX):
            return False
        new_hosts = None
        if self.is_coordinator:
            self.client.send({"type": "ack", "iteration": state.scalars.get("iteration", 0)})
            new_hosts = self.client.expect("partition", PARTITION_TIMEOUT_S)["hosts"]
        new_hosts = polite.bcast_json(self.comm, new_hosts)
        kind = resize_kind(self.config.hosts, new_hosts)
        if kind == "same":
            if self.is_coordinator:
                self.client.send({"type": "released", "role": "same", "bytes_moved": 0,
                                  "redistribution_s": 0.0, "checkpoint_s": 0.0, "exit": False})
            return False
        self._release(state, kind, new_hosts)
        return True

    def _release(self, state: LocalState, kind: str, new_hosts: list[str]) -> None:
        cfg = self.config
        t0 = time.perf_counter()
        if kind == "loser":
            arrays, stats = redistribute(self.comm, cfg.hosts, state.arrays, state.n_rows,
                                         cfg.hosts, new_hosts)
            polite.barrier(self.comm)  # the move ends when the slowest link has delivered
            layout_hosts = new_hosts
        else:
            arrays, stats, layout_hosts = state.arrays, None, cfg.hosts
        t_moved = time.perf_counter()
        if arrays is not None:
            checkpoint.save(cfg.ckpt_root, cfg.job, self.host,
                            LocalState(arrays, state.n_rows, state.scalars), layout_hosts)
        polite.barrier(self.comm)
        t1 = time.perf_counter()
        moved = polite.allreduce_int(self.comm, stats.bytes_sent if stats else 0)
        self.released = {"type": "released", "role": kind, "to_hosts": new_hosts,
                         "iteration": state.scalars.get("iteration", 0), "bytes_moved": moved,
                         "redistribution_s": t_moved - t0, "checkpoint_s": t1 - t_moved,
                         "exit": True}
        if self.is_coordinator:
            self.client.send(self.released)

    def finish(self, result: dict[str, Any]) -> None:
        """Report the end of the job to the scheduler and on stdout (coordinator only)."""
        if self.is_coordinator:
            # done_at (epoch, the host's clock: containers share its kernel) lets a profiler
            # time launch-to-done exactly as the live executor does.
            line = {"job": self.config.job, "hosts": self.config.hosts, "placement": self.placement,
                    "done_at": time.time(), **result}
            if self.client is not None:
                self.client.send({"type": "done", **line})
            print(RESULT_PREFIX + json.dumps(line), flush=True)

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
        if self.timeshare is not None:
            self.timeshare.check_out()
            self.timeshare = None


def print_released(m: Malleable) -> None:
    if m.is_coordinator and m.released is not None:
        print(RESULT_PREFIX + json.dumps({"job": m.config.job, "status": "released", **m.released}),
              flush=True)


def add_job_arguments(parser: Any) -> None:
    """The launcher-facing options shared by every malleable workload."""
    parser.add_argument("--job", required=True, help="job id; names the checkpoint directory")
    parser.add_argument("--hosts", required=True,
                        help="comma-separated workstation names, in rank order (rank i runs on host i)")
    parser.add_argument("--control", default=None,
                        help="scheduler HOST:PORT (else $NOWLAB_CONTROL; neither: not preemptible)")
    parser.add_argument("--resume", action="store_true", help="restart from the checkpoints on local disks")
    parser.add_argument("--ckpt-root", type=Path, default=checkpoint.DEFAULT_ROOT)
    parser.add_argument("--wait", choices=[m.value for m in polite.WaitMode], default=polite.WaitMode.POLITE.value,
                        help="how MPI waits: polite (test, then sleep 0.2 ms) or spin (busy test loop)")


def config_from_args(args: Any) -> JobConfig:
    return JobConfig(job=args.job, hosts=[h for h in args.hosts.split(",") if h],
                     control=args.control, resume=args.resume, ckpt_root=args.ckpt_root, wait=args.wait)


def run_main(main: Callable[[], int]) -> int:
    """Run a workload's main; on any exception print it and abort the whole MPI job.

    Without the abort, the other ranks would poll forever for a message the dead
    rank will never send, and the scheduler would wait for a job that is stuck.
    In a resident pool the world outlives the job: the rank reports its failure
    instead, and the pool's host side cancels the other ranks (workloads.host.pool_client).
    """
    try:
        return main()
    except Exception:  # noqa: BLE001 - the job must not outlive a failed rank
        if POOL_COMM is not None:
            raise  # the pool prints it and reports the failure
        traceback.print_exc()
        sys.stderr.flush()
        MPI.COMM_WORLD.Abort(1)
        return 1
