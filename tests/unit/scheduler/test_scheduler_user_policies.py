"""Policies from the user's code (scheduler/user_policies.py): by file, by module and by a real
entry point of a distribution on sys.path; every way of getting it wrong is one line naming
`--policy`; a policy that breaks a rule at run time is one line naming the policy, the rule,
the job and the time."""
from __future__ import annotations

import textwrap

import pandas as pd
import pytest
from typer.testing import CliRunner

from nowlab.cli import app
from scheduler.engine import simulate
from scheduler.model import Job, SevcikModel
from scheduler.policy import Policy
from scheduler.registry import get_policy
from scheduler.state_machine import PolicyError

GREEDY = """
from scheduler.actions import Start
from scheduler.policy import Policy


class Greedy(Policy):
    \"\"\"Each queued job, in order, on as many free workstations as it can use.\"\"\"

    name = "GREEDY"

    def decide(self, snap):
        free = sorted(snap.free)
        out = []
        for job in snap.queue:
            if not free:
                break
            n = min(job.pmax, len(free))
            out.append(Start(job.id, tuple(free[:n])))
            free = free[n:]
        return out
"""
JOBS = "id,arrival,W,alpha,beta,pmax,phases\n1,0,8,0,0,2,4\n2,1,4,0,0,2,2\n3,1.5,2,0,0,4,1\n"


def _write(path, text: str):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip())
    return path


def _simulate(tmp_path, policy: str, jobs: str = JOBS, P: int = 4):
    csv = _write(tmp_path / "jobs.csv", jobs)
    return CliRunner().invoke(app, ["simulate", str(csv), "--policy", policy, "-P", str(P),
                                    "--timeline", str(tmp_path / "tl.csv"), "--jobs-out", str(tmp_path / "out.csv")])


def _package(root, name: str, modules: dict[str, str]) -> None:
    """A package `name` under `root` with these modules."""
    _write(root / name / "__init__.py", "")
    for module, text in modules.items():
        _write(root / name / f"{module}.py", text)


