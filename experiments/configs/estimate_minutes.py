"""Recompute `minutes` in experiment configs from what `nowlab run CONFIG --estimate` computes.

A config's `minutes` is a first run's duration on this machine, profiling
included (`plan.plan_for(..., first_run=True)`). Only an estimate from
cached profiles, measured on this machine, is written; a floor from
reference work is printed and the file left as it is.

Usage: .venv/bin/python experiments/configs/estimate_minutes.py [--write] CONFIG.toml...
"""
from __future__ import annotations

import argparse
import re
from pathlib import Path

from experiments.config import ConfigError, load
from experiments.estimate import plan_for

MINUTES = re.compile(r"^minutes = .*$", flags=re.M)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("configs", nargs="+", type=Path)
    parser.add_argument("--write", action="store_true", help="rewrite `minutes` where profiles give the estimate")
    args = parser.parse_args(argv)
    for path in args.configs:
        try:
            config = load(path)
        except ConfigError as exc:
            parser.error(str(exc))
        plan = plan_for(config, first_run=True)
        minutes = round(plan.total_s / 60)
        action = "left as it is"
        if args.write and plan.source == "profiles":
            text = path.read_text()
            if not MINUTES.search(text):
                parser.error(f"{path}: minutes: no `minutes = ...` line to rewrite")
            path.write_text(MINUTES.sub(f"minutes = {minutes}", text, count=1))
            action = "written"
        print(f"{path.name}: {plan.total_s / 60:.1f} min ({plan.label}); minutes = {config.minutes:g}, {action}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
