"""The monitor's frames are read by other threads (the runner, the CLI) while it samples.

A demo died at its end with "Length of values (2872) does not match length of index
(2880)": the DataFrame was built from a list the sampling thread was appending to.
"""
from __future__ import annotations

import itertools
import time
from types import SimpleNamespace

from testbed import shaping
from testbed.load.monitor import Monitor

WORKSTATIONS = [f"ws{i}" for i in range(1, 17)]


class ScriptedMonitor(Monitor):
    """A Monitor whose readings are made up, so it samples as fast as the host allows."""

    def _read(self) -> dict:
        n = next(self._tick)
        owner_ns = n * 10_000_000
        classes = {shaping.ROOT: (100_000_000, n * 1000)}
        classes.update({shaping.classid(i): (10_000_000, n * 100) for i in range(len(WORKSTATIONS))})
        return {"t": n * 0.01, "cpu": {ws: (0.2, owner_ns, n * 0.01) for ws in WORKSTATIONS},
                "tc": {ws: (n * 0.01, classes) for ws in WORKSTATIONS}}


def scripted_monitor(interval: float = 0.0) -> ScriptedMonitor:
    spec = SimpleNamespace(names=WORKSTATIONS, cpu=lambda ws: 0.2, speed=lambda ws: None)
    m = ScriptedMonitor(cluster=SimpleNamespace(spec=spec, name="t-race", sample_stream=lambda *_a: None),
                        interval=interval)
    m._tick = itertools.count()
    return m


def test_frames_read_while_the_monitor_samples_are_whole():
    # Reads slow down as the frames grow, and CI's host is busy: count reads that saw the
    # monitor move on, not reads per second.
    m = scripted_monitor(interval=0.001).start()
    errors: list[BaseException] = []
    reads, lengths = 0, set()
    try:
        deadline = time.monotonic() + 30.0
        while time.monotonic() < deadline and (reads < 20 or len(lengths) < 5):
            try:
                cpu, links = m.frames()
            except ValueError as exc:  # the race: pandas sees the list grow
                errors.append(exc)
                break
            reads += 1
            lengths.add(len(cpu))
            # Every sample adds one row per workstation and one per ordered pair: whole samples only.
            assert len(cpu) % len(WORKSTATIONS) == 0
            assert len(links) % (len(WORKSTATIONS) * (len(WORKSTATIONS) - 1)) == 0
            if len(cpu):
                assert set(cpu.columns) >= {"t", "workstation", "avail_cpu"}
                assert cpu.avail_cpu.notna().all()
    finally:
        m.stop()
    assert not errors, errors
    assert reads >= 20
    assert len(lengths) >= 5  # the monitor really sampled while we read


def test_save_while_sampling(tmp_path):
    m = scripted_monitor(interval=0.001).start()
    try:
        for i in range(10):
            m.save(tmp_path / str(i))
    finally:
        m.stop()
    lines = (tmp_path / "9" / "monitor_cpu.csv").read_text().splitlines()
    assert (len(lines) - 1) % len(WORKSTATIONS) == 0



class FlakyCluster:
    """The few cluster calls Monitor._read makes (two workstations, no traffic)."""

    workstations = ["ws1", "ws2"]
    spec = SimpleNamespace(names=["ws1", "ws2"], cpu=lambda ws: 0.2, speed=lambda ws: None)

    def cpu_limits(self, ws):
        return {"cores": 0.2}

    def processes_cpu_ns(self, ws, command_contains):
        return 0


def flaky_tc_reads():
    """Every third read of tc's counters comes back empty, as a `docker exec` under load
    once did in a demo (the monitor's thread died of it)."""
    reads, sent = itertools.count(), itertools.count(1000, 1000)

    def read(_cluster, _ws: str) -> str:
        if next(reads) % 3 == 2:
            return ""
        return (f"{time.time():.6f}\nclass htb {shaping.ROOT} root rate 100Mbit ceil 100Mbit burst 1600b\n"
                f" Sent {next(sent)} bytes 10 pkt (dropped 0, overlimits 0 requeues 0)\n")
    return read


def test_a_failed_tc_read_leaves_a_gap_and_the_monitor_keeps_sampling(monkeypatch):
    monkeypatch.setattr("testbed.load.monitor.read_tc", flaky_tc_reads())
    mon = Monitor(FlakyCluster(), interval=0.0)
    for _ in range(9):
        mon.sample()
    assert mon.read_errors and all("not a time stamp" in e for e in mon.read_errors)
    assert len(mon.cpu_rows) == 8 * 2  # every sample after the first, whatever tc said


def test_a_governed_workstations_availability_is_a_fraction_of_its_live_quota():
    from testbed.load.monitor import nominal_cores

    raw = SimpleNamespace(speed=lambda ws: None, cpu=lambda ws: 0.2)
    governed = SimpleNamespace(speed=lambda ws: 0.3, cpu=lambda ws: 0.225)
    # a raw cap: of its spec (cap mode's lowered cap reads as what owners left)
    assert nominal_cores(raw, "ws1", 0.1, {}) == 0.2
    # governed: of the quota it has now (0.14), or of that before cap mode's scale (0.5)
    assert nominal_cores(governed, "ws1", 0.14, {}) == 0.14
    assert nominal_cores(governed, "ws1", 0.07, {"ws1": 0.5}) == 0.14


def test_memory_holds_a_recent_window_and_the_whole_series_reads_back_from_disk():
    """A long run's monitor holds only keep_s of rows in memory (a 2-h soak grew 20 MiB/h when it
    kept them all); any window, in memory or not, reads the same rows."""
    import pandas as pd

    m = scripted_monitor()
    m.keep_s = 1.0                  # the scripted clock moves 0.01 s a sample
    for _ in range(501):
        m.sample()                  # t = 0.01 ... 5.00 after the baseline
    per_sample = len(WORKSTATIONS)
    assert len(m.cpu_rows) <= 101 * per_sample and m.cpu_rows[0]["t"] >= 4.0 - 1e-9
    cpu, links = m.frames()         # the whole run, from disk
    assert len(cpu) == 500 * per_sample and len(links) == 500 * per_sample * (per_sample - 1)
    assert cpu.t.min() == 0.01 and cpu.t.max() == 5.0
    recent, _ = m.frames(4.495, 4.605)  # in memory (times are n * 0.01, not exact decimals)
    on_disk = m._spool.read("cpu", 4.495, 4.605)
    pd.testing.assert_frame_equal(recent, on_disk, check_dtype=False)
    assert len(recent) == 11 * per_sample
    old, old_links = m.frames(0.995, 1.055)  # dropped from memory: read from disk
    assert [round(t, 2) for t in sorted(set(old.t))] == [1.0, 1.01, 1.02, 1.03, 1.04, 1.05] and len(old_links) > 0
