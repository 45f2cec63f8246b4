"""Owner interference on a guest (Menascé & Rao §3.1–3.2).

The N owner processes of a workstation form a closed M/M/1//N system: think time Z,
CPU demand D, rho = D/Z. Owners have preemptive priority, so a guest sees only the CPU
they leave: t' = t / (1 - U_ow). P guest tasks sharing one workstation each take P*t'
(the MVA result with one task per class).
"""
from __future__ import annotations



def _check(n: int, z: float, d: float) -> None:
    if n < 0 or int(n) != n:
        raise ValueError(f"n: the number of owner processes must be a whole number >= 0, got {n}")
    if z <= 0:
        raise ValueError(f"z: the think time must be > 0, got {z}")
    if d <= 0:
        raise ValueError(f"d: the CPU demand must be > 0, got {d}")


def owners_at_cpu(n: int, z: float, d: float) -> list[float]:
    """p_k, k = 0..N: the probability that k owner processes are at the CPU,
    proportional to rho^k N!/(N-k)!."""
    _check(n, z, d)
    rho = d / z
    terms = [1.0]
    for k in range(1, int(n) + 1):
        terms.append(terms[-1] * rho * (n - k + 1))  # rho^k N!/(N-k)!, built up term by term
    total = sum(terms)
    return [t / total for t in terms]


def p0(n: int, z: float, d: float) -> float:
    """Probability that no owner process is at the CPU: [sum_k rho^k N!/(N-k)!]^-1."""
    return owners_at_cpu(n, z, d)[0]


def owner_utilization(n: int, z: float, d: float) -> float:
    """U_ow = 1 - p0."""
    return 1.0 - p0(n, z, d)


def inflate(t: float, u_ow: float) -> float:
    """A guest task of t seconds on the dedicated workstation takes t / (1 - U_ow)."""
    if not 0 <= u_ow < 1:
        raise ValueError(f"u_ow: utilisation must be in [0, 1), got {u_ow}")
    return t / (1.0 - u_ow)


def guest_time(t: float, guests: int, n: int, z: float, d: float) -> float:
    """Each of `guests` tasks of t seconds on one workstation with owner load: R = P * t'."""
    if guests < 1:
        raise ValueError(f"guests: at least one guest task, got {guests}")
    return guests * inflate(t, owner_utilization(n, z, d))


def available_fraction(n: int, z: float, d: float) -> float:
    """What a guest gets of the workstation on average: 1 - U_ow."""
    return p0(n, z, d)


