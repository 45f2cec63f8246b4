"""How every paper reports: claims and their verdicts, Markdown tables, figures and the statistics.

The one vocabulary the studies share (issue 45): `claims` (Claim, Verdict, Check and
the rule that combines checks), `tables` (the Markdown table writer), `figures` (the
figure helper), `stats` (intervals, bands, replications). `run_stats` and `plots`
make a live experiment's numbers and figures and `cell_claims` judges a config's
claims on its cells; `experiments/report.py` lays that report out (it stays above this
package: it reads the miss causes, which use the bands here).
"""
