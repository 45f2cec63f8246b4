"""The mpiexec command line, built apart from any cluster handle (testbed/mpi_command.py): the
cluster, its resident world and its warm paths share it, and none of them builds it for another."""
from __future__ import annotations

import types

import pytest

from testbed import pool
from testbed.mpi_command import CLIENT_ARGV, GUEST_PREFIX, MPI_FAST_ARGS, mpi_argv, through_zygote, with_recovery

WORKSTATIONS = ["ws1", "ws2", "ws3", "ws4"]


def test_python_modules_go_through_the_zygote_client_and_other_programs_do_not():
    assert through_zygote(["python3", "-m", "workloads.cg", "--n", "5"]) == [
        *CLIENT_ARGV, "-m", "workloads.cg", "--n", "5"]
    assert through_zygote(["true"]) == ["true"]
    assert through_zygote(["python3", "script.py"]) == ["python3", "script.py"]


def test_the_coordinator_is_the_lowest_numbered_workstation_and_each_is_listed_once():
    with pytest.raises(ValueError, match="lowest-numbered first"):
        mpi_argv(WORKSTATIONS, ["ws3", "ws1"], ["true"])
    with pytest.raises(ValueError, match="once"):
        mpi_argv(WORKSTATIONS, ["ws1", "ws1"], ["true"])
    with pytest.raises(ValueError, match="at least one"):
        mpi_argv(WORKSTATIONS, [], ["true"])


def test_a_fast_guest_launch_uses_the_masters_the_zygote_and_idle_priority():
    argv = mpi_argv(WORKSTATIONS, ["ws1", "ws4"], ["python3", "-m", "workloads.hello"], env={"A": "1"},
                    forward=["SECRET"], ranks_per_host=2)
    assert argv[argv.index("-H") + 1] == "ws1:2,ws4:2" and argv[argv.index("-n") + 1] == "4"
    assert argv[argv.index("plm_rsh_args") - 1:][:len(MPI_FAST_ARGS)] == MPI_FAST_ARGS
    assert ["-x", "A=1"] == argv[argv.index("A=1") - 1:argv.index("A=1") + 1]
    assert argv[argv.index("SECRET") - 1] == "-x"
    tail = [*GUEST_PREFIX, *CLIENT_ARGV, "-m", "workloads.hello"]
    assert argv[-len(tail):] == tail
    cold = mpi_argv(WORKSTATIONS, ["ws2"], ["python3", "-m", "workloads.hello"], guest=False, fast=False)
    assert "plm_rsh_args" not in cold and cold[-3:] == ["python3", "-m", "workloads.hello"]
    assert not set(GUEST_PREFIX) & set(cold)


def test_recovery_goes_right_after_mpiexec():
    assert with_recovery(["mpiexec", "-H", "ws1:1"], "/tmp/out") == [
        "mpiexec", "--enable-recovery", "--mca", "orte_abort_on_non_zero_status", "0",
        "--output-filename", "/tmp/out", "-H", "ws1:1"]


def test_the_pool_builds_its_world_from_the_workstations_alone():
    """No Cluster: the resident world needs only the workstations' names for its command line."""
    cluster = types.SimpleNamespace(workstations=WORKSTATIONS)
    argv = pool.pool_argv(cluster, ["ws1", "ws2", "ws3"], slots=2)
    assert argv[:2] == ["mpiexec", "--enable-recovery"] and argv[argv.index("-H") + 1] == "ws1:2,ws2:2,ws3:2"
    assert argv[-3:] == ["python3", "-m", pool.MARK] and "plm_rsh_args" not in argv
    with pytest.raises(ValueError, match="slots"):
        pool.pool_argv(cluster, ["ws1"], slots=0)
