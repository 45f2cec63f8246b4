"""Judge a finished study's claims again from its replications.csv, without simulating anything.

The claims are a function of the replications (cells are their summary), so a change to how claims are
judged (issue 47: one verdict rule, comparisons paired by replication) is applied to a committed run by
reading its replications.csv and writing its outputs again. cells.csv, moments.csv, replications.csv and
the figures come out byte-identical (the run prints any that do not); report.md, claims.csv and
dif_variants.csv carry the new verdicts. The report's first lines (how the run was made) and its wall time
are kept from the report already there.

    .venv/bin/python -m experiments.studies.anastasiadis_sevcik.analyses.rejudge experiments/results/anastasiadis-sevcik
"""
from __future__ import annotations

import argparse
import filecmp
import re
import shutil
import tempfile
from pathlib import Path

import pandas as pd

from experiments.studies.anastasiadis_sevcik.report import write_outputs
from experiments.studies.anastasiadis_sevcik.spec import full_spec
from experiments.studies.anastasiadis_sevcik.study import StudyResult

REJUDGED = ("report.md", "claims.csv", "dif_variants.csv")


def rejudge(folder: Path) -> list[str]:
    """Write the claims of ``folder``'s replications again; returns the other outputs that did not come out
    byte-identical (they are left as they were)."""
    old = (folder / "report.md").read_text(encoding="utf-8") if (folder / "report.md").exists() else ""
    wall = re.search(r"Wall time: ([\d.]+) s", old)
    made = re.search(r"^Made by .*$", old, flags=re.M)
    reps = pd.read_csv(folder / "replications.csv")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        write_outputs(StudyResult(full_spec(), reps, float(wall.group(1)) if wall else float("nan")), out)
        differing = [p.name for p in sorted(out.iterdir()) if p.name not in REJUDGED
                     and (folder / p.name).exists() and not filecmp.cmp(p, folder / p.name, shallow=False)]
        text = (out / "report.md").read_text(encoding="utf-8")
        if made:  # keep how the run was made, under the title
            title, _, rest = text.partition("\n\n")
            text = f"{title}\n\n{made.group(0)} Claims judged again from its replications.csv by " \
                   f"`python -m experiments.studies.anastasiadis_sevcik.analyses.rejudge`.\n\n{rest}"
        (folder / "report.md").write_text(text, encoding="utf-8")
        for name in REJUDGED[1:]:
            shutil.copyfile(out / name, folder / name)
    return differing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="a study's results folder (with replications.csv and report.md)")
    args = parser.parse_args()
    differing = rejudge(args.folder)
    print(f"claims judged again in {args.folder}" + (f"; not byte-identical, left as they were: {', '.join(differing)}"
                                                    if differing else "; every other output byte-identical"))


if __name__ == "__main__":
    main()
