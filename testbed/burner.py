"""CPU burners that say when they really ran, and the check that they covered a window.

A calibration reads each workstation's cgroup CPU counter over a window while a busy loop
runs there. The reading is only the workstation's share if the loop ran for the whole
window: on a loaded host, starting 16 execs took 5-10 s and the first loops had ended
before the window closed (issue 12). So each burner stamps its own start and end from
inside the workstation, and a window that any burner did not cover is an error.

The stamps are CLOCK_REALTIME (`date +%s.%N`), which the containers share with the host
(no time namespaces), so they compare directly with `time.time()` on the host.
"""
from __future__ import annotations

from dataclasses import dataclass

START_TAG = "start"
END_TAG = "end"
# dash runs the TERM trap at the next command boundary of the loop, so the end stamp is
# written when the loop stops (pkill, or the safety deadline of `timeout`).
SCRIPT = (f"trap 'date \"+{END_TAG} %s.%N\"; exit 0' TERM; "
          f"date \"+{START_TAG} %s.%N\"; while :; do :; done")
ERE_SPECIAL = ".[]()*+?{}|^$\\"
STOP_GRACE_S = 5.0  # `timeout` sends KILL this long after TERM if the trap did not end the loop


def argv(limit_s: float) -> list[str]:
    """The burner, ended by `timeout` after `limit_s` seconds if nobody stops it first.

    The deadline is only a safety net (a killed controller must not leave a workstation
    spinning); calibration stops the burners itself once its window is over.
    """
    if limit_s <= 0:
        raise ValueError(f"limit_s: must be > 0 seconds, got {limit_s}")
    return ["timeout", f"--kill-after={STOP_GRACE_S:g}", f"{limit_s:g}", "sh", "-c", SCRIPT]


def ere_literal(text: str) -> str:
    """`text` as a POSIX extended regex that matches exactly itself (pkill -f takes a regex)."""
    out = []
    for ch in text:
        if ch == "]":
            out.append("[]]")
        elif ch == "^":
            out.append("\\^")
        elif ch == "\\":
            out.append("[\\]")
        elif ch in ERE_SPECIAL:
            out.append(f"[{ch}]")
        else:
            out.append(ch)
    return "".join(out)


def pkill_argv() -> list[str]:
    """Stop every burner in a workstation: TERM to the shells whose whole command line is ours."""
    return ["pkill", "-TERM", "-x", "-f", ere_literal(f"sh -c {SCRIPT}")]


@dataclass(frozen=True)
class Span:
    start: float  # s, CLOCK_REALTIME
    end: float

    @property
    def seconds(self) -> float:
        return self.end - self.start


@dataclass(frozen=True)
class BurnerRun:
    """What a burner reported: None where it wrote no stamp (never started, or was killed hard)."""

    started: float | None  # s, CLOCK_REALTIME
    ended: float | None


def parse(output: str) -> BurnerRun:
    """The stamps in a burner's stdout (the last of each, should there be more)."""
    stamps: dict[str, float] = {}
    for line in output.splitlines():
        tag, _, value = line.strip().partition(" ")
        if tag in (START_TAG, END_TAG):
            try:
                stamps[tag] = float(value)
            except ValueError:
                raise ValueError(f"burner output: bad {tag} stamp {value!r}") from None
    return BurnerRun(stamps.get(START_TAG), stamps.get(END_TAG))


def uncovered(window: Span, run: BurnerRun) -> list[Span]:
    """Parts of `window` the burner was not running. A missing stamp proves nothing, so no
    start stamp means the whole window, and no end stamp means everything after the start."""
    if run.started is None:
        return [window]
    ended = run.ended if run.ended is not None else run.started
    lo, hi = max(run.started, window.start), min(ended, window.end)
    if lo >= hi:
        return [window]
    gaps = []
    if lo > window.start:
        gaps.append(Span(window.start, lo))
    if hi < window.end:
        gaps.append(Span(hi, window.end))
    return gaps


class WindowNotCovered(RuntimeError):
    """Some burner was not running for the whole measurement window: its reading is not a share."""

    def __init__(self, window: Span, gaps: dict[str, list[Span]], runs: dict[str, BurnerRun]):
        self.window, self.gaps, self.runs = window, gaps, runs
        super().__init__(describe(window, gaps, runs))


def describe(window: Span, gaps: dict[str, list[Span]], runs: dict[str, BurnerRun]) -> str:
    """One line: each workstation whose burner missed part of the window, and which part."""
    parts = []
    for ws, spans in gaps.items():
        missed = " and ".join(f"{g.start - window.start:.2f}-{g.end - window.start:.2f} s" for g in spans)
        run = runs.get(ws, BurnerRun(None, None))
        why = ("no start stamp" if run.started is None else "no end stamp" if run.ended is None
               else f"ran {run.started - window.start:+.2f} to {run.ended - window.start:+.2f} s")
        parts.append(f"{ws} missed {missed} ({why})")
    return (f"cpu calibration: a burner was not running for the whole {window.seconds:.2f} s window "
            f"(times from its start): {'; '.join(parts)}")


def check_coverage(window: Span, runs: dict[str, BurnerRun]) -> None:
    """Raise WindowNotCovered naming every workstation whose burner missed part of `window`."""
    gaps = {ws: g for ws, run in runs.items() if (g := uncovered(window, run))}
    if gaps:
        raise WindowNotCovered(window, gaps, runs)
