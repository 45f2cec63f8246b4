"""One `nowlab batsim` run: read the input, serve the scheduler, write Batsim's outputs, even when it fails.

The outputs are written whatever happens after the first message: a scheduler that misbehaves
stops the run with one line (`Outcome.error`), and the files then hold every job as far as it
got (a waiting job as SUBMITTED, a running one as RUNNING).
"""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from experiments.batsim.channel import SchedulerError, ZmqChannel
from experiments.batsim.live import LiveBatsimServer, LiveError
from experiments.batsim.outputs import JobRecord, write_outputs
from experiments.batsim.platform import Platform
from experiments.batsim.protocol import ProtocolError
from experiments.batsim.server import BatsimServer, Stats
from experiments.batsim.workload import Workload, read_workload
from workloads.host.launch import Launcher


def read_input(path: str | Path) -> Workload:
    """A Batsim workload (JSON), or an SWF trace (.swf) read as rigid delay jobs."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such workload file")
    if path.suffix.lower() == ".swf":
        from experiments.batsim.swf_input import read_swf_workload

        return read_swf_workload(path)
    return read_workload(path)


@dataclass(frozen=True)
class Outcome:
    records: list[JobRecord]
    stats: Stats
    jobs_csv: Path
    schedule_csv: Path
    messages_jsonl: Path | None
    error: str | None  # the one line that stopped the run, None when it ran to SIMULATION_ENDS
    simulated_run_s: dict[str, float] | None = None  # live: each started job's simulated time on its allocation
    stopped_at_end: dict[str, int | None] | None = None  # live: jobs the run's end stopped -> their exit code then


def serve(workload: Workload, platform: Platform, *, endpoint: str, timeout_s: float, out_dir: Path,
          prefix: str = "out", keep_messages: bool = False,
          progress: Callable[[int, int], None] | None = None, launcher: Launcher | None = None) -> Outcome:
    """Play Batsim's side for `workload` against the scheduler at `endpoint`; write the outputs.

    `launcher` (a cluster's `job_launcher()`): live, on the wall clock, every job a real program
    on the workstations `platform` names (experiments/batsim/live.py); else simulated."""
    transcript: list[tuple[str, str]] | None = [] if keep_messages else None
    error = None
    with ZmqChannel(endpoint, timeout_s=timeout_s) as channel:
        if launcher is None:
            server = BatsimServer(workload, platform, channel, transcript=transcript, progress=progress)
        else:
            server = LiveBatsimServer(workload, platform, channel, transcript=transcript, progress=progress,
                                      launcher=launcher)
        try:
            server.run()
        except (ProtocolError, SchedulerError, LiveError) as exc:
            error = str(exc)
        except BaseException:  # Ctrl-C, or a fault of this side: the files still hold everything so far
            write_outputs(out_dir, prefix, server.records(), server.run_times())
            raise
    records = server.records()
    jobs_csv, schedule_csv = write_outputs(out_dir, prefix, records, server.run_times())
    messages = None
    if transcript is not None:
        messages = out_dir / f"{prefix}_messages.jsonl"
        with messages.open("w", encoding="utf-8") as f:
            for direction, text in transcript:
                f.write(json.dumps({"direction": direction, "text": text}) + "\n")
    if isinstance(server, LiveBatsimServer):
        return Outcome(records, server.stats, jobs_csv, schedule_csv, messages, error, server.sim_run_s,
                       server.stopped_at_end)
    return Outcome(records, server.stats, jobs_csv, schedule_csv, messages, error)


__all__ = ["Outcome", "read_input", "serve"]
