"""The fault campaign counts the control channel's refusals from both runners' logs: a flood
that outlasts the first run is refused by the resumed one too, and both count."""
from __future__ import annotations

from pathlib import Path

from hardening.campaign import Runner, refusals

OUTSIDE = "control channel: refused 10.9.0.7 port 41000: outside the allowed networks"
HANDSHAKE = "control channel: refused 172.30.0.3 port 41001: wrong answer"


def test_refusals_are_counted_over_the_first_and_the_resumed_runs_logs(tmp_path: Path):
    first, resumed = Runner.log_paths(tmp_path / "flood-channel.sqlite")
    assert (first.name, resumed.name) == ("flood-channel.log", "flood-channel.resume.log")
    first.write_text("\n".join([OUTSIDE, OUTSIDE, HANDSHAKE, "cell 1 done"]))
    assert refusals(first, resumed) == (2, 1)  # no resumed run: its log is missing, not an error
    resumed.write_text("\n".join([OUTSIDE, HANDSHAKE, HANDSHAKE]))
    assert refusals(first, resumed) == (3, 3)
