"""How every paper reports: claims and their verdicts, Markdown tables, figures and the statistics.

The one vocabulary the studies share (issue 45): `claims` (Claim, Verdict, Check and
the rule that combines checks), `tables` (the Markdown table writer), `figures` (the
figure helper), `stats` (intervals, bands, replications). `run_report` lays out a
live experiment's report, `cell_claims` judges a config's claims on a cells table.
"""
