"""Recompute `minutes` in the shipped configs from the measured class fits (MEASUREMENTS.md).

Usage: .venv/bin/python experiments/configs/estimate_minutes.py experiments/configs/*.toml
"""
import re
import sys
from pathlib import Path
from experiments.config import load
from experiments.predict import ClassModel
from experiments.plan import estimate
M = {"syn50": ClassModel("syn50", 31.74, 0, 0.110, None, 50, 2.9, 0.8, 0.3, 0.3),
     "syn15": ClassModel("syn15", 9.48, 0, 0.028, None, 15, 2.9, 0.8, 0.3, 0.3),
     "cg300": ClassModel("cg300", 16.45, 0, 0.469, 4, 1000, 4.1, 1.9, 0.25, 0.3),
     "cg500": ClassModel("cg500", 46.56, 0, 0.497, 8, 1000, 5.0, 3.0, 0.15, 0.3),
     "syn": ClassModel("syn", 12.7, 0, 0.044, None, 20, 2.9, 0.8, 0.3, 0.3),
     "cg": ClassModel("cg", 8.2, 0, 0.23, 4, 500, 4.1, 1.9, 0.25, 0.3)}
for path in sys.argv[1:]:
    c = load(path)
    p = estimate(c, {k: M[k] for k in c.classes}, 8)
    util = {}
    for x in p.cells: util.setdefault(x.rate, []).append(f"{x.policy}:{x.utilisation:.2f}")
    print(Path(path).stem, f"{p.total_s/60:.0f} min", util)
    if Path(path).stem != "demo":  # the demo says what it measured
        t = Path(path).read_text()
        Path(path).write_text(re.sub(r"^minutes = .*$", f"minutes = {round(p.total_s/60)}", t, count=1, flags=re.M))
