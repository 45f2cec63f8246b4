"""Hardening harnesses: the fault campaign, the soak run, parser fuzzing and leak probes, which
look for what breaks or grows rather than for a figure. Run from the repo root as
`python -m hardening.<name>`; nothing below this layer imports them."""
