"""The owner daemon's cap reading (containers/agents/owner.py), without a container."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

AGENT = Path(__file__).resolve().parents[3] / "containers" / "agents" / "owner.py"


@pytest.fixture(scope="module")
def agent():
    spec = importlib.util.spec_from_file_location("owner_agent", AGENT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _v1(tmp_path: Path, quota: str, period: str = "10000") -> tuple[str, str]:
    (tmp_path / "q").write_text(quota + "\n")
    (tmp_path / "p").write_text(period + "\n")
    return str(tmp_path / "q"), str(tmp_path / "p")


def test_the_cap_is_the_quota_the_cgroup_holds_now_not_the_one_given_at_start(agent, tmp_path):
    v1 = _v1(tmp_path, "831")
    assert agent.cap_cores(0.05, v1=v1, v2=str(tmp_path / "none")) == pytest.approx(0.0831)
    (tmp_path / "q").write_text("1712\n")  # the governor raised it
    assert agent.cap_cores(0.05, v1=v1, v2=str(tmp_path / "none")) == pytest.approx(0.1712)


def test_cgroup_v2_and_the_fallbacks(agent, tmp_path):
    missing = (str(tmp_path / "a"), str(tmp_path / "b"))
    (tmp_path / "cpu.max").write_text("20000 100000\n")
    assert agent.cap_cores(0.5, v1=missing, v2=str(tmp_path / "cpu.max")) == pytest.approx(0.2)
    (tmp_path / "cpu.max").write_text("max 100000\n")  # no quota: the cap given on the command line
    assert agent.cap_cores(0.5, v1=missing, v2=str(tmp_path / "cpu.max")) == 0.5
    assert agent.cap_cores(0.5, v1=_v1(tmp_path, "-1"), v2=str(tmp_path / "none")) == 0.5
    assert agent.cap_cores(0.5, v1=missing, v2=str(tmp_path / "none")) == 0.5
    (tmp_path / "cpu.max").write_text("garbage\n")
    assert agent.cap_cores(0.5, v1=missing, v2=str(tmp_path / "cpu.max")) == 0.5
