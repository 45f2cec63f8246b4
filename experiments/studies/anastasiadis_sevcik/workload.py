"""The Table 3 job generator and its exact moments.

A job stream is generated as plain arrays (no scheduler types), so it can be
checked statistically without the engine.  Job characteristics and the
unit-rate exponential gaps depend only on (seed, workload, replication), and
the load only rescales the gaps: every policy and every load of a replication
sees the same jobs (common random numbers), which makes the DYN-EQUI
normalisation and the load curves far less noisy for the same run time.

Times are in ks (thousands of seconds), as in the paper.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from experiments.studies.anastasiadis_sevcik.spec import GeneratorSpec, WorkloadSpec


@dataclass(frozen=True)
class JobStream:
    """One replication's jobs in arrival order; every array has one entry per job."""

    arrival_ks: np.ndarray
    work_ks: np.ndarray  # W, the essential work
    pmax: np.ndarray  # maximum parallelism (int)
    mu: np.ndarray  # speedup exponent (inf: alpha = 0)
    alpha_ks: np.ndarray
    beta_ks: np.ndarray

    def __len__(self) -> int:
        return len(self.arrival_ks)

    @property
    def t1_ks(self) -> np.ndarray:
        """T(1) = W + alpha + beta: the demand SDF sorts by."""
        return self.work_ks + self.alpha_ks + self.beta_ks

    def run_time_ks(self, p: np.ndarray) -> np.ndarray:
        """Sevcik's T(p) = W/p + alpha + beta*p with phi = 1."""
        p = np.asarray(p, dtype=float)
        return self.work_ks / p + self.alpha_ks + self.beta_ks * p


@dataclass(frozen=True)
class Moments:
    """Exact first moments of the generator for one workload (ks)."""

    mean_work: float
    cov_work: float
    mean_beta: float
    mean_alpha: float

    @property
    def mean_t1(self) -> float:
        return self.mean_work + self.mean_beta + self.mean_alpha


def alpha_factor(pmax: np.ndarray | float, mu: np.ndarray | float) -> np.ndarray:
    """(1/pmax^2)^mu, which is 0 for mu = inf (pmax > 1 always here)."""
    pmax = np.asarray(pmax, dtype=float)
    mu = np.asarray(mu, dtype=float)
    with np.errstate(over="ignore", under="ignore"):
        return np.where(np.isinf(mu), 0.0, (1.0 / pmax**2) ** np.where(np.isinf(mu), 1.0, mu))


def exact_moments(gen: GeneratorSpec, workload: WorkloadSpec) -> Moments:
    """E[W], CoV[W], E[beta], E[alpha] by total expectation over pmax and mu.

    W is independent of pmax and mu, so E[beta] = E[W] E[pmax^-2] and
    E[alpha] = E[W] E[(pmax^-2)^mu].
    """
    probs = np.array([p for p, _ in gen.work_branches])
    means = np.array([m for _, m in gen.work_branches])
    mean_w = float(probs @ means)
    second_w = float(probs @ (2.0 * means**2))  # E[X^2] = 2 m^2 for an exponential
    cov_w = math.sqrt(second_w - mean_w**2) / mean_w
    pm = np.array(gen.pmax_choices, dtype=float)
    mean_beta = mean_w * float(np.mean(1.0 / pm**2))
    factors = [float(np.mean(alpha_factor(pm, mu))) for mu in workload.mus]
    mean_alpha = mean_w * float(np.mean(factors))
    return Moments(mean_w, cov_w, mean_beta, mean_alpha)


def mean_interarrival_ks(gen: GeneratorSpec, workload: WorkloadSpec, load: float) -> float:
    """Eq. (10) solved for the gap: E[T(1)] / (P x Load), with the exact E[T(1)]."""
    if load <= 0:
        raise ValueError(f"load must be > 0 (got {load})")
    return exact_moments(gen, workload).mean_t1 / (gen.processors * load)


def stream_seed(seed: int, workload: WorkloadSpec, replication: int) -> np.random.SeedSequence:
    """Independent, reproducible stream per (workload, replication); same for every policy and load."""
    tag = int.from_bytes(workload.name.encode(), "little")
    return np.random.SeedSequence(entropy=seed, spawn_key=(tag, replication))


def generate(gen: GeneratorSpec, workload: WorkloadSpec, load: float, n_jobs: int,
             seed: np.random.SeedSequence) -> JobStream:
    """Draw ``n_jobs`` jobs of Table 3 arriving as a Poisson stream at ``load``."""
    if n_jobs <= 0:
        raise ValueError(f"n_jobs must be > 0 (got {n_jobs})")
    rng = np.random.default_rng(seed)
    probs = np.array([p for p, _ in gen.work_branches])
    means = np.array([m for _, m in gen.work_branches])
    # Draw every variate in a fixed order so a stream does not depend on the load.
    branch = rng.choice(len(probs), size=n_jobs, p=probs)
    work = rng.exponential(1.0, size=n_jobs) * means[branch]
    pmax = rng.choice(np.array(gen.pmax_choices), size=n_jobs)
    mu = rng.choice(np.array(workload.mus, dtype=float), size=n_jobs)
    gaps = rng.exponential(1.0, size=n_jobs) * mean_interarrival_ks(gen, workload, load)
    beta = work / pmax.astype(float) ** 2
    alpha = work * alpha_factor(pmax, mu)
    return JobStream(arrival_ks=np.cumsum(gaps), work_ks=work, pmax=pmax.astype(int), mu=mu,
                     alpha_ks=alpha, beta_ks=beta)
