"""Owners in a live time-sharing run (Zhou & Brent §3): an owner daemon on each named workstation.

Each runs containers/agents/owner.py: N processes that think (exponential, mean think_s) and
then run a command of exponential demand (mean demand_s seconds of the workstation at its full
cap, alone: Menascé & Rao's D; its CPU time is demand_s times the cap in cores), logging every
command's start, response and CPU time. One owner process alone is busy demand_s / (think_s +
demand_s) of the time: the chance the simulator gives that it is ready (`ready`). The daemon checks in with its workstation's local
manager as `@owners` (its forked processes are its descendants), so the table's local policy
decides when they may run: always (implicit, proper share) or outside the jobs' Δt_p
(dedicated). In a workstation they run at the ranks' priority (SCHED_IDLE), so the two are
equal peers as the paper's model has them, not owners with priority as in Menascé & Rao's.
"""
from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Protocol

import pandas as pd

from experiments.reporting.tables import md_table
from experiments.studies.zhou_brent.manager_client import ManagerClient

OWNERS_JOB = "@owners"          # containers/agents/timeshare_manager.py OWNERS
OWNER_AGENT = "agents/owner.py"  # under the image's /opt/nowlab, or the repository's containers/


class OwnerLogError(ValueError):
    """An owner log line that cannot be read: one line naming the workstation and the line."""


@dataclass(frozen=True, slots=True)
class OwnerSetup:
    processes: Mapping[str, int]   # workstation -> owner processes
    think_s: float                 # mean think time
    demand_s: float                # mean demand of one command: seconds of the workstation at its cap
    seed: int = 1

    def __post_init__(self) -> None:
        for name in ("think_s", "demand_s"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"owner.{name}: must be > 0 s, got {value}")
        for w, n in self.processes.items():
            if n < 1:
                raise ValueError(f"simulate.owners.{w}: must be >= 1 process, got {n}")

    @property
    def ready(self) -> float:
        """The fraction of time one owner process alone has a command to run."""
        return self.demand_s / (self.think_s + self.demand_s)

    def argv(self, python: str, agent: str, workstation: str, log: str, pidfile: str, cap_cores: float) -> list[str]:
        """The daemon's command line; a command's CPU time is its demand times cap_cores."""
        seed = self.seed * 1000 + sorted(self.processes).index(workstation)
        return [python, agent, "--n", str(self.processes[workstation]), "--z", repr(self.think_s),
                "--d", repr(self.demand_s), "--speed", repr(cap_cores), "--seed", str(seed), "--log", log,
                "--pidfile", pidfile]


@dataclass(frozen=True, slots=True)
class OwnerCommand:
    """One owner command: started at start_s (host clock), done response_s later, using cpu_s of CPU."""

    workstation: str
    process: int
    start_s: float
    response_s: float
    cpu_s: float


def parse_owner_log(workstation: str, text: str) -> tuple[OwnerCommand, ...]:
    """The daemon's log (`index start_s response_s cpu_s` a line); a cut last line is left out."""
    out = []
    lines = text.splitlines()
    for i, line in enumerate(lines, start=1):
        parts = line.split()
        try:
            index, start_s, response_s, cpu_s = int(parts[0]), *(float(p) for p in parts[1:4])
            if len(parts) != 4:
                raise ValueError(line)
        except (ValueError, IndexError):
            if i == len(lines) and not text.endswith("\n"):
                break  # the daemon was stopped mid-write
            raise OwnerLogError(f"{workstation}: owner log line {i}: expected 'index start_s response_s cpu_s', "
                                f"got {line[:80]!r}") from None
        out.append(OwnerCommand(workstation, index, start_s, response_s, cpu_s))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class OwnerSummary:
    workstation: str
    commands: int
    mean_response_s: float
    median_response_s: float
    p95_response_s: float
    mean_cpu_s: float
    stretch: float                 # mean response / mean CPU: 1 on an idle workstation at 1 core


