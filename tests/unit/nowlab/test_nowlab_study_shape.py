"""One command-line shape: `nowlab study <paper> <verb>` for all five papers, older shapes kept as aliases."""
from __future__ import annotations

import typer
from typer.testing import CliRunner

from nowlab.cli import app
from nowlab.commands import studies

PAPERS = ["padhye-dowdy", "anastasiadis-sevcik", "menasce-rao", "sanjay-vadhiyar", "zhou-brent"]


def verbs(*path: str) -> set[str]:
    group = typer.main.get_command(app)
    for name in path:
        group = group.commands[name]
    assert hasattr(group, "commands"), group  # a group (typer vendors its own click)
    return {n for n, c in group.commands.items() if not c.hidden}


def test_every_paper_is_a_group_under_study():
    assert set(PAPERS) <= verbs("study")


def test_each_paper_has_the_verbs_of_its_older_command():
    assert verbs("study", "menasce-rao") == verbs("taskgraph")
    assert verbs("study", "zhou-brent") == verbs("timeshare") == {"table", "simulate", "run", "report"}
    assert verbs("study", "sanjay-vadhiyar") == verbs("select") | {"simulate"}
    assert verbs("study", "padhye-dowdy") == {"run", "report", "summary"}
    assert verbs("study", "anastasiadis-sevcik") == {"simulate"}


def test_the_older_study_commands_still_parse():
    runner = CliRunner()
    for args in (["study", "anastasiadis", "--help"], ["study", "sanjay-vadhiyar", "--help"],
                 ["run", "--help"], ["summary", "--help"], ["select", "hosts", "--help"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 0, (args, result.output)


def test_sanjay_vadhiyar_with_no_verb_runs_the_simulated_study(monkeypatch, tmp_path):
    calls = []
    monkeypatch.setattr(studies, "sanjay_vadhiyar_simulate",
                        lambda quick, out, scale, resume, limit, report_only: calls.append((quick, out)))
    result = CliRunner().invoke(app, ["study", "sanjay-vadhiyar", "--quick", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert calls == [(True, tmp_path)]
    calls.clear()
    result = CliRunner().invoke(app, ["study", "sanjay-vadhiyar", "show", "--help"])
    assert result.exit_code == 0 and calls == []  # a verb runs that verb, not the study
