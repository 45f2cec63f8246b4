"""Integration: CPU calibration of a small all-busy cluster, and a burner killed mid-window."""
from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest

from testbed import burner, cluster, from_dict
from testbed.calibrate import calibrate, measure_cpu

pytestmark = pytest.mark.integration

CAP = 0.1  # cores per workstation
TOLERANCE = 0.05  # |measured - asked| / asked: cpuacct counts what CFS gave, not guest speed


@pytest.fixture(scope="module")
def busy3(docker_engine):
    spec = from_dict({"name": f"hb-cal-{os.getpid()}", "workstation": [{"name": "ws", "count": 3, "cpu": CAP}]})
    with cluster(spec) as c:
        yield c


def burners_left(c, ws: str) -> list[str]:
    return c.exec(ws, ["pgrep", "-x", "-f", burner.pkill_argv()[-1]]).stdout.split()


def test_calibration_reads_the_caps_and_every_burner_covered_the_window(busy3):
    result = calibrate(busy3, cpu_seconds=3, links=[])
    saved = json.loads(Path(result["path"]).read_text())
    rows = {x["workstation"]: x for x in saved["cpu"]}
    print({ws: f"{x['measured']:.4f} ({x['error']:+.2%})" for ws, x in rows.items()})
    assert set(rows) == set(busy3.workstations)
    for ws, x in rows.items():
        assert abs(x["error"]) <= TOLERANCE, f"{ws}: {x['measured']:.4f} cores for {CAP} asked"
        assert x["burner"]["start"] <= x["window"]["start"], ws
        assert x["burner"]["end"] >= x["window"]["end"], ws
        assert x["window"]["end"] - x["window"]["start"] >= 3.0
        assert burners_left(busy3, ws) == [], f"{ws}: a burner still runs after calibration"


def test_a_burner_killed_inside_the_window_is_an_error_naming_its_workstation(busy3):
    warmup, seconds = 0.5, 6.0
    pattern = burner.pkill_argv()[-1]
    all_busy = threading.Event()

    def progress(label: str, done: int, total: int) -> None:
        if label == "cpu: all workstations busy" and done == 0:
            all_busy.set()

    def kill_ws2_midway() -> None:
        # Timed from the moment every burner runs, not from ws2's: on a loaded host the
        # others may start seconds later, and an exec may take seconds to land.
        if all_busy.wait(timeout=60):
            time.sleep(warmup + 1.0)
            busy3.exec("ws2", ["pkill", "-TERM", "-x", "-f", pattern])  # someone else stops it

    killer = threading.Thread(target=kill_ws2_midway)
    killer.start()
    try:
        with pytest.raises(burner.WindowNotCovered) as info:
            measure_cpu(busy3, seconds, warmup, progress=progress)
    finally:
        killer.join(timeout=40)
    err = info.value
    print(err)
    assert set(err.gaps) == {"ws2"}
    assert err.gaps["ws2"][-1].end == err.window.end  # it missed the end of the window
    assert "ws2 missed" in str(err) and "\n" not in str(err)
    for ws in busy3.workstations:
        assert burners_left(busy3, ws) == [], f"{ws}: a burner still runs after the failed calibration"
