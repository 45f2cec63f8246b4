"""Numbers printed in the paper, kept apart so they are only ever *compared
with*, never used to produce a result.

Times are in the paper's unit, thousands of seconds (ks).
"""
from __future__ import annotations

#: Table 3 / Section 5.3: E(W), E(beta) (both independent of the workload).
MEAN_WORK_KS = 13.76
COV_WORK = 3.5
MEAN_BETA_KS = 0.30

#: Section 5.3 / Table 3: E(alpha) and E(T(1)) per workload (Table 3 prints
#: 2.34 for WK4 where Section 5.3 prints 2.3; we compare with Table 3).
MEAN_ALPHA_KS = {"WK1": 0.0, "WK2": 2.0, "WK3": 5.0, "WK4": 2.34}
MEAN_T1_KS = {"WK1": 14.06, "WK2": 16.06, "WK3": 19.06, "WK4": 16.40}

#: Decimals the paper prints each moment with (0.30, 2.0, 2.34, 16.40 ...), so a
#: difference can be told apart from rounding or truncation of the last digit.
PRINTED_DECIMALS = {"E[W]": 2, "CoV[W]": 1, "E[beta]": 2, "E[T(1)]": 2,
                    "E[alpha]": {"WK1": 1, "WK2": 1, "WK3": 1, "WK4": 2}}

#: The loads of Section 6 (fraction of the P processors' capacity).
LOADS = (0.1, 0.3, 0.5, 0.7, 0.9)

#: The policies compared in Section 6, in the order the figures show them.
POLICIES = (
    "SDF-MAX1", "SDF-MAX2", "SDF-MAX6", "SDF",
    "ASP", "AP1", "AEP",
    "ASP(1)", "AP1(1)", "AEP(1)",
    "ASP(2)", "AP1(2)", "AEP(2)",
    "DYN-EQUI",
)
