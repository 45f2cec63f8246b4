"""`nowlab run --until-resolved`'s options: each bad one is one line naming it, before anything starts
(no results file is written)."""
from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from nowlab.cli import app

DEMO = Path(__file__).resolve().parents[3] / "experiments" / "configs" / "demo.toml"


@pytest.mark.parametrize("args, message", [
    (["--until-resolved", "--budget", "3 hours"], "error: --budget: a wall-clock time such as 3h, 90m or 45s, got '3 hours'"),
    (["--until-resolved", "--budget", "0s"], "error: --budget: must be more than 0 s, got '0s'"),
    (["--until-resolved"], "error: --budget: --until-resolved needs a wall-clock budget, e.g. --budget 3h"),
    (["--budget", "3h"], "error: --budget: only with --until-resolved"),
    (["--until-resolved", "--budget", "1h", "--max-replications", "1"],
     "error: --max-replications: at least 2 (an interval needs two), got 1"),
    (["--until-resolved", "--budget", "1h", "--estimate"], "error: --until-resolved: not with --estimate"),
])
def test_a_bad_until_resolved_option_is_one_line_naming_it(tmp_path, args, message):
    out = tmp_path / "r.sqlite"
    got = CliRunner().invoke(app, ["run", str(DEMO), "--out", str(out), *args])
    assert got.exit_code == 2, got.output
    assert got.output.strip().splitlines() == [got.output.strip()] and got.output.strip().startswith(message)
    assert not out.exists()


def test_a_config_without_claims_is_refused_before_a_results_file_exists(tmp_path):
    text = DEMO.read_text()
    spec = (DEMO.parent / "../../compose/specs/now8-governed.toml").resolve()
    plain = tmp_path / "plain.toml"
    plain.write_text(text[:text.index("[[claim]]")].replace("../../compose/specs/now8-governed.toml", str(spec)))
    out = tmp_path / "r.sqlite"
    got = CliRunner().invoke(app, ["run", str(plain), "--out", str(out), "--until-resolved", "--budget", "1h"])
    assert got.exit_code == 2, got.output
    assert got.output.strip() == f"error: --until-resolved: {plain} states no claims to resolve"
    assert not out.exists()
