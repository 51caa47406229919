"""MMR diversity (search's `diversity`): the service's vectorised ordering against the pairwise one.

Pure: 384-dimensional unit vectors at random, relevance scores at random; the window MMR orders is
twice the page (as the service hydrates), limits 20 and 100. The pairwise ordering is the
definition written out, one similarity at a time in Python over lists of numpy scalars: what the
service ran before.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Sequence

import numpy as np

from benchmarks.results import DiversityTiming, median
from mnemosyne.search.shaping import maximal_marginal_relevance

DIMENSIONS = 384
LIMITS = (20, 100)
DIVERSITY = 0.5


def pairwise_mmr(
    relevance: Sequence[float], vectors: Sequence[Sequence[float]], diversity: float, limit: int
) -> list[int]:
    def cosine(a: Sequence[float], b: Sequence[float]) -> float:
        dot = sum(x * y for x, y in zip(a, b, strict=True))
        norms = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
        return dot / norms if norms else 0.0

    low, high = min(relevance), max(relevance)
    normalised = [(r - low) / (high - low) if high > low else 1.0 for r in relevance]
    chosen: list[int] = []
    max_similarity = [0.0] * len(relevance)
    remaining = set(range(len(relevance)))
    while remaining and len(chosen) < limit:
        best = max(
            remaining, key=lambda i: ((1 - diversity) * normalised[i] - diversity * max_similarity[i], -i)
        )
        chosen.append(best)
        remaining.discard(best)
        for other in remaining:
            max_similarity[other] = max(max_similarity[other], cosine(vectors[best], vectors[other]))
    return chosen


def _timed(run: Callable[[], list[int]], repeats: int) -> tuple[float, list[int]]:
    times, order = [], []
    for _ in range(repeats):
        started = time.perf_counter()
        order = run()
        times.append((time.perf_counter() - started) * 1000)
    return median(times), order


def run(*, repeats: int = 20, pairwise_repeats: int = 3) -> list[DiversityTiming]:
    rng = np.random.default_rng(20261124)
    timings = []
    for limit in LIMITS:
        window = 2 * limit
        vectors = rng.normal(size=(window, DIMENSIONS)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        relevance = [float(score) for score in rng.random(window)]
        # What the service handed it: each pgvector row as a list of numpy scalars.
        as_lists = [list(row) for row in vectors]
        vectorised = functools.partial(
            maximal_marginal_relevance, relevance, vectors, diversity=DIVERSITY, limit=limit
        )
        vectorised_ms, order = _timed(vectorised, repeats)
        pairwise = functools.partial(pairwise_mmr, relevance, as_lists, DIVERSITY, limit)
        pairwise_ms, reference = _timed(pairwise, pairwise_repeats)
        timings.append(
            DiversityTiming(
                limit=limit,
                window=window,
                vectorised_ms=vectorised_ms,
                pairwise_ms=pairwise_ms,
                same_order=order == reference,
            )
        )
    return timings