def _distribution(root, dist: str, entry_points: dict[str, str]) -> None:
    """A real installed distribution's metadata (a .dist-info folder) registering `entry_points`
    in the nowlab.policies group: importlib.metadata finds it on sys.path like any installed one."""
    info = root / f"{dist}-1.0.dist-info"
    _write(info / "METADATA", f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    lines = "".join(f"{k} = {v}\n" for k, v in entry_points.items())
    _write(info / "entry_points.txt", f"[nowlab.policies]\n{lines}")


def test_a_policy_from_a_file_runs_in_the_simulator_like_a_built_in(tmp_path):
    path = _write(tmp_path / "pol" / "greedy.py", GREEDY)
    res = _simulate(tmp_path, f"{path}:Greedy")
    assert res.exit_code == 0, res.output
    assert "GREEDY on P=4: 3 jobs" in res.output
    out = pd.read_csv(tmp_path / "out.csv")
    # job 1 on 2 of 4 (its pmax) from 0 to 4; job 2 on the other 2 from 1 to 3; job 3 (t=1.5) waits
    # for those 2 and runs 2/2 = 1 s from 3
    assert out.finish_time.tolist() == [4.0, 3.0, 4.0]
    policy = get_policy(f"{path}:Greedy")
    assert isinstance(policy, Policy) and policy.name == "GREEDY"
    assert get_policy(f"{path}:Greedy") is not policy  # a fresh object per call, as the built-ins


def test_a_policy_from_a_module_and_from_an_entry_point(tmp_path, monkeypatch):
    pkg = f"userpol_{tmp_path.name.replace('-', '_')}"
    _package(tmp_path, pkg, {"greedy": GREEDY, "broken": "import no_such_package_here\n"})
    _distribution(tmp_path, f"{pkg}_dist", {"MY-GREEDY": f"{pkg}.greedy:Greedy", "BROKEN-EP": f"{pkg}.broken:X"})
    monkeypatch.syspath_prepend(str(tmp_path))
    jobs = [Job(i, float(i), SevcikModel(W=4.0, alpha=0.0, beta=0.0, pmax=2), 2) for i in range(3)]
    by_module = simulate(jobs, get_policy(f"{pkg}.greedy:Greedy"), 4)
    by_entry_point = simulate(jobs, "my-greedy", 4)  # case-insensitive, like the built-in names
    assert by_module.policy == by_entry_point.policy == "GREEDY"
    assert [r.finish for r in by_module.jobs] == [r.finish for r in by_entry_point.jobs] == [2.0, 3.0, 4.0]
    res = _simulate(tmp_path, "BROKEN-EP")
    assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1, res.output
    assert res.output.startswith("error: --policy BROKEN-EP: entry point BROKEN-EP")
    assert "failed to load: ModuleNotFoundError: No module named 'no_such_package_here'" in res.output
    res = _simulate(tmp_path, "NOT-REGISTERED")
    assert "unknown policy 'NOT-REGISTERED'" in res.output and "MY-GREEDY" in res.output  # the installed names listed


BAD_FILES = {
    "missing": (None, "Greedy", "no such file"),
    "no class": (GREEDY, "Gready", "no class 'Gready' in {path} (its Policy classes: Greedy)"),
    "not a policy": ("class Greedy:\n    name = 'G'\n", "Greedy",
                     "Greedy in {path} is not a scheduler.policy.Policy subclass (it is a class deriving from object)"),
    "a function": ("def Greedy():\n    pass\n", "Greedy", "is not a scheduler.policy.Policy subclass (it is a function)"),
    "syntax error": ("x = 1\ndef broken(:\n    pass\n", "Greedy", "{path}:2: SyntaxError: invalid syntax"),
    "import error": ("x = 1\nimport no_such_package_either\n", "Greedy",
                     "{path}:2: ModuleNotFoundError: No module named 'no_such_package_either'"),
    "error at import": ("x = 1\n\ny = 1 / 0\n", "Greedy", "{path}:3: ZeroDivisionError: division by zero"),
    "abstract": ("from scheduler.policy import Policy\nclass Greedy(Policy):\n    name = 'G'\n", "Greedy",
                 "Greedy in {path} does not implement decide"),
    "no name": (GREEDY.replace('    name = "GREEDY"\n', ""), "Greedy", "Greedy in {path} has no `name`"),
    "takes arguments": (GREEDY.replace("    def decide", "    def __init__(self, cap):\n        self.cap = cap\n\n"
                                       "    def decide"), "Greedy",
                        "Greedy in {path}() failed (a policy is made with no arguments): TypeError:"),
}


@pytest.mark.parametrize("case", list(BAD_FILES))
def test_each_bad_policy_file_is_one_line_naming_the_option(tmp_path, case):
    text, cls, message = BAD_FILES[case]
    path = (tmp_path / "pols" / "mine.py").resolve()
    if text is not None:
        _write(path, text)
    res = _simulate(tmp_path, f"{path}:{cls}")
    assert res.exit_code == 2, res.output
    assert res.output.startswith(f"error: --policy {path}:{cls}: "), res.output
    assert message.format(path=path) in res.output
    assert "Traceback" not in res.output and len(res.output.strip().splitlines()) == 1


def test_a_missing_module_is_one_line(tmp_path):
    res = _simulate(tmp_path, "no_such_module_anywhere.sub:Greedy")
    assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1
    assert "--policy no_such_module_anywhere.sub:Greedy: no module named 'no_such_module_anywhere'" in res.output


# Each breaks one rule at a known time: jobs 1 (t=0, 2 procs, 4 phases), 2 (t=1) and 3 (t=1.5) on P=4.
RULE_BREAKERS = {
    "busy processors": ("""
        def decide(self, snap):
            return [Start(job.id, (0, 1)) for job in snap.queue]
        """, "policy RULES broke a rule at t=1 s: job 2 started on busy processors (0, 1)"),
    "not queued": ("""
        def decide(self, snap):
            if snap.reason.value == "arrival" and snap.subject.id == 2:
                return [Start(1, (2, 3))]
            return [Start(job.id, (0, 1)) for job in snap.queue]
        """, "policy RULES broke a rule at t=1 s: start of job 1 which is running"),
    "not an action": ("""
        def decide(self, snap):
            return [("start", job.id) for job in snap.queue]
        """, "policy RULES broke a rule at t=0 s: decide must return a list of Start, Preempt or Resize; "
             "item 0 is ('start', 1)"),
    "None": ("""
        def decide(self, snap):
            return None
        """, "got None (return [] to do nothing)"),
    "subset rule": ("""
        def decide(self, snap):
            if snap.reason.value == "ack":
                return [Resize(snap.subject.id, (1, 2))]
            if snap.subject.id == 2 and snap.reason.value == "arrival":
                return [Preempt(1)]
            return [Start(job.id, (0, 1)) for job in snap.queue if job.id == 1]
        """, "broke a rule at t=1 s: resize of job 1 from (0, 1) to (1, 2) breaks the subset restriction"),
    "an exception": ("""
        def decide(self, snap):
            if snap.subject is not None and snap.subject.id == 3:
                return [1 / 0]
            return []
        """, "policy RULES failed at t=1.5 s: {path}:10: ZeroDivisionError: division by zero"),
}


@pytest.mark.parametrize("case", list(RULE_BREAKERS))
def test_a_policy_breaking_a_rule_is_one_line_with_rule_job_and_time(tmp_path, case):
    body, message = RULE_BREAKERS[case]
    head = ("from scheduler.actions import Preempt, Resize, Start\nfrom scheduler.policy import Policy\n\n\n"
            "class Rules(Policy):\n    name = 'RULES'\n\n")
    path = _write(tmp_path / "rules.py", head + textwrap.indent(textwrap.dedent(body).lstrip(), "    ")).resolve()
    res = _simulate(tmp_path, f"{path}:Rules")
    assert res.exit_code == 1, res.output
    assert res.output.startswith(f"error: --policy {path}:Rules: "), res.output
    assert message.format(path=path) in res.output
    assert "Traceback" not in res.output and len(res.output.strip().splitlines()) == 1


def test_the_checked_class_is_still_the_users_class(tmp_path):
    path = _write(tmp_path / "g.py", GREEDY)
    policy = get_policy(f"{path}:Greedy")
    assert type(policy).__name__ == "Greedy" and type(policy).__mro__[1].__name__ == "Greedy"
    assert policy.decided_at_s is None
    jobs = [Job(1, 2.5, SevcikModel(W=1.0, alpha=0.0, beta=0.0, pmax=1), 1)]
    assert simulate(jobs, policy, 2).jobs[0].finish == 3.5
    assert policy.decided_at_s == 3.5  # its last call: the completion
    with pytest.raises(PolicyError, match="^policy GREEDY broke a rule at t=0 s: decide must return a list"):
        from scheduler.user_policies import check_actions
        check_actions({"not": "a list"}, "GREEDY", 0.0)
