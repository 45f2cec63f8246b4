"""The speed keeper: one host process per cluster that runs the meter and the governor.

Started by `Cluster.create` (detached, its own session, pid in the cluster's state folder),
on the controller whatever the backend: where the cores are another host's (Swarm), the
samples come from that host's probe (testbed/backends/swarm/metering.py) and the quotas go
through its engine.
stopped by `down`, and gone by itself within a tick once the state folder disappears, so
no `gc` can orphan it. Each tick it meters one kernel on every host core, steps the
governor, and writes the governed quotas straight into the cgroup files (as cap mode
does: dockerd takes 15-200 ms an update). It appends the samples to meter.csv and the
quotas to quotas.csv in the state folder. If it dies the quotas stay where they were and
the cluster runs on; the gap shows in meter.csv and `delivered_speed` says so.

Run as `python -m testbed.keeper CLUSTER`.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from testbed import backends, state
from testbed.backends import CpuCap
from testbed.governor import Governor, Target
from testbed.idle_hold import IdleHold
from testbed.meter import (KERNEL_ORDER, QUOTAS_CSV, SAMPLES_CSV, QuotaRow, Smoother, append_quotas,
                           append_samples, measure)
from testbed.spec import ClusterSpec, cfs_period_us

TICK_S = 0.5            # one sample per core and one governor step per tick
RAW_RECORD_S = 5.0      # raw-cap workstations: a quota row this often (their quota does not move)
WRITE_TOLERANCE = 0.005  # relative change below which the cgroup is not rewritten
PID_FILE, SCALES_FILE, NOW_FILE, LOG_FILE = "keeper.pid", "scales.json", "keeper-now.json", "keeper.log"
HOLD_FILE = "governor-off"  # present: speed workstations are held at their nominal quota (meter still runs)


def targets(spec: ClusterSpec) -> dict[str, Target]:
    return {n: Target(speed=spec.speed(n) or 0.0, budget=spec.cpu(n), nominal=spec.nominal_cpu(n))
            for n in spec.names if spec.governed(n)}


def _write_json(path: Path, data: object) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data))
    tmp.replace(path)


def read_scales(d: Path) -> dict[str, float]:
    try:
        return {k: float(v) for k, v in json.loads((d / SCALES_FILE).read_text()).items()}
    except (FileNotFoundError, json.JSONDecodeError):
        return {}


def set_scale(name: str, ws: str, scale: float) -> float | None:
    """Cap mode's fraction for a governed workstation; returns the keeper's current quota (cores)."""
    d = state.cluster_dir(name)
    scales = read_scales(d)
    scales[ws] = scale
    _write_json(d / SCALES_FILE, scales)
    try:
        return float(json.loads((d / NOW_FILE).read_text())["governed"][ws])
    except (FileNotFoundError, KeyError, json.JSONDecodeError):
        return None


def set_governing(name: str, on: bool) -> None:
    """Switch a running cluster's governor on or off (off: nominal quotas, as with governor = false)."""
    flag = state.cluster_dir(name) / HOLD_FILE
    if on:
        flag.unlink(missing_ok=True)
    else:
        flag.touch()


