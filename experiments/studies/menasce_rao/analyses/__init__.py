"""Menascé & Rao's one-question probes of the owners' load on a live cluster, each run as
`python -m experiments.studies.menasce_rao.analyses.<name>` (usage in its docstring)."""
