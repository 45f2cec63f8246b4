"""Spec validation: every kind of bad input is one line naming the field."""
from __future__ import annotations

import pytest

from testbed.placement import place
from testbed.spec import SpecError, cfs_period_us, cfs_quota_us, from_dict, load
from testbed.units import RateError, format_rate, parse_rate


def ws(**kw):
    return {"name": "ws1", **kw}


@pytest.mark.parametrize("raw, field, words", [
    ({"workstation": [ws(cpu=0)]}, "workstation[0].cpu", "> 0"),
    ({"workstation": [ws(cpu=-0.5)]}, "workstation[0].cpu", "> 0"),
    ({"defaults": {"cpu": 0}, "workstation": [ws()]}, "defaults.cpu", "> 0"),
    ({"workstation": [ws(), ws()]}, "workstation[1].name", "duplicate"),
    ({"workstation": [ws(name="WS_1")]}, "workstation[0].name", "hostname"),
    ({"workstation": [ws(name="-ws")]}, "workstation[0].name", "hostname"),
    ({"workstation": [ws(egress="10mbps")]}, "workstation[0].egress", "80mbit"),
    ({"workstation": [ws(egress="10kbps")]}, "workstation[0].egress", "bytes per second"),
    ({"workstation": [ws(egress="10parsecs")]}, "workstation[0].egress", "unknown rate unit"),
    ({"workstation": [ws(links={"ws9": "1mbit"})]}, "workstation[0].links.ws9", "unknown peer"),
    ({"workstation": [ws(links={"ws1": "1mbit"})]}, "workstation[0].links.ws1", "itself"),
    ({"workstation": [ws(cpus=0.2)]}, "workstation[0].cpus", "unknown option"),
    ({"workstation": [ws(**{"class": "fast"})]}, "workstation[0].class", "unknown speed class"),
    ({"classes": {"fast": 1.5}, "workstation": [ws()]}, "classes", "fast"),
    ({"workstation": []}, "workstation", "at least 1"),
    ({}, "workstation", "required"),
    ({"name": "Bad Name", "workstation": [ws()]}, "name", "cluster name"),
])
def test_bad_spec_is_one_line_naming_the_field(raw, field, words):
    with pytest.raises(SpecError) as info:
        from_dict(raw)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(field), message
    assert words in message


def test_shares_that_do_not_fit_say_how_much_is_asked_and_available():
    spec = from_dict({"workstation": [{"name": "ws", "count": 5, "cpu": 0.5}]})
    with pytest.raises(SpecError) as info:
        place(spec, cores=[0, 1])
    assert "2.50 cores" in str(info.value) and "1.80 are available" in str(info.value)


def test_placement_balances_cores_and_keeps_each_under_90_percent():
    spec = from_dict({"workstation": [{"name": "ws", "count": 16, "cpu": 0.1}]})
    placement = place(spec, cores=[0, 1])
    assert sorted(placement.cores.values()).count(0) == 8
    assert placement.load == pytest.approx({0: 0.8, 1: 0.8})


def test_placement_refuses_a_core_above_90_percent_even_if_the_total_fits():
    spec = from_dict({"workstation": [{"name": "a", "cpu": 0.6}, {"name": "b", "cpu": 0.6},
                                      {"name": "c", "cpu": 0.5}]})
    with pytest.raises(SpecError, match="per core"):
        place(spec, cores=[0, 1])


def test_oversubscription_warns_when_allowed():
    spec = from_dict({"oversubscribe": True, "workstation": [{"name": "ws", "count": 4, "cpu": 0.5}]})
    with pytest.warns(UserWarning, match="oversubscribed"):
        place(spec, cores=[0])


def test_placement_counts_what_other_clusters_pinned():
    spec = from_dict({"workstation": [{"name": "ws", "count": 2, "cpu": 0.4}]})
    placement = place(spec, cores=[0, 1], taken={0: 0.8})
    assert set(placement.cores.values()) == {1}


