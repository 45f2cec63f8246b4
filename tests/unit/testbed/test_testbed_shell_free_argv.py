"""The argv builders that replaced `sh -c` strings (issue 13, items 8 and 10): no containers."""
from __future__ import annotations

import re

import pytest

from testbed import from_dict
from testbed.load import owners
from testbed.load import traffic
from testbed.cluster import listening_ports, with_workstation
from testbed.spec import SpecError

PORTS = [5301, 5302, 5303]


def cmdline(argv: list[str]) -> str:
    """What `pkill -f` matches against: /proc/PID/cmdline with its NULs read as spaces."""
    return " ".join(argv)


def test_a_flow_pattern_matches_its_own_server_and_client_exactly():
    server, client = traffic.flow_patterns("10.0.0.2", 5301)
    assert re.fullmatch(server, cmdline(traffic.server_argv(5301)))
    assert re.fullmatch(client, cmdline(traffic.client_argv("10.0.0.2", 5301, 11_500_000)))
    # not another flow's server or client, nor a look-alike address
    assert not re.fullmatch(server, cmdline(traffic.server_argv(5302)))
    assert not re.fullmatch(server, cmdline(traffic.server_argv(53010)))
    for ip, port in (("10.0.0.25", 5301), ("10x0x0x2", 5301), ("10.0.0.2", 5302)):
        assert not re.fullmatch(client, cmdline(traffic.client_argv(ip, port, 1000))), (ip, port)


def test_stopping_all_flows_spares_a_calibration_iperf3_on_5201():
    server, client = traffic.any_flow_patterns(PORTS)
    for port in PORTS:
        assert re.fullmatch(server, cmdline(traffic.server_argv(port)))
        assert re.fullmatch(client, cmdline(traffic.client_argv("172.30.0.3", port, 4_000_000)))
    for argv in (["iperf3", "-s", "-1", "-J"], ["iperf3", "-c", "172.30.0.3", "-t", "3"],
                 traffic.server_argv(5201), traffic.server_argv(5304), traffic.server_argv(53010),
                 traffic.client_argv("172.30.0.3", 5201, 1000)):
        for pattern in (server, client):
            assert not re.fullmatch(pattern, cmdline(argv)), argv


def test_pkill_and_pidwait_take_the_pattern_as_one_argument():
    pattern = traffic.any_flow_patterns(PORTS)[1]
    assert traffic.pkill_argv(pattern) == ["pkill", "--count", "-TERM", "-x", "-f", pattern]
    assert traffic.pidwait_argv(pattern)[-1] == pattern
    assert [traffic.parse_count(s) for s in ("2\n", "0\n", "", "pkill: bad\n")] == [2, 0, 0, 0]


def test_traffic_names_the_field_of_an_unknown_workstation():
    known = ["ws1", "ws2"]
    assert traffic.check_workstation("src", "ws1", known) == "ws1"
    with pytest.raises(SpecError, match=r"^src: unknown workstation 'ws9' \(known: ws1, ws2\)$"):
        traffic.check_workstation("src", "ws9", known)
    with pytest.raises(SpecError, match=r"^dst: unknown workstation '\*' "):
        traffic.check_workstation("dst", "*", known)


def test_owner_stop_reads_a_pid_and_kills_it_by_argv():
    assert owners.parse_pid("1234\n") == 1234
    assert [owners.parse_pid(s) for s in ("", "\n", "12 34", "-1", "1", "$(reboot)")] == [None] * 6
    assert owners.kill_argv(1234) == ["kill", "-TERM", "1234"]
    with pytest.raises(ValueError, match="^pid: "):
        owners.kill_argv(1)


def test_listening_ports_reads_ss_without_a_header():
    out = ("LISTEN 0      128          0.0.0.0:22        0.0.0.0:*\n"
           "LISTEN 0      5            0.0.0.0:5301      0.0.0.0:*\n"
           "LISTEN 0      128             [::]:22           [::]:*\n"
           "LISTEN 0      4096               *:53010           *:*\n")
    assert listening_ports(out) == {22, 5301, 53010}
    assert listening_ports("") == set()


@pytest.fixture
def spec():
    return from_dict({"name": "hc-unit", "workstation": [{"name": "ws", "count": 2, "cpu": 0.1}]})


def test_with_workstation_changes_the_named_field_of_one_workstation(spec):
    new = with_workstation(spec, "ws2", cpu=0.05, egress=8_000_000)
    assert new.workstation("ws2").cpu == 0.05 and new.workstation("ws2").egress == 8_000_000
    assert new.workstation("ws1") == spec.workstation("ws1")


def test_with_workstation_refuses_a_misspelled_field(spec):
    with pytest.raises(SpecError, match=r"^egres: not a workstation field \(known: name, cpu, .*egress"):
        with_workstation(spec, "ws1", egres=8_000_000)
