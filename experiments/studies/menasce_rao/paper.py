"""What Menascé & Rao print, for comparison only (never an input to a prediction).

Tables 2 and 3 (§4): the wave front's execution time on n workstations of one type, as
measured (T_meas), as the model gave it (T_mod) and the error E = |T_meas - T_mod| / T_meas
in %. The paper had one SPARCstation 20, so its 2 and 3 rows have no measurement.
"""
from __future__ import annotations

#: Our times are the paper's x TIME_SCALE: a wave-front task is 6.8 s on our LX, 34 s on theirs.
TIME_SCALE = 0.2

#: The workstations of each class in compose/specs/menasce-rao.toml, in host-list order.
CLASSES: dict[str, tuple[str, ...]] = {
    "LX": ("lx1", "lx2", "lx3"),
    "SPARC5": ("sp5a", "sp5b", "sp5c"),
    "SPARC20": ("sp20a", "sp20b", "sp20c"),
}

#: (table, class, n) -> (T_meas s or None, T_mod s, E % or None), as printed.
PAPER: dict[tuple[int, str, int], tuple[float | None, float, float | None]] = {
    (2, "LX", 1): (300.576, 309.320, 2.9), (2, "LX", 2): (223.284, 204.320, 8.5),
    (2, "LX", 3): (204.800, 192.984, 6.2),
    (2, "SPARC5", 1): (145.915, 137.540, 5.7), (2, "SPARC5", 2): (103.037, 91.800, 11.0),
    (2, "SPARC5", 3): (88.557, 86.717, 2.1),
    (2, "SPARC20", 1): (113.571, 105.837, 6.8), (2, "SPARC20", 2): (None, 70.665, None),
    (2, "SPARC20", 3): (None, 66.756, None),
    (3, "LX", 1): (432.331, 453.200, 4.6), (3, "LX", 2): (327.670, 302.240, 7.7),
    (3, "LX", 3): (302.695, 285.433, 5.7),
    (3, "SPARC5", 1): (217.804, 205.828, 5.5), (3, "SPARC5", 2): (150.048, 137.425, 8.4),
    (3, "SPARC5", 3): (117.506, 127.537, 7.9),
    (3, "SPARC20", 1): (167.342, 156.486, 6.5), (3, "SPARC20", 2): (None, 104.403, None),
    (3, "SPARC20", 3): (None, 99.936, None),
}

#: The sentences behind the claims checked.
QUOTES = {
    "table2": "As can be seen from table 2, the errors between the model predictions and the measurements "
              "range between 2.9 and 11%.",
    "table3": "As before, we can see that errors are fairly small and are in the range between 4.6 and 8.4 %.",
}

#: §5, the sentences about Figs. 4-6 judged in `claims.py` (the figures' own numbers are not in our copy).
FIGURE_QUOTES = {
    "fig4-nonlinear": "As it can be seen, the computing demand of the interactive workload has a non-linear "
                      "effect on the execution time of the parallel application.",
    "fig4-slower": "Slower workstations suffer a bigger impact than faster ones.",
    "fig5-similar": "The curves show a similar kind of degradation as the one seen in figure 4.",
    "fig5-n5": "For example, at N = 5 the execution time T is 2.9 higher using LX workstations than using "
               "SPARCstation 20's.",
    "fig5-n1": "However, at N = 1, the degradation factor is 2.65.",
    "fig5-growing": "As N increases, the slower workstations show an increasing degradation factor when "
                    "compared with the faster ones.",
    "fig6-dramatic": "The figure shows the dramatic decrease in the parallel execution time of the parallel "
                     "application as the think time increases",
}
#: The LX / SPARCstation 20 time ratios §5 quotes from Fig. 5, at N = 5 and N = 1.
FIG5_RATIO_N5, FIG5_RATIO_N1 = 2.9, 2.65

#: §6, the sentences about the placement policies judged in `policy_claims.py`.
POLICY_QUOTES = {
    "pvm-default": "However, this scheduling policy is very inefficient from the parallel application point "
                   "of view. The scheduling disciplines discussed below try to utilize the computing resources "
                   "in better ways.",
    "workstation-speed": "This policy generates poor scheduling when the initial tasks have smaller "
                         "computational demands than the ones that follow them because parallel task demands "
                         "are not considered.",
    "parallel-load-speed": "Then, the parallel task with the largest computation demand is allocated to a "
                           "faster workstation.",
    "workstation-load-speed": "this scheduling policy is an improvement over the previous policy in that the "
                              "current load at the workstation is taken into account along with the computing "
                              "demand of the parallel tasks and the workstation speeds.",
}
