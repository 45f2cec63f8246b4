"""Judge a finished simulated study's claims again from its CSVs, without searching anything.

The claims read the study's tables only (`claims.judge_all`), so a change to how claims are judged
(issue 47: one verdict rule; a check without an interval is unresolved) is applied to a committed run by
reading its tables and writing its outputs again. The tables and figures come out byte-identical (the run
prints any that do not, and leaves them as they were); report.md and claims.csv carry the new verdicts.

    .venv/bin/python -m experiments.studies.sanjay_vadhiyar.analyses.rejudge experiments/results/sanjay-vadhiyar/quick
"""
from __future__ import annotations

import argparse
import filecmp
import re
import shutil
import tempfile
from pathlib import Path

import pandas as pd

from experiments.studies.sanjay_vadhiyar.report import TABLES, write_outputs
from experiments.studies.sanjay_vadhiyar.spec import full_spec, quick_spec
from experiments.studies.sanjay_vadhiyar.study import StudyResult

REJUDGED = ("report.md", "claims.csv")


def rejudge(folder: Path) -> list[str]:
    """Write the claims of ``folder``'s tables again (its spec by the report's title: quick or full); returns the
    other outputs that did not come out byte-identical."""
    old = (folder / "report.md").read_text(encoding="utf-8")
    spec = quick_spec() if "(quick run)" in old.splitlines()[0] else full_spec()
    wall = re.search(r"Wall time ([\d.]+) s", old)
    tables = {name: pd.read_csv(folder / f"{name}.csv") for name in TABLES}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        write_outputs(StudyResult(spec, **tables, wall_s=float(wall.group(1)) if wall else float("nan")), out)
        differing = [p.name for p in sorted(out.iterdir()) if p.name not in REJUDGED
                     and (folder / p.name).exists() and not filecmp.cmp(p, folder / p.name, shallow=False)]
        for name in REJUDGED:
            shutil.copyfile(out / name, folder / name)
    return differing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="a simulated study's results folder (its CSVs and report.md)")
    differing = rejudge(parser.parse_args().folder)
    print("claims judged again" + (f"; not byte-identical, left as they were: {', '.join(differing)}"
                                   if differing else "; every other output byte-identical"))


if __name__ == "__main__":
    main()
