"""The layers of docs/architecture.md are a contract: import-linter checks them on every run."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def lint_imports() -> str:
    exe = Path(sys.executable).parent / "lint-imports"
    return str(exe) if exe.exists() else shutil.which("lint-imports") or "lint-imports"


def test_every_import_contract_is_kept():
    proc = subprocess.run([lint_imports(), "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "broken" not in proc.stdout.lower().replace("0 broken", "")
    kept = proc.stdout.count("KEPT")
    assert kept >= 5, proc.stdout  # every contract of pyproject.toml ran


def lint_with(probe: Path, source: str) -> subprocess.CompletedProcess:
    """lint-imports with one extra module written for the run and removed at once."""
    probe.write_text(source)
    try:
        return subprocess.run([lint_imports(), "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    finally:
        probe.unlink()


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
    second.write_text("import testbed._cycle_probe_a  # at run time\n")
    try:
        proc = lint_with(first, "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
                                "    import testbed._cycle_probe_b  # for its types only\n")
    finally:
        second.unlink()
    assert proc.returncode != 0
    assert "No import circles" in proc.stdout and "_cycle_probe" in proc.stdout
