"""Padhye & Dowdy's one-question analyses over stored runs and configs, each run as
`python -m experiments.studies.padhye_dowdy.analyses.<name>` (usage in its docstring)."""
