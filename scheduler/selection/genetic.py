"""Genetic Algorithm, Fig. 2: chromosomes are lists of machines, fitness is 1/Eq. 1.

DEAP gives the individuals and fitness (`creator`), the one-point crossover of lines 8-10
(`tools.cxOnePoint`) and the selection of the best 60 of 120 (`tools.selBest`). Two parts
are written here because no DEAP operator does them: the repair after crossover (a
one-point crossover of two machine lists can name a machine twice; DEAP's set-safe
crossovers, cxOrdered and cxPartialyMatched, need permutations of all machines, not
k-subsets), and the paper's own mutation (lines 14-26), which is greedy: it tries every
machine outside the chromosome in place of a random one and keeps the fittest.

DEAP draws from the global `random` module; its state is saved and restored around a run,
so a seeded search neither depends on nor disturbs anyone else's random numbers.

Added, so that a budget that ends early still gives a good schedule (`promise.py`): every
size gets a start before any is evolved (Fig. 1's top-procs schedule, or Eq. 2's greedy
chain when it predicts less), sizes are evolved best start first instead of from max_procs
down (line 2), and that start is one of the 60 chromosomes of line 3 (the other 59 random,
as the paper's). Crossover, the greedy mutation and selection are the paper's.
`genetic_as_printed` keeps line 2's order and an all-random population, for comparison.
"""
from __future__ import annotations

import random

from deap import base, creator, tools

from scheduler.selection.promise import promising_starts, ranked_machines
from scheduler.selection.search import Search

POPULATION = 60  # line 3
GENERATIONS = 50  # line 5
MUTATION_SHARE = 0.2  # line 15: mutation steps = 20% of the chromosome's length

if not hasattr(creator, "SvFitness"):
    creator.create("SvFitness", base.Fitness, weights=(1.0,))
if not hasattr(creator, "SvChromosome"):
    creator.create("SvChromosome", list, fitness=creator.SvFitness)


def genetic_algorithm(search: Search, seed: int) -> None:
    """Anytime: sizes in the order of their start's promise, each evolved as Fig. 2 does."""
    saved = random.getstate()
    random.seed(seed)
    try:
        n = search.problem.size
        for start in promising_starts(search, ranked_machines(search)):
            if 1 < start.procs < n:  # line 2 stops at 2; all machines were evaluated as a start
                _evolve(search, start.procs, start.schedule)
    finally:
        random.setstate(saved)


def genetic_as_printed(search: Search, seed: int) -> None:
    """Fig. 2 as printed: sizes from max_procs down, each from a random population."""
    saved = random.getstate()
    random.seed(seed)
    try:
        n = search.problem.size
        if n == 1:
            search.evaluate([0])  # Fig. 2 searches sizes from max_procs down to 2: one machine is the answer
        for procs in range(n, 1, -1):  # line 2
            _evolve(search, procs, ())
    finally:
        random.setstate(saved)


def _evolve(search: Search, procs: int, start: tuple[int, ...]) -> None:
    """Lines 3-29 for one size; `start`, if given, is one of the population."""
    n = search.problem.size
    population = [creator.SvChromosome(random.sample(range(n), procs)) for _ in range(POPULATION - bool(start))]
    if start:
        population.insert(0, creator.SvChromosome(start))
    for chromosome in population:  # line 4
        _assess(search, chromosome)
    for _ in range(GENERATIONS):  # line 5
        random.shuffle(population)  # line 7: divide into pairs
        children = []
        for mother, father in zip(population[::2], population[1::2]):  # lines 8-11
            a, b = creator.SvChromosome(mother), creator.SvChromosome(father)
            tools.cxOnePoint(a, b)
            children += [_repair(a, n), _repair(b, n)]
        for child in children:  # lines 14-26
            _mutate(search, child, n)
            _assess(search, child)  # line 27
        population = tools.selBest(population + children, POPULATION)  # line 29


def _assess(search: Search, chromosome: list[int]) -> None:
    chromosome.fitness.values = (1.0 / search.evaluate(chromosome),)


def _repair(chromosome: list[int], n: int) -> list[int]:
    """A machine named twice is replaced by a random machine the chromosome lacks."""
    seen: set[int] = set()
    repeats = []
    for pos, machine in enumerate(chromosome):
        if machine in seen:
            repeats.append(pos)
        seen.add(machine)
    if repeats:
        spare = random.sample([m for m in range(n) if m not in seen], len(repeats))
        for pos, machine in zip(repeats, spare):
            chromosome[pos] = machine
    return chromosome


def _mutate(search: Search, chromosome: list[int], n: int) -> None:
    """Lines 15-25: replace a random machine X by the machine Y that gives the fittest chromosome."""
    outside = [m for m in range(n) if m not in set(chromosome)]
    if not outside:
        return
    for _ in range(max(1, round(MUTATION_SHARE * len(chromosome)))):
        pos = random.randrange(len(chromosome))
        x = chromosome[pos]
        top_fitness, top_index = 0.0, -1
        for k, y in enumerate(outside):
            chromosome[pos] = y
            fitness = 1.0 / search.evaluate(chromosome)
            if fitness > top_fitness:
                top_fitness, top_index = fitness, k
        chromosome[pos] = outside[top_index]
        outside[top_index] = x