@dataclass
class Keeper:
    name: str
    cores: list[int]

    def run(self) -> None:
        st = state.ClusterState.load(self.name)
        backend = backends.get(st.backend)  # only its fast cap write is used: no engine round trip
        # Only this machine's cores are held out of their halt: another host's (Swarm, SSH) are its own.
        local = not backend.capabilities.meters_remotely
        with IdleHold(st.cluster_spec.defaults.host_idle if local else "remote") as idle:
            print(f"keeper: host cores idle: {idle.status}", file=sys.stderr, flush=True)
            self._govern(st, backend, idle)

    def _govern(self, st: state.ClusterState, backend: backends.Backend, idle: IdleHold) -> None:
        """Meter, govern and record, a tick at a time, until the cluster's state folder goes."""
        d = state.cluster_dir(self.name)
        spec = st.cluster_spec
        gov = Governor(targets(spec))
        smoother = Smoother()
        written: dict[str, float] = {}
        last_raw: float = 0.0
        tick = 0
        # Another host's cores (Swarm) are measured by a probe there, whose samples arrive keyed by
        # slot; this machine's, here, one kernel per tick on each core in turn.
        remote = backend.meter_stream(self.name) if backend.capabilities.meters_remotely else None
        while (d / "cluster.json").exists():
            t_start = time.monotonic()
            kernel = KERNEL_ORDER[tick % len(KERNEL_ORDER)]
            samples = remote.drain() if remote is not None else \
                [measure(c, kernel, smoother.sample_ref_s(c, kernel)) for c in self.cores]
            for s in samples:
                smoother.add(s)
            now = time.time()
            factors = {ws: smoother.factor(st.cores[ws], now, spec.kernel) for ws in spec.names}
            if (d / HOLD_FILE).exists():
                gov.quotas.update({ws: t.nominal for ws, t in gov.targets.items()})
                steps = gov.step({ws: None for ws in gov.targets}, read_scales(d))  # holds the nominal quota
            else:
                steps = gov.step({ws: factors[ws] for ws in gov.targets}, read_scales(d))
            rows: list[QuotaRow] = []
            for ws, stp in steps.items():
                prev = written.get(ws)
                if prev is None or abs(stp.written - prev) > WRITE_TOLERANCE * prev:
                    try:
                        backend.write_cpu_cap(st.containers[ws], CpuCap(
                            stp.written, cfs_period_us(stp.written, spec.defaults.cfs_period_us)))
                    except OSError:  # container gone (down in progress): the state check ends us
                        continue
                    written[ws] = stp.written
                rows.append(QuotaRow(now, ws, st.cores[ws], written[ws], factors[ws], gov.targets[ws].speed,
                                     stp.written / stp.quota if stp.quota else 1.0, factors[ws] is None))
            if now - last_raw >= RAW_RECORD_S:
                last_raw = now
                rows += [QuotaRow(now, ws, st.cores[ws], spec.cpu(ws), factors[ws], None, 1.0, factors[ws] is None)
                         for ws in spec.names if ws not in gov.targets]
            if not (d / "cluster.json").exists():
                break
            append_samples(d / SAMPLES_CSV, samples)
            append_quotas(d / QUOTAS_CSV, rows)
            _write_json(d / NOW_FILE, {"t": now, "pid": os.getpid(), "quotas": written,
                                       "governed": {ws: stp.quota for ws, stp in steps.items()},
                                       "factors": {str(c): smoother.factor(c, now, spec.kernel) for c in self.cores},
                                       "idle": idle.status})
            tick += 1
            time.sleep(max(0.0, TICK_S - (time.monotonic() - t_start)))


# -- process management (used by Cluster.create/down) -------------------------------------------
def start(name: str, cores: list[int]) -> int:
    d = state.cluster_dir(name)
    with (d / LOG_FILE).open("ab") as log:
        # -W: runpy warns that testbed/__init__ already imported this module; harmless here
        argv = [sys.executable, "-W", "ignore::RuntimeWarning:runpy", "-m", "testbed.keeper", name,
                ",".join(map(str, cores))]
        proc = subprocess.Popen(argv,
                                stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
                                cwd=Path(__file__).resolve().parent.parent,
                                env={**os.environ, "NOWLAB_HOME": str(state.home())})
    (d / PID_FILE).write_text(str(proc.pid))
    # Popen returns once the child has called exec (vfork), not once exec is done: for a moment
    # its /proc cmdline is empty and pid() would call it dead (a test saw that 1 time in 2).
    deadline = time.monotonic() + 2.0
    while pid(name) is None and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    return proc.pid


def pid(name: str) -> int | None:
    """The keeper's pid if it is alive and really is this cluster's keeper."""
    try:
        p = int((state.cluster_dir(name) / PID_FILE).read_text())
        cmd = Path(f"/proc/{p}/cmdline").read_bytes().split(b"\0")
        stat = Path(f"/proc/{p}/stat").read_text()
    except (FileNotFoundError, ValueError):
        return None
    zombie = stat.rsplit(")", 1)[-1].split()[0] == "Z"
    return p if not zombie and b"testbed.keeper" in cmd and name.encode() in cmd else None


def status(name: str) -> dict[str, object]:
    d = state.cluster_dir(name)
    try:
        now = json.loads((d / NOW_FILE).read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        now = {}
    t = now.get("t")
    return {"alive": pid(name) is not None, "age_s": None if t is None else round(time.time() - float(t), 2),
            "quotas": now.get("quotas", {}), "factors": now.get("factors", {}), "idle": now.get("idle")}


def stop(name: str, timeout: float = 3.0) -> bool:
    """Stop the keeper (SIGTERM, then SIGKILL); True if one was running."""
    p = pid(name)
    if p is None:
        return False
    os.kill(p, signal.SIGTERM)
    end = time.monotonic() + timeout
    while time.monotonic() < end and pid(name) is not None:
        time.sleep(0.05)
    if pid(name) is not None:
        os.kill(p, signal.SIGKILL)
    try:  # reap it when this process started it (Cluster.create then down in one process)
        os.waitpid(p, os.WNOHANG)
    except ChildProcessError:
        pass
    return True


def main(argv: list[str]) -> None:
    name, cores = argv[0], [int(c) for c in argv[1].split(",") if c]  # none: no core metered here
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    Keeper(name, cores).run()


if __name__ == "__main__":
    main(sys.argv[1:])
