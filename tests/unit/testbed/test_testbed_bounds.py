"""Workstations bounded like real ones (issue 19): memory in the spec, the kernel's memory-kill
count read from the cgroup, the executor's reason for such a job, and the key pair's modes."""
from __future__ import annotations

import stat

import pytest

from scheduler.live.executor import memory_reason
from testbed.backends.docker.cgroups import read_oom_kills
from testbed.spec import DEFAULT_MEMORY, SpecError, from_dict
from testbed.sshkeys import KEY_NAME, make_keypair


def test_memory_has_a_default_a_per_workstation_value_and_takes_units():
    spec = from_dict({"defaults": {"memory": "512MiB"},
                      "workstation": [{"name": "a"}, {"name": "b", "memory": "2GiB"}, {"name": "c", "memory": 300_000_000}]})
    assert [spec.memory(n) for n in ("a", "b", "c")] == [512 << 20, 2 << 30, 300_000_000]
    assert from_dict({"workstation": [{"name": "a"}]}).memory("a") == DEFAULT_MEMORY


@pytest.mark.parametrize("value, field", [("10MiB", "workstation[0].memory"), ("nan", "workstation[0].memory"),
                                          (-1, "workstation[0].memory"), ("lots", "workstation[0].memory")])
def test_bad_memory_is_one_line_naming_the_field(value, field):
    with pytest.raises(SpecError) as err:
        from_dict({"workstation": [{"name": "a", "memory": value}]})
    assert str(err.value).startswith(f"{field}: ") and "\n" not in str(err.value)


def test_the_memory_kill_count_is_read_from_the_containers_cgroup(tmp_path):
    d = tmp_path / "memory" / "docker" / "abc123"
    d.mkdir(parents=True)
    (d / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 3\n")
    assert read_oom_kills("abc123", tmp_path) == 3
    (d / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\n")  # a kernel before 4.13
    assert read_oom_kills("abc123", tmp_path) == 0


def test_the_executor_names_the_workstation_that_ran_out_of_memory():
    out = "[ws1] Traceback ...\n[ws3] ws3: the pool rank closed without an exit\n[ws3] out of memory on ws3\n[ws4] x\n"
    assert memory_reason(out) == "out of memory on ws3"
    assert memory_reason("[ws3] ws3: the pool rank closed without an exit\n") == ""


def test_the_key_pair_is_private_to_the_clusters_folder(tmp_path):
    folder = tmp_path / "cluster" / "ssh"
    (folder).mkdir(parents=True, mode=0o755)
    (folder / KEY_NAME).write_text("old")
    (folder / KEY_NAME).chmod(0o644)  # left by an older run: made private again
    path = make_keypair(folder, comment="t")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert path.read_text().startswith("-----BEGIN OPENSSH PRIVATE KEY-----")
