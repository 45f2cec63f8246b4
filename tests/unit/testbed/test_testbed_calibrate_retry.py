"""CPU calibration starts its burners afresh once when one did not start in time."""
import pytest

from testbed import calibrate


def test_burners_that_did_not_start_are_started_again_once(monkeypatch):
    calls, shown = [], []

    def once(c, seconds, warmup, workstations, start_timeout, progress):
        calls.append(start_timeout)
        if len(calls) == 1:
            raise calibrate.BurnersNotStarted("cpu calibration: burners on ws3 not running after 60 s")
        return ["measured"]

    monkeypatch.setattr(calibrate, "_measure_cpu_once", once)
    got = calibrate.measure_cpu(object(), progress=lambda what, done, total: shown.append(what))
    assert got == ["measured"] and calls == [60.0, 60.0]
    assert shown == ["cpu: a burner did not start; starting them again"]


def test_a_second_failure_to_start_is_raised_and_other_errors_are_not_retried(monkeypatch):
    calls = []

    def never(*args):
        calls.append(1)
        raise calibrate.BurnersNotStarted("cpu calibration: burners on ws3 not running after 60 s")

    monkeypatch.setattr(calibrate, "_measure_cpu_once", never)
    with pytest.raises(TimeoutError, match="burners on ws3 not running"):
        calibrate.measure_cpu(object())
    assert len(calls) == calibrate.START_ATTEMPTS == 2

    def broken(*args):
        calls.append(2)
        raise RuntimeError("ws1: the CPU burner exited with code 1 before it started")

    calls.clear()
    monkeypatch.setattr(calibrate, "_measure_cpu_once", broken)
    with pytest.raises(RuntimeError, match="exited with code 1"):
        calibrate.measure_cpu(object())
    assert calls == [2]
