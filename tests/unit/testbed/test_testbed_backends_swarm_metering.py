"""The Swarm backend's speed probes as plain data (testbed/backends/swarm/metering.py); the
probes themselves run in tests/integration/test_testbed_backends_swarm_live.py."""
from __future__ import annotations

import pytest

from testbed.backends.docker import engine
from testbed.backends.swarm import metering
from testbed.spec import HOSTNAME


def test_a_probe_is_pinned_to_the_metered_cores_labelled_and_uncapped():
    cfg = metering.probe_config("lab", "node-2", "nowlab/workstation:abc", [3, 1])
    assert cfg["entrypoint"] == ["python3", "-m", "workloads.speed_probe"]
    assert cfg["command"] == ["--cores", "1,3"] and cfg["cpuset_cpus"] == "1,3"
    assert cfg["labels"] == {engine.LABEL: "lab", metering.ROLE_LABEL: "meter"}  # remove/gc take it
    assert "cpu_quota" not in cfg and engine.WS_LABEL not in cfg["labels"]
    assert cfg["name"] == "nowlab-lab_meter_node-2" and not HOSTNAME.match("lab_meter_node-2")
    once = metering.probe_config("lab", "node-2", "img", [0], seconds=4)
    assert once["command"] == ["--cores", "0", "--seconds", "4"] and once["name"] == "nowlab-lab_probe_node-2"
    with pytest.raises(ValueError, match="^cores: none to meter on host 'n1'$"):
        metering.probe_config("lab", "n1", "img", [])


def test_a_probe_gets_the_workloads_and_no_key():
    files = {"/run/secrets/nowlab_ssh_key": b"PRIVATE", "/run/secrets/nowlab_ssh_key.pub": b"ssh-ed25519 A",
             "/opt/nowlab/workloads/speed_probe.py": b"x", "/etc/openmpi/openmpi-mca-params.conf": b"y"}
    assert metering.probe_files(files) == {"/opt/nowlab/workloads/speed_probe.py": b"x"}
    assert "/opt/nowlab/workloads/speed_probe.py" in engine.workloads_files()
