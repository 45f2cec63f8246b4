"""What a run of the study does: sizes, budgets, repetitions (a description, run by study.py).

The paper gives each algorithm 25 s per cluster and 50 clusters per point; Fig. 9 goes to
3 minutes and §5.3.5 has 1,100 setups of 4-15 clusters. That is days of CPU, so both specs
scale the budgets down and say by how much (`budget_scale`): a budget of b paper-seconds
runs for b x budget_scale seconds. Our searches are Python, the paper's C, on machines
some ten times slower than this one, so the scaled budgets are not equivalent; the report
states the budgets used.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

ALGORITHMS = ("SA", "GA", "DP", "BE")


@dataclass(frozen=True)
class StudySpec:
    name: str
    seed: int = 2009
    budget_scale: float = 0.1  # run seconds per paper-second
    sizes: tuple[int, ...] = (32, 64, 128, 256, 512, 1024)  # Fig. 8
    budget_paper_s: float = 25.0  # Figs. 8, 10, 11 and Table I
    reps: int = 10  # clusters per point (the paper: 50)
    budget_sizes: tuple[int, ...] = (256, 512)  # Fig. 9
    budgets_paper_s: tuple[float, ...] = (2.0, 10.0, 30.0, 90.0, 180.0)
    budget_reps: int = 5
    error_size: int = 512  # Fig. 10
    errors_pct: tuple[float, ...] = (0.0, 10.0, 20.0, 30.0, 50.0)
    error_reps: int = 5
    app_size: int = 512  # Fig. 11
    app_reps: int = 5
    setups: int = 30  # Table I and Fig. 12 (the paper: 1,100)
    setup_clusters: tuple[int, int] = (4, 15)
    setup_procs: tuple[int, int] = (32, 1024)
    setup_budget_paper_s: float = 25.0
    algorithms: tuple[str, ...] = field(default=ALGORITHMS)

    def __post_init__(self) -> None:
        if not self.budget_scale > 0:
            raise ValueError(f"budget_scale: {self.budget_scale} is not > 0")
        for name in ("reps", "budget_reps", "error_reps", "app_reps"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name}: {getattr(self, name)} is not >= 1")
        if self.setups < 0:
            raise ValueError(f"setups: {self.setups} is not >= 0")
        if any(s < 2 for s in self.sizes + self.budget_sizes):
            raise ValueError("sizes: every cluster needs at least 2 processors")

    def budget_s(self, paper_s: float) -> float:
        return paper_s * self.budget_scale

    def upper_bound_s(self) -> float:
        """Every search using its whole budget (DP and BE finish early on small clusters)."""
        a = len(self.algorithms)
        per = self.budget_s(self.budget_paper_s)
        clusters = self.setups * sum(self.setup_clusters) / 2
        return a * (per * (len(self.sizes) * self.reps + len(self.errors_pct) * self.error_reps + 4 * self.app_reps)
                    + len(self.budget_sizes) * self.budget_reps * sum(map(self.budget_s, self.budgets_paper_s))
                    + self.budget_s(self.setup_budget_paper_s) * clusters)


def full_spec() -> StudySpec:
    """Budgets at a tenth of the paper's (25 s -> 2.5 s; Fig. 9's 2 s..3 min -> 0.2..18 s), 10
    clusters per Fig. 8 point, 30 setups: at most 1.4 hours (`upper_bound_s`)."""
    return StudySpec(name="full")


def quick_spec() -> StudySpec:
    """The same outputs in about a minute and a half of CPU: budgets at 1/100 (25 s -> 0.25 s),
    two clusters per point, Fig. 9 at 512 only and 2 s..3 min -> 0.02..1.8 s, six setups of
    4-8 clusters."""
    return replace(StudySpec(name="quick"), budget_scale=0.01, reps=2, budget_sizes=(512,),
                   budgets_paper_s=(2.0, 30.0, 180.0), budget_reps=1, errors_pct=(0.0, 20.0, 50.0),
                   error_reps=2, app_reps=1, setups=6, setup_clusters=(4, 8))