def summarise(commands: Sequence[OwnerCommand], since_s: float = -math.inf,
              until_s: float = math.inf) -> tuple[OwnerSummary, ...]:
    """Per workstation, the commands that started in [since_s, until_s)."""
    out = []
    for w in sorted({c.workstation for c in commands}):
        mine = [c for c in commands if c.workstation == w and since_s <= c.start_s < until_s]
        if not mine:
            continue
        resp = sorted(c.response_s for c in mine)
        cpu = statistics.mean(c.cpu_s for c in mine)
        mean = statistics.mean(resp)
        out.append(OwnerSummary(w, len(mine), mean, statistics.median(resp),
                                resp[min(len(resp) - 1, math.ceil(0.95 * len(resp)) - 1)], cpu,
                                mean / cpu if cpu > 0 else math.nan))
    return tuple(out)


class OwnerBackend(Protocol):
    def start_owner(self, workstation: str, owners: OwnerSetup) -> int: ...
    def stop_owner(self, workstation: str, pid: int) -> str: ...


@dataclass
class LiveOwners:
    """The owner daemons of one run: started and checked in as @owners, stopped and their logs read."""

    backend: OwnerBackend
    setup: OwnerSetup
    _pids: dict[str, int] = field(default_factory=dict, init=False)

    def start(self, clients: Mapping[str, ManagerClient]) -> None:
        for w in sorted(self.setup.processes):
            if w not in clients:
                raise ValueError(f"simulate.owners: {w} has no local manager in this run")
            self._pids[w] = self.backend.start_owner(w, self.setup)
            clients[w].checkin(OWNERS_JOB, self._pids[w])

    def stop(self) -> tuple[OwnerCommand, ...]:
        """Every daemon stopped (each tried even if one fails); the commands they logged."""
        out: list[OwnerCommand] = []
        failed = None
        for w, pid in sorted(self._pids.items()):
            try:
                out += parse_owner_log(w, self.backend.stop_owner(w, pid))
            except (RuntimeError, OSError, OwnerLogError) as exc:
                failed = failed or exc
        self._pids.clear()
        if failed is not None:
            raise failed
        return tuple(out)


OWNERS_CSV = "owners.csv"


def write_owner_commands(out_dir: Path, commands: Sequence[OwnerCommand]) -> Path:
    path = out_dir / OWNERS_CSV
    pd.DataFrame([asdict(c) for c in commands], columns=[f.name for f in fields(OwnerCommand)]).to_csv(path, index=False)
    return path


def read_owner_commands(run_dir: Path) -> tuple[OwnerCommand, ...] | None:
    """The owners' commands a run logged; None when it ran no owners (no owners.csv)."""
    path = run_dir / OWNERS_CSV
    if not path.is_file():
        return None
    try:
        frame = pd.read_csv(path, dtype={"workstation": str})
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise OwnerLogError(f"{path}: not a CSV file ({str(exc).splitlines()[0]})") from None
    want = [f.name for f in fields(OwnerCommand)]
    if list(frame.columns) != want:
        raise OwnerLogError(f"{path.name}: columns {list(frame.columns)}, expected {want}")
    return tuple(OwnerCommand(**r) for r in frame.to_dict("records"))


def owners_markdown(commands: Sequence[OwnerCommand] | None, policy: str, since_s: float = -math.inf) -> list[str]:
    """The report's section on the owners' response (Zhou & Brent §3), or a line saying none ran."""
    if commands is None:
        return ["## Owners", "", "No owners ran beside the jobs.", ""]
    lines = ["## Owners' response", "",
             f"Owner commands that began while the jobs were time-shared, under the {policy} local policy. "
             "Response: a command's start to its end, wall time; stretch: mean response over mean CPU time.", "",
             md_table(["workstation", "commands", "mean s", "median s", "95th pct s", "mean CPU s", "stretch"],
                      [[o.workstation, o.commands, f"{o.mean_response_s:.3f}", f"{o.median_response_s:.3f}",
                        f"{o.p95_response_s:.3f}", f"{o.mean_cpu_s:.3f}", f"{o.stretch:.2f}"]
                       for o in summarise(commands, since_s)])]
    return [*lines, ""]
