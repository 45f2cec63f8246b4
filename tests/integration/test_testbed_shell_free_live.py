"""Integration: traffic and owner daemons started and stopped through argv, no shell (issue 13, item 8).

Two workstations of 0.1 core each: small enough to run beside other clusters.
"""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from testbed import cluster, from_dict
from testbed.load import owners
from testbed.load import traffic
from testbed.spec import OwnerLoad, SpecError

pytestmark = pytest.mark.integration

NOWLAB = str(Path(sys.executable).parent / "nowlab")
NAME = "hc-shellfree"


@pytest.fixture(scope="module")
def pair(docker_engine):
    spec = from_dict({"name": NAME, "defaults": {"egress": "20mbit"},
                      "workstation": [{"name": "ws", "count": 2, "cpu": 0.1}]})
    with cluster(spec) as c:
        yield c


def iperf3_cmdlines(c, ws: str) -> list[str]:
    return c.exec(ws, ["pgrep", "-a", "-x", "iperf3"]).stdout.splitlines()


def wait_until(check, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while not check() and time.monotonic() < deadline:
        time.sleep(0.1)
    return check()


def test_traffic_starts_restarts_and_stops_by_command_line(pair):
    with pytest.raises(SpecError, match=r"^src: unknown workstation 'ws9' \(known: ws1, ws2\)$"):
        traffic.stop(pair, "ws9", "ws2")
    with pytest.raises(SpecError, match=r"^dst: unknown workstation '\*'"):
        traffic.stop(pair, "ws1", "*")  # a glob, which the old shell loop expanded
    try:
        traffic.start(pair, "ws1", "ws2", "4mbit")
        assert wait_until(lambda: len(iperf3_cmdlines(pair, "ws1")) == 1)
        assert iperf3_cmdlines(pair, "ws2")[0].endswith("iperf3 -s -p 5301")
        traffic.start(pair, "ws1", "ws2", "6mbit")  # a replacement waits for the old server to go
        assert wait_until(lambda: len(iperf3_cmdlines(pair, "ws1")) == 1)
        assert " -b " in iperf3_cmdlines(pair, "ws1")[0] and len(iperf3_cmdlines(pair, "ws2")) == 1
        assert traffic.stop(pair, "ws1", "ws2") == 2
        assert wait_until(lambda: not iperf3_cmdlines(pair, "ws1") and not iperf3_cmdlines(pair, "ws2"))
        traffic.start(pair, "ws2", "ws1", "4mbit")
        assert traffic.stop(pair) == 2  # every flow
        assert traffic.stop(pair) == 0
    finally:
        traffic.stop(pair)


def test_the_cli_names_the_bad_field_in_one_line(pair):
    out = subprocess.run([NOWLAB, "traffic", "stop", "ws9", "ws2", "--cluster", NAME],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode != 0
    assert "src: unknown workstation 'ws9' (known: ws1, ws2)" in out.stdout + out.stderr


def test_owner_daemon_stops_by_pid_file_without_a_shell(pair):
    try:
        owners.start(pair, {"ws2": OwnerLoad(n=1, z=0.5, d=0.05)}, seed=2)
        assert pair.exec("ws2", ["pgrep", "-f", "agents/owner.py"]).stdout.split()
    finally:
        owners.stop(pair, ["ws2"])
    assert not pair.exec("ws2", ["test", "-e", owners.PIDFILE]).ok
    assert wait_until(lambda: pair.exec("ws2", ["pgrep", "-f", "agents/owner.py"]).exit_code == 1)
    owners.stop(pair, ["ws1"])  # none running there: nothing to do, no error


def test_a_live_bandwidth_change_goes_through_the_checked_copy(pair):
    pair.set_bandwidth("ws1", "8mbit")
    assert pair.spec.workstation("ws1").egress == 8_000_000
    with pytest.raises(SpecError, match="^egres: not a workstation field"):
        pair._with_workstation(pair.spec, "ws1", egres=1)
