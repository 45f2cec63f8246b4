"""workloads.ssh_masters: one process per workstation opens (or checks) all its masters in turn."""
from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from workloads import ssh_masters

FAKE_SSH = """#!/bin/sh
echo "$*" >> "$NOWLAB_FAKE_SSH_LOG"
for last; do :; done
[ "$last" != "down" ]
"""


@pytest.fixture
def fake_ssh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    ssh = tmp_path / "ssh"
    ssh.write_text(FAKE_SSH)
    ssh.chmod(ssh.stat().st_mode | stat.S_IEXEC)
    log = tmp_path / "calls"
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("NOWLAB_FAKE_SSH_LOG", str(log))
    return log


def test_open_asks_a_master_of_each_host_in_turn_and_says_which_failed(fake_ssh: Path, capsys):
    assert ssh_masters.main(["open", "--path", "/tmp/m-%C", "ws2", "down", "ws4"]) == 1
    calls = fake_ssh.read_text().splitlines()
    assert calls == [f"-M -N -f -o ControlPersist=yes -o ControlPath=/tmp/m-%C {h}" for h in ("ws2", "down", "ws4")]
    assert "missing to: down" in capsys.readouterr().err


def test_check_is_ok_only_when_every_master_answers(fake_ssh: Path):
    assert ssh_masters.main(["check", "--path", "/tmp/m-%C", "ws2", "ws3"]) == 0
    assert ssh_masters.main(["check", "--path", "/tmp/m-%C", "down", "ws3"]) == 1
    calls = fake_ssh.read_text().splitlines()
    assert calls[-1] == "-o ControlPath=/tmp/m-%C -O check down"  # stops at the first missing


def test_no_hosts_is_nothing_to_do(fake_ssh: Path):
    assert ssh_masters.main(["open", "--path", "/tmp/m-%C"]) == 0
    assert not fake_ssh.exists()
