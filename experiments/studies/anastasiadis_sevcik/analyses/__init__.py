"""Anastasiadis & Sevcik's one-question analyses of the simulated study, each run as
`python -m experiments.studies.anastasiadis_sevcik.analyses.<name>` (usage in its docstring)."""
