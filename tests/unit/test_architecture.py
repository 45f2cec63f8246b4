"""The layers of docs/architecture.md are a contract: import-linter checks them on every run."""
from __future__ import annotations

import fcntl
import shutil
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def lint_imports() -> str:
    exe = Path(sys.executable).parent / "lint-imports"
    return str(exe) if exe.exists() else shutil.which("lint-imports") or "lint-imports"


def test_every_import_contract_is_kept():
    with one_at_a_time():
        proc = subprocess.run([lint_imports(), "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "broken" not in proc.stdout.lower().replace("0 broken", "")
    kept = proc.stdout.count("KEPT")
    assert kept >= 9, proc.stdout  # every contract of pyproject.toml ran


@contextmanager
def one_at_a_time():
    """The probes below write modules into the tree: under pytest-xdist, a probe written for one
    test would break the run of another. Every lint-imports run of this file holds one lock."""
    with open(Path(tempfile.gettempdir()) / "nowlab-lint-imports.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def lint_with(probe: Path, source: str, *others: tuple[Path, str]) -> subprocess.CompletedProcess:
    """lint-imports with extra modules written for the run and removed at once."""
    with one_at_a_time():
        written = [probe, *(path for path, _ in others)]
        for path, text in [(probe, source), *others]:
            path.write_text(text)
        try:
            return subprocess.run([lint_imports(), "--no-cache"], cwd=ROOT, capture_output=True, text=True)
        finally:
            for path in written:
                path.unlink()


def test_a_broken_layer_is_caught(tmp_path):
    # The check can fail: a workloads module importing the testbed breaks two contracts.
    proc = lint_with(ROOT / "workloads" / "_layer_probe.py", "import testbed  # deliberately upward\n")
    assert proc.returncode != 0
    assert "workloads._layer_probe -> testbed" in proc.stdout


def test_the_node_side_importing_the_host_side_is_caught():
    # What runs on a workstation (workloads outside workloads.host) must not need the host's job control.
    proc = lint_with(ROOT / "workloads" / "_node_probe.py", "from workloads.host import launch  # node -> host\n")
    assert proc.returncode != 0
    assert "workloads._node_probe -> workloads.host.launch" in proc.stdout


def test_an_import_of_the_top_layer_is_caught():
    # Benchmarks, checks and hardening harnesses are run, never imported: the experiments importing one breaks the layers.
    proc = lint_with(ROOT / "experiments" / "_top_probe.py", "import checks.calibration  # deliberately upward\n")
    assert proc.returncode != 0
    assert "experiments._top_probe -> checks.calibration" in proc.stdout


def test_docker_outside_the_backends_is_caught():
    # The load package must go through testbed.backends: a module of it importing Docker breaks a contract.
    proc = lint_with(ROOT / "testbed" / "load" / "_backend_probe.py", "import docker  # around the backends\n")
    assert proc.returncode != 0
    assert "testbed.load._backend_probe -> docker" in proc.stdout


def test_test_files_are_named_after_the_folder_they_test():
    """tests/unit/<package>/test_<package>_<subject>.py and tests/integration/test_<package>_<subject>.py,
    so a package's tests are found by its name (`pytest tests/unit/scheduler`, or `-k scheduler`);
    this file checks the whole tree and is the exception."""
    packages = {"nowlab", "experiments", "scheduler", "testbed", "workloads", "containers", "compose", "hardening"}
    tests = ROOT / "tests"
    wrong = [str(p.relative_to(tests)) for p in (tests / "unit").glob("*/test_*.py")
             if p.parent.name not in packages or not p.name.startswith(f"test_{p.parent.name}_")]
    wrong += [str(p.relative_to(tests)) for p in (tests / "integration").glob("test_*.py")
              if p.name.removeprefix("test_").split("_")[0] not in packages]
    wrong += [p.name for p in tests.glob("test_*.py")]  # none left at the top
    wrong += [str(p.relative_to(tests)) for p in (tests / "unit").glob("test_*.py") if p.name != Path(__file__).name]
    assert wrong == []
    names = [p.name for p in tests.rglob("test_*.py")]
    assert len(names) == len(set(names)), "test basenames must be unique (pytest's prepend import mode)"


def named_paths(doc: Path) -> list[str]:
    """Every repository path docs/architecture.md names in backticks (a token with a slash)."""
    import re
    tokens = re.findall(r"`([^`\s]+)`", doc.read_text())
    paths = []
    for t in tokens:
        t = t.rstrip(".,;:")
        if "/" not in t or t.startswith(("/", "http", "-", "~")) or "*" in t or "<" in t or "{" in t:
            continue
        first = t.split("/")[0]
        if first in {"nowlab", "experiments", "scheduler", "testbed", "workloads", "containers", "compose",
                     "tests", "benchmarks", "checks", "hardening", "docs", "scripts", "tools"}:
            paths.append(t)
    return paths


def test_every_path_the_architecture_names_exists():
    """The architecture page stays true: a module or folder it names that moves or disappears fails here."""
    doc = ROOT / "docs" / "architecture.md"
    paths = named_paths(doc)
    assert len(paths) >= 20, paths  # the page names the layers' modules by path
    missing = [p for p in paths if not (ROOT / p).exists()]
    assert missing == [], f"docs/architecture.md names paths that do not exist: {missing}"


def test_the_path_check_can_fail(tmp_path):
    doc = tmp_path / "architecture.md"
    doc.write_text("The engine is `scheduler/engine.py`; the old one was `scheduler/no_such_module.py`.\n")
    assert [p for p in named_paths(doc) if not (ROOT / p).exists()] == ["scheduler/no_such_module.py"]


def test_a_circle_through_a_type_checking_import_is_caught():
    """exclude_type_checking_imports = false: a module that imports a sibling only for its types
    still closes a circle (testbed.cluster -> pool -> cluster under TYPE_CHECKING was one)."""
    first, second = ROOT / "testbed" / "_cycle_probe_a.py", ROOT / "testbed" / "_cycle_probe_b.py"
    proc = lint_with(first, "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
                            "    import testbed._cycle_probe_b  # for its types only\n",
                     (second, "import testbed._cycle_probe_a  # at run time\n"))
    assert proc.returncode != 0
    assert "No import circles" in proc.stdout and "_cycle_probe" in proc.stdout


def test_the_core_importing_a_study_is_caught():
    # The experiment core names no paper: a core module that reaches into a study breaks the layers.
    proc = lint_with(ROOT / "experiments" / "reporting" / "_study_probe.py",
                     "import experiments.studies.padhye_dowdy.summary  # the core naming a paper\n")
    assert proc.returncode != 0
    assert ("experiments.reporting._study_probe -> experiments.studies.padhye_dowdy.summary"
            in " ".join(proc.stdout.split()))  # lint-imports wraps long lines


def test_a_new_core_module_must_be_placed():
    # Exhaustive: a module at the top of experiments/ that the contract does not name fails it.
    proc = lint_with(ROOT / "experiments" / "_unplaced_probe.py", "X = 1\n")
    assert proc.returncode != 0
    assert "_unplaced_probe" in proc.stdout


def test_a_study_importing_another_is_caught():
    proc = lint_with(ROOT / "experiments" / "studies" / "zhou_brent" / "_paper_probe.py",
                     "import experiments.studies.menasce_rao.files  # one paper leaning on another\n")
    assert proc.returncode != 0
    assert ("experiments.studies.zhou_brent._paper_probe -> experiments.studies.menasce_rao.files"
            in " ".join(proc.stdout.split()))  # lint-imports wraps long lines


def test_io_in_a_policy_is_caught():
    # Policies are pure: one that starts a process breaks the purity contract.
    proc = lint_with(ROOT / "scheduler" / "policies" / "_io_probe.py", "import subprocess  # a policy doing I/O\n")
    assert proc.returncode != 0
    assert "scheduler.policies._io_probe -> subprocess" in " ".join(proc.stdout.split())


def test_a_job_file_reader_in_the_scheduler_is_caught():
    proc = lint_with(ROOT / "scheduler" / "live" / "_file_probe.py", "import csv  # a job file read in the scheduler\n")
    assert proc.returncode != 0
    assert "scheduler.live._file_probe -> csv" in " ".join(proc.stdout.split())
