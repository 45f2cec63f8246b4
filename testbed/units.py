"""Rates in bit/s and their text forms.

Rates are stored as integers in bit/s and always written to tc with the `bit` suffix:
tc reads `mbps` as mega*bytes* per second, a classic source of 8x errors, so those
units are refused with a hint rather than guessed at.
"""
from __future__ import annotations

import math
import re

_BIT_UNITS = {"bit": 1, "kbit": 10**3, "mbit": 10**6, "gbit": 10**9}
_BYTE_UNITS = {"bps", "kbps", "mbps", "gbps", "b", "kb", "mb", "gb", "kib", "mib", "gib"}
_RATE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z/]*)\s*$")


class RateError(ValueError):
    pass


def parse_rate(value: str | int | float) -> int:
    """Parse '10mbit', '1.5gbit', '500kbit' or a bit/s integer into bit/s."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise RateError(f"not a rate: {value!r} (write e.g. '10mbit', '1gbit' or 10000000)")
    if isinstance(value, float) and not math.isfinite(value):
        raise RateError(f"a rate must be a finite number, got {value!r}")
    if isinstance(value, (int, float)):
        bits = int(value)
        if bits != value:
            raise RateError(f"a bit/s number must be whole, got {value!r}")
    else:
        match = _RATE.match(value)
        if not match:
            raise RateError(f"not a rate: {value!r} (write e.g. '10mbit', '1gbit' or 10000000)")
        number, unit = float(match.group(1)), match.group(2).lower()
        if unit in _BYTE_UNITS or unit.endswith("/s") or unit.endswith("ps"):
            raise RateError(
                f"unit {match.group(2)!r} in {value!r} is bytes per second in tc; "
                f"use bit units such as '{_suggest(number, unit)}'")
        if unit == "":
            unit = "bit"
        if unit not in _BIT_UNITS:
            raise RateError(f"unknown rate unit {match.group(2)!r} in {value!r} (use bit, kbit, mbit or gbit)")
        bits = int(round(number * _BIT_UNITS[unit]))
    if bits <= 0:
        raise RateError(f"a rate must be positive, got {value!r}")
    return bits


def _suggest(number: float, unit: str) -> str:
    scale = {"k": "kbit", "m": "mbit", "g": "gbit"}.get(unit[:1], "bit")
    return f"{number * 8:g}{scale}"


def format_rate(bits: int) -> str:
    """Human form, e.g. 10000000 -> '10 Mbit/s'."""
    for unit, scale in (("Gbit/s", 10**9), ("Mbit/s", 10**6), ("kbit/s", 10**3)):
        if bits >= scale:
            return f"{bits / scale:.4g} {unit}"
    return f"{bits} bit/s"


def tc_rate(bits: int) -> str:
    """The tc form: always plain bit, never a byte unit."""
    return f"{int(bits)}bit"
