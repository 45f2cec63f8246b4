"""The host-core speed meter: reference work per CPU-second, measured all the time.

This host's speed drifts (a pinned loop's work per CPU-second varies by 15-22% in 1 s
windows, with lag-1 autocorrelation ~0.8), so a cap in cores delivers a varying amount of
reference work. The meter runs a reference kernel (workloads.reference) for a few ms of
thread CPU time on each core in turn and records the *factor*: reference-seconds done
per CPU-second. Multiply and matvec alternate so that both kinds of work are seen.

Reading the samples back (`read_samples`, `read_quotas`, `delivered_speed`) is pure and
needs no running meter: experiments call it per job on the CSVs of the cluster.
"""
from __future__ import annotations

import bisect
import csv
import io
import time
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Iterable

from workloads import speed_probe

SAMPLES_CSV = "meter.csv"      # t_epoch,core,kernel,factor
QUOTAS_CSV = "quotas.csv"      # t_epoch,workstation,core,quota_cores,factor,target,scale,stale
KERNEL_ORDER = speed_probe.KERNEL_ORDER
SAMPLE_REF_S = speed_probe.SAMPLE_REF_S  # reference-seconds per sample: 6-7 ms of CPU here (shorter
                               # ones are dominated by the kernel's set-up: 28% CV, 40% low at 0.004)
SAMPLE_CPU_S = speed_probe.SAMPLE_CPU_S  # the keeper sizes samples to this much CPU from the last
                               # factor, so a slow (loaded) core does not cost the meter more than 2%
EWMA_ALPHA = 0.3               # per sample of one kernel on one core (1 a second): a time constant of ~3 s
MAX_GAP_S = 5.0                # a core with no sample for this long has no current factor


@dataclass(frozen=True)
class Sample:
    t: float        # epoch seconds at the end of the measurement
    core: int
    kernel: str
    factor: float   # reference-seconds per CPU-second
    cpu_s: float = 0.0  # CPU time the sample cost


@dataclass(frozen=True)
class QuotaRow:
    t: float
    workstation: str
    core: int
    quota_cores: float   # the cap written to the cgroup (after any cap-mode scale)
    factor: float | None
    target: float | None  # reference cores asked; None for a raw `cpu =` workstation
    scale: float
    stale: bool           # the meter gave no current factor: the quota was held


def measure(core: int, kernel: str, ref_s: float = SAMPLE_REF_S) -> Sample:
    """Pin the calling thread to `core`, run `ref_s` reference-seconds of `kernel`, time it
    (workloads/speed_probe.py, which other hosts run as a process)."""
    t, factor, cpu = speed_probe.measure(core, kernel, ref_s)
    return Sample(t, core, kernel, factor, cpu)


def parse_sample(line: str) -> Sample | None:
    """One line of a remote probe's output as a Sample; None for anything else."""
    got = speed_probe.parse_line(line)
    return None if got is None else Sample(*got)


