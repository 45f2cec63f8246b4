"""The burner's stamps and the coverage check (no Docker: the script runs on the host's dash)."""
from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest

from testbed import burner
from testbed.burner import BurnerRun, Span, WindowNotCovered, check_coverage, uncovered

W = Span(100.0, 105.0)


def test_a_burner_running_across_the_window_covers_it():
    assert uncovered(W, BurnerRun(90.0, 106.0)) == []
    assert uncovered(W, BurnerRun(100.0, 105.0)) == []


def test_a_burner_that_ended_early_misses_the_end_of_the_window():
    assert uncovered(W, BurnerRun(90.0, 103.25)) == [Span(103.25, 105.0)]


def test_a_burner_that_started_late_misses_the_start():
    assert uncovered(W, BurnerRun(101.5, 110.0)) == [Span(100.0, 101.5)]


def test_a_burner_inside_the_window_misses_both_ends():
    assert uncovered(W, BurnerRun(101.0, 104.0)) == [Span(100.0, 101.0), Span(104.0, 105.0)]


def test_a_burner_outside_the_window_misses_all_of_it():
    assert uncovered(W, BurnerRun(80.0, 95.0)) == [W]
    assert uncovered(W, BurnerRun(106.0, 120.0)) == [W]


def test_missing_stamps_prove_nothing():
    assert uncovered(W, BurnerRun(None, None)) == [W]
    assert uncovered(W, BurnerRun(None, 110.0)) == [W]
    # no end stamp: running is only known up to the start
    assert uncovered(W, BurnerRun(90.0, None)) == [W]


def test_check_coverage_names_each_workstation_and_the_part_it_missed():
    runs = {"ws1": BurnerRun(90.0, 103.0), "ws2": BurnerRun(90.0, 110.0), "ws3": BurnerRun(None, None)}
    with pytest.raises(WindowNotCovered) as info:
        check_coverage(W, runs)
    err = info.value
    assert isinstance(err, RuntimeError)  # callers that handle RuntimeError handle this too
    assert set(err.gaps) == {"ws1", "ws3"}
    assert err.gaps["ws1"] == [Span(103.0, 105.0)]
    msg = str(err)
    assert "\n" not in msg
    assert "ws1 missed 3.00-5.00 s (ran -10.00 to +3.00 s)" in msg
    assert "ws3 missed 0.00-5.00 s (no start stamp)" in msg
    assert "ws2" not in msg


def test_check_coverage_passes_when_every_burner_covered():
    check_coverage(W, {"ws1": BurnerRun(99.0, 105.5), "ws2": BurnerRun(95.0, 105.0)})


def test_parse_reads_the_stamps_and_rejects_garbage():
    assert burner.parse("start 12.5\nend 20.25\n") == BurnerRun(12.5, 20.25)
    assert burner.parse("start 12.5\n") == BurnerRun(12.5, None)
    assert burner.parse("") == BurnerRun(None, None)
    with pytest.raises(ValueError, match="bad end stamp"):
        burner.parse("start 1\nend soon\n")


def test_argv_refuses_a_non_positive_limit():
    with pytest.raises(ValueError, match="limit_s"):
        burner.argv(0)


def test_the_pkill_pattern_matches_exactly_the_burner_command_line():
    """pkill -x -f matches the joined cmdline against a POSIX ERE; grep -E uses the same regcomp."""
    pattern = burner.pkill_argv()[-1]
    cmdline = f"sh -c {burner.SCRIPT}"
    for text, expected in [(cmdline, 0), (cmdline + " ", 1), ("x" + cmdline, 1),
                           (cmdline.replace("%s.%N", "%sX%N"), 1)]:
        res = subprocess.run(["grep", "-E", "-x", "-e", pattern], input=text + "\n", capture_output=True, text=True)
        assert res.returncode == expected, text


def test_ere_literal_escapes_every_special_character():
    text = "a.b[c]d(e)f*g+h?i{j}k|l^m$n\\o"
    res = subprocess.run(["grep", "-E", "-x", "-e", burner.ere_literal(text)], input=text + "\n",
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    res = subprocess.run(["grep", "-E", "-x", "-e", burner.ere_literal(text)], input=text.replace(".", "X") + "\n",
                         capture_output=True, text=True)
    assert res.returncode == 1


def test_the_real_script_stamps_its_start_and_its_end_on_term():
    before = time.time()
    proc = subprocess.Popen(["sh", "-c", burner.SCRIPT], stdout=subprocess.PIPE, text=True)
    try:
        first = proc.stdout.readline()
        time.sleep(0.3)
        os.kill(proc.pid, signal.SIGTERM)
        rest, _ = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    after = time.time()
    run = burner.parse(first + rest)
    assert proc.returncode == 0
    assert before <= run.started < run.ended <= after
    assert run.ended - run.started >= 0.25


def test_timeout_ends_the_burner_with_an_end_stamp():
    """The safety deadline goes through the same trap, so an early end is seen, not silent."""
    out = subprocess.run(burner.argv(0.5), capture_output=True, text=True, timeout=15)
    run = burner.parse(out.stdout)
    assert out.returncode == 124  # timeout's code when the deadline struck
    assert run.started is not None and run.ended is not None
    assert 0.4 <= run.ended - run.started <= 3.0
