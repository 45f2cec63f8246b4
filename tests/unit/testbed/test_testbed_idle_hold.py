"""testbed/idle_hold.py: the PM QoS request that keeps this host's idle cores polling while a cluster is up."""
from __future__ import annotations

import os
import struct
from pathlib import Path

import pytest

from testbed.idle_hold import QOS_PATH, IdleHold
from testbed.spec import SpecError, from_dict


def read_qos(path: Path) -> int:
    with path.open("rb") as f:
        return struct.unpack("i", f.read(4))[0]


def test_poll_writes_a_zero_latency_and_holds_it_until_closed(tmp_path):
    qos = tmp_path / "qos"
    qos.touch()
    with IdleHold("poll", qos) as hold:
        assert hold.held and hold.status == "poll (PM QoS latency 0 held)"
        assert qos.read_bytes() == struct.pack("i", 0)
    assert not hold.held


def test_halt_and_remote_touch_nothing(tmp_path):
    qos = tmp_path / "qos"
    for mode, says in (("halt", "halt (the kernel's default)"),
                       ("remote", "not held: the workstations' cores are other hosts'")):
        with IdleHold(mode, qos) as hold:
            assert not hold.held and hold.status == says
    assert not qos.exists()


def test_a_host_without_the_device_runs_on_and_says_why(tmp_path):
    with IdleHold("poll", tmp_path / "no" / "cpu_dma_latency") as hold:
        assert not hold.held
        assert hold.status.startswith("not held: ") and "cpu_dma_latency" in hold.status


@pytest.mark.skipif(not QOS_PATH.exists() or os.geteuid() != 0, reason="needs root and /dev/cpu_dma_latency")
def test_the_kernel_takes_the_request_and_drops_it_on_close():
    """The real device: the aggregate latency the kernel enforces is 0 while held, and what it was after."""
    before = read_qos(QOS_PATH)
    with IdleHold("poll") as hold:
        assert hold.held and read_qos(QOS_PATH) == 0
    assert read_qos(QOS_PATH) == before


def test_the_spec_polls_by_default_and_names_a_bad_value():
    assert from_dict({"name": "a", "workstation": [{"name": "ws1"}]}).defaults.host_idle == "poll"
    assert from_dict({"name": "a", "defaults": {"host_idle": "halt"},
                      "workstation": [{"name": "ws1"}]}).defaults.host_idle == "halt"
    with pytest.raises(SpecError, match=r"defaults\.host_idle"):
        from_dict({"name": "a", "defaults": {"host_idle": "spin"}, "workstation": [{"name": "ws1"}]})