def factors_of(samples: list[Sample], kernel: str | None = None) -> dict[int, float]:
    """A short reading per core (placement's): each kernel's median, then their mean, the same
    blend as `Smoother.factor`; with `kernel`, that kernel's median alone (a cluster whose
    speeds are held for one kernel, ClusterSpec.speed_kernel). Cores with no sample are left out."""
    out: dict[int, float] = {}
    for core in sorted({s.core for s in samples}):
        meds = []
        for k in KERNEL_ORDER if kernel is None else (kernel,):
            v = sorted(s.factor for s in samples if s.core == core and s.kernel == k)
            if v:
                meds.append(v[len(v) // 2])
        if meds:
            out[core] = sum(meds) / len(meds)
    return out


class Smoother:
    """Per-core EWMA of each kernel's factor; the core's factor is their mean (or one kernel's)."""

    def __init__(self, alpha: float = EWMA_ALPHA, max_gap_s: float = MAX_GAP_S):
        self.alpha, self.max_gap_s = alpha, max_gap_s
        self._ewma: dict[tuple[int, str], float] = {}
        self._last: dict[int, float] = {}

    def add(self, s: Sample) -> None:
        key = (s.core, s.kernel)
        prev = self._ewma.get(key)
        self._ewma[key] = s.factor if prev is None else prev + self.alpha * (s.factor - prev)
        self._last[s.core] = s.t

    def sample_ref_s(self, core: int, kernel: str) -> float:
        """Work for the next sample: SAMPLE_CPU_S of CPU at this core's last factor for the kernel."""
        f = self._ewma.get((core, kernel))
        return SAMPLE_REF_S if f is None else min(0.03, max(0.008, SAMPLE_CPU_S * f))

    def factor(self, core: int, now: float | None = None, kernel: str | None = None) -> float | None:
        """The smoothed factor of a core (the mean of its kernels', or `kernel`'s alone), or None
        when it has no recent sample."""
        last = self._last.get(core)
        now = time.time() if now is None else now
        if last is None or now - last > self.max_gap_s:
            return None
        vals = [v for (c, k), v in self._ewma.items() if c == core and kernel in (None, k)]
        return sum(vals) / len(vals) if vals else None


PLACEMENT_READ_S = 2.0         # per core, for placement: the host's speed varies 15-22% (CV) over 1 s
                               # windows, so half a second refused specs that fit a moment later


def quick_factors(cores: list[int], seconds: float | None = None, kernel: str | None = None) -> dict[int, float]:
    """A short reading per core (for placement): each kernel's median over `seconds` in all
    (PLACEMENT_READ_S a core by default), then their mean, the same blend as `Smoother.factor`
    (`kernel`: that kernel's alone)."""
    if seconds is None:
        seconds = PLACEMENT_READ_S * len(cores)
    got: list[Sample] = []
    for core in cores:
        end = time.monotonic() + seconds / max(1, len(cores))
        i = 0
        while time.monotonic() < end or i < 4 * len(KERNEL_ORDER):
            got.append(measure(core, KERNEL_ORDER[i % len(KERNEL_ORDER)]))
            i += 1
    return factors_of(got, kernel)


# -- the CSVs ------------------------------------------------------------------------------
def append_samples(path: Path, samples: list[Sample]) -> None:
    new = not path.exists()
    with path.open("a", newline="") as fh:
        w = csv.writer(fh)
        if new:
            w.writerow(["t", "core", "kernel", "factor", "cpu_s"])
        w.writerows([f"{s.t:.3f}", s.core, s.kernel, f"{s.factor:.5f}", f"{s.cpu_s:.6f}"] for s in samples)


def append_quotas(path: Path, rows: list[QuotaRow]) -> None:
    new = not path.exists()
    with path.open("a", newline="") as fh:
        w = csv.writer(fh)
        if new:
            w.writerow(["t", "workstation", "core", "quota_cores", "factor", "target", "scale", "stale"])
        w.writerows([f"{r.t:.3f}", r.workstation, r.core, f"{r.quota_cores:.5f}",
                     "" if r.factor is None else f"{r.factor:.5f}", "" if r.target is None else r.target,
                     r.scale, int(r.stale)] for r in rows)


#: How much earlier than asked a windowed read starts. One keeper appends the rows in time
#: order, but the cores' samples of a round end a few ms apart; the quotas are rewritten every
#: tick (about 5 s), so a minute back holds each workstation's quota at the window's start.
READ_MARGIN_S = 60.0


def _rows(path: Path, since: float | None) -> list[dict[str, str]]:
    """The CSV's rows, or with `since` only those from about then on: the start is found by
    bisecting the file's bytes, so a read costs the window, not the whole run (a two-hour run's
    meter.csv has 30,000 rows, and the runner reads it for every job that ends)."""
    with path.open("rb") as fh:
        header = fh.readline()
        if since is not None:
            fh.seek(_offset_before(fh, fh.tell(), since - READ_MARGIN_S))
        body = fh.read()
    rows = csv.DictReader(io.StringIO((header + body).decode(errors="replace"), newline=""))
    return [r for r in rows if since is None or _t(r.get("t")) >= since - READ_MARGIN_S]


def _offset_before(fh: BinaryIO, lo: int, since: float) -> int:
    """A line start at or before the first row with t >= since, in a file of rows in time order
    (`lo`: the first row's). A line that does not parse ends the search early: the read is longer."""
    fh.seek(0, io.SEEK_END)
    hi = fh.tell()
    while hi - lo > 4096:
        mid = (lo + hi) // 2
        fh.seek(mid)
        fh.readline()  # the rest of a line cut in the middle
        start = fh.tell()
        t = _t(fh.readline().split(b",", 1)[0])
        if t != t:  # the end of the file, or a line that does not parse (NaN)
            hi = mid
        elif t < since:
            lo = start
        else:
            hi = mid
    return lo


def _t(text: str | bytes | None) -> float:
    try:
        return float(text)
    except (TypeError, ValueError):
        return float("nan")


def read_samples(path: Path, since: float | None = None) -> list[Sample]:
    """The meter's series (from about `since` on, epoch s); empty when there is no file (no meter ran)."""
    if not path.exists():
        return []
    return [Sample(float(r["t"]), int(r["core"]), r["kernel"], float(r["factor"]), float(r.get("cpu_s") or 0))
            for r in _rows(path, since) if r.get("factor")]


def read_quotas(path: Path, since: float | None = None) -> list[QuotaRow]:
    """The quotas written (from about `since` on, epoch s); empty when there is no file."""
    if not path.exists():
        return []
    return [QuotaRow(float(r["t"]), r["workstation"], int(r["core"]), float(r["quota_cores"]),
                     float(r["factor"]) if r["factor"] else None, float(r["target"]) if r["target"] else None,
                     float(r["scale"]), r["stale"] == "1") for r in _rows(path, since)]


# -- delivered speed -----------------------------------------------------------------------
@dataclass(frozen=True)
class Delivered:
    """The reference speed a workstation was given over a span, and how well it is known.

    `speed` is None when the meter has no sample in the span (missing or dead meter): the
    run then has raw times only, and `status` says so.
    """

    workstation: str
    t0: float
    t1: float
    speed: float | None       # reference cores: mean of quota x factor over the span
    quota_cores: float | None  # mean quota over the span
    factor: float | None       # mean factor of its core over the span
    samples: int               # meter samples of its core in the span
    status: str                # "metered" | "no meter samples" | "no quota record"


def _step_value(times: list[float], values: list[float], t: float) -> float:
    i = bisect.bisect_right(times, t) - 1
    return values[max(i, 0)]


def delivered_speed(samples: list[Sample], quotas: list[QuotaRow], ws: str, t0: float, t1: float,
                    *, kernel: str | None = None, steps: int = 200) -> Delivered:
    """Mean of quota(t) x factor(core, t) over [t0, t1], in reference cores.

    It is the speed the workstation *could* use (its cap, at the core's measured rate), the
    one a busy job gets. The factor is taken as the mean of the core's samples in each of
    `steps` slices (falling back to the nearest sample); the quota is the last one written.
    `kernel` keeps one kernel's samples (a multiply-bound job is best normalised by those).
    """
    if t1 <= t0:
        raise ValueError(f"span: t1 ({t1}) must be after t0 ({t0})")
    mine = sorted((q for q in quotas if q.workstation == ws), key=lambda q: q.t)
    if not mine:
        return Delivered(ws, t0, t1, None, None, None, 0, "no quota record")
    core = mine[0].core
    qt, qv = [q.t for q in mine], [q.quota_cores for q in mine]
    pts = sorted((s.t, s.factor) for s in samples if s.core == core and kernel in (None, s.kernel))
    inside = [f for t, f in pts if t0 <= t <= t1]
    if not inside:
        quota = sum(_step_value(qt, qv, t0 + (i + 0.5) * (t1 - t0) / steps) for i in range(steps)) / steps
        return Delivered(ws, t0, t1, None, quota, None, 0, "no meter samples")
    st = [t for t, _ in pts]
    speed = quota_sum = factor_sum = 0.0
    for i in range(steps):
        a, b = t0 + i * (t1 - t0) / steps, t0 + (i + 1) * (t1 - t0) / steps
        lo, hi = bisect.bisect_left(st, a), bisect.bisect_right(st, b)
        if hi > lo:
            f = sum(pts[j][1] for j in range(lo, hi)) / (hi - lo)
        else:  # nearest sample
            j = min(range(max(lo - 1, 0), min(lo + 1, len(pts))), key=lambda k: abs(st[k] - (a + b) / 2))
            f = pts[j][1]
        q = _step_value(qt, qv, (a + b) / 2)
        speed += q * f
        quota_sum += q
        factor_sum += f
    return Delivered(ws, t0, t1, speed / steps, quota_sum / steps, factor_sum / steps, len(inside), "metered")


def read_window(cluster_dir: Path, workstations: Iterable[str], t0: float) -> tuple[list[Sample], list[QuotaRow]]:
    """The samples and quotas a span from `t0` needs: the rows from about then on, and all the
    quotas when a workstation's last one before `t0` is older (a keeper that writes on change)."""
    samples = read_samples(cluster_dir / SAMPLES_CSV, since=t0)
    quotas = read_quotas(cluster_dir / QUOTAS_CSV, since=t0)
    if not all(any(q.workstation == w and q.t <= t0 for q in quotas) for w in workstations):
        quotas = read_quotas(cluster_dir / QUOTAS_CSV)
    return samples, quotas


def speed_over(cluster_dir: Path, ws: str, t0: float, t1: float, *, kernel: str | None = None) -> Delivered:
    """`delivered_speed` read from a cluster's state folder (or a copy of it kept with a run)."""
    return delivered_speed(*read_window(cluster_dir, [ws], t0), ws, t0, t1, kernel=kernel)


def series(cluster_dir: Path, t0: float, t1: float) -> list[Sample]:
    """The meter's samples in [t0, t1], every core: for storing with a run."""
    return [s for s in read_samples(cluster_dir / SAMPLES_CSV, since=t0) if t0 <= s.t <= t1]
