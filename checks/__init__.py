"""Fidelity checks: does the emulation deliver what it promises (calibration, cap sharing, the
CFS period, owners, speed stability, predictions)? Run from the repo root as `python -m checks.<name>`;
nothing below this layer imports them."""
