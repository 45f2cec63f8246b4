"""Sanjay & Vadhiyar's one-question analyses of the live runs and the Eq. 1 model, each run as
`python -m experiments.studies.sanjay_vadhiyar.analyses.<name>` (usage in its docstring)."""