@pytest.mark.parametrize("text, bits", [("10mbit", 10_000_000), ("1.5gbit", 1_500_000_000), ("500kbit", 500_000),
                                        ("64bit", 64), (1_000_000, 1_000_000), ("20Mbit", 20_000_000),
                                        ("1000", 1000)])
def test_rates_are_bits_per_second(text, bits):
    assert parse_rate(text) == bits


@pytest.mark.parametrize("bad", ["10mbps", "1MBps", "5kbps", "3gbps", "-1mbit", "0", "fast", 1.5, True])
def test_bad_rates_are_refused(bad):
    with pytest.raises(RateError):
        parse_rate(bad)


def test_format_rate():
    assert format_rate(10_000_000) == "10 Mbit/s"
    assert format_rate(1_500) == "1.5 kbit/s"


def test_speed_classes_defaults_and_counts():
    spec = from_dict({"defaults": {"cpu": 0.2, "egress": "50mbit"}, "classes": {"fast": 0.4},
                      "workstation": [{"name": "f", "count": 2, "class": "fast"}, {"name": "s"},
                                      {"name": "x", "cpu": 0.3, "class": "fast"}]})
    assert spec.names == ["f1", "f2", "s", "x"]
    assert [spec.cpu(n) for n in spec.names] == [0.4, 0.4, 0.2, 0.3]
    assert spec.egress("s") == 50_000_000


def test_links_are_symmetric_unless_the_peer_sets_its_own():
    spec = from_dict({"workstation": [{"name": "a", "links": {"b": "10mbit", "c": "5mbit"}},
                                      {"name": "b"}, {"name": "c", "links": {"a": "2mbit"}}]})
    assert spec.link_rate("a", "b") == spec.link_rate("b", "a") == 10_000_000
    assert spec.link_rate("a", "c") == 5_000_000
    assert spec.link_rate("c", "a") == 2_000_000
    asym = from_dict({"symmetric_links": False, "workstation": [{"name": "a", "links": {"b": "10mbit"}},
                                                                {"name": "b"}]})
    assert asym.link_rate("b", "a") == asym.egress("b")


def test_cfs_period_keeps_the_quota_at_least_one_millisecond():
    assert cfs_period_us(0.25) == 10_000 and cfs_quota_us(0.25, 10_000) == 2_500
    assert cfs_period_us(0.05) == 20_000 and cfs_quota_us(0.05, 20_000) == 1_000
    assert cfs_period_us(0.5, 100_000) == 100_000


def test_toml_spec_is_named_after_its_file(tmp_path):
    path = tmp_path / "Lab_A.toml"
    path.write_text('[[workstation]]\nname = "ws1"\ncpu = 0.2\n')
    assert load(path).name == "lab-a"
    path.write_text('[[workstation]]\nname = "ws1"\ncpu = "x"\n')
    with pytest.raises(SpecError, match=r"^Lab_A.toml: workstation\[0\].cpu"):
        load(path)


def test_shipped_specs_are_valid():
    from pathlib import Path
    specs = sorted((Path(__file__).resolve().parents[3] / "compose" / "specs").glob("*.toml"))
    assert specs
    for path in specs:
        spec = load(path)
        governed = any(spec.speed(ws) is not None for ws in spec.names)
        # a governed spec is placed with each core's measured factor: 2.0 is this host's usual
        place(spec, cores=[0, 1], factors={0: 2.0, 1: 2.0} if governed else None)


def test_a_count_past_the_limit_is_one_line_before_anything_is_expanded():
    """Found by the fuzzer: `count = 1000000000` built a list that took 23 GB before validation."""
    from testbed.spec import MAX_WORKSTATIONS, SpecError

    with pytest.raises(SpecError, match=r"^workstation\[1\]\.count: 1000000000 makes more than 4096 workstations"):
        from_dict({"workstation": [{"name": "a", "count": 2}, {"name": "ws", "count": 1_000_000_000}]})
    assert len(from_dict({"workstation": [{"name": "ws", "count": MAX_WORKSTATIONS}]}).workstations) == MAX_WORKSTATIONS
