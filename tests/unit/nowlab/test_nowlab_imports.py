"""Start-up: building the command tree, or simulating, loads none of the heavy libraries.

Each check runs in a fresh interpreter, since this test process has imported them already.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
HEAVY = ("docker", "pandas", "paramiko", "matplotlib", "scipy")


def loaded_after(code: str) -> list[str]:
    """Top-level packages among HEAVY (and testbed) that `code` left in sys.modules."""
    probe = (f"{code}\nimport json, sys\n"
             f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & {set(HEAVY) | {'testbed'}!r})))")
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=60,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_command_tree_loads_no_heavy_library() -> None:
    assert loaded_after("import nowlab.cli") == []


def test_simulate_path_needs_neither_docker_nor_pandas_nor_testbed() -> None:
    code = "from scheduler.engine import simulate\nfrom experiments.traces.jobs_csv import read_jobs\n" \
           "from scheduler.registry import get_policy\nfrom experiments.traces.csv_out import write_jobs, write_timeline"
    assert loaded_after(code) == []


def test_light_testbed_module_does_not_load_docker() -> None:
    assert loaded_after("import testbed.units, testbed.progress, testbed.spec") == ["testbed"]


def test_testbed_names_load_on_use_and_cluster_stays_the_context_manager() -> None:
    """`testbed.cluster` is the cluster() function, also after its submodule is imported directly."""
    code = ("import inspect, testbed\nfrom testbed.cluster import Cluster\n"
            "assert inspect.isfunction(testbed.cluster), testbed.cluster\n"
            "assert testbed.Cluster is Cluster\n"
            "from testbed import SpecError, from_dict, ClusterSpec, cluster\n"
            "import testbed.load.model\nassert testbed.load.model.owner_utilization\n"
            "assert cluster is testbed.cluster and from_dict.__module__ == 'testbed.spec'")
    assert "docker" not in loaded_after(code)  # Docker loads with the cluster's backend, on first use


def test_help_lists_the_commands() -> None:
    out = subprocess.run([sys.executable, "-m", "nowlab", "--help"], cwd=ROOT, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    for command in ("simulate", "execute", "up", "down", "profile"):
        assert command in out.stdout


def test_simulate_command_run_whole_loads_none_of_them_and_writes_pandas_files(tmp_path) -> None:
    """The whole `nowlab simulate`, run in a fresh interpreter: no pandas (nor docker, nor testbed), and
    its two CSVs are what the frames' to_csv writes."""
    from scheduler.engine import simulate
    from experiments.traces.jobs_csv import read_jobs

    jobs = tmp_path / "jobs.csv"
    jobs.write_text("id,arrival,W,alpha,beta,pmax,phases\n"
                    "1,0,8,0,0,4,4\n2,0.6,2,0,0,4,1\nj3,0.6,4,0.5,0.1,,2\n")
    tl, out = tmp_path / "tl.csv", tmp_path / "out.csv"
    argv = ["simulate", str(jobs), "-p", "FOLDING", "-P", "4", "--timeline", str(tl), "--jobs-out", str(out)]
    code = (f"from nowlab.cli import app\ntry:\n    app({argv!r})\n"
            "except SystemExit as exc:\n    assert not exc.code, exc")
    assert loaded_after(code) == []
    result = simulate(read_jobs(jobs), "FOLDING", 4)
    result.timeline_dataframe().to_csv(tmp_path / "pd_tl.csv", index=False)
    result.to_dataframe().to_csv(tmp_path / "pd_out.csv", index=False)
    assert tl.read_bytes() == (tmp_path / "pd_tl.csv").read_bytes()
    assert out.read_bytes() == (tmp_path / "pd_out.csv").read_bytes()
