"""Rank fusion, as pure functions."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

RRF_K = 60

K = TypeVar("K", bound=Hashable)


@dataclass
class Fused(Generic[K]):
    key: K
    score: float
    # leg name → 1-based rank in that leg
    ranks: dict[str, int] = field(default_factory=dict)


def relative_score_fusion(
    scored: Mapping[str, Sequence[tuple[K, float]]], weights: Mapping[str, float]
) -> list[Fused[K]]:
    """Weaviate's relativeScoreFusion: min-max normalise each leg to [0, 1], then sum with weights.

    A key a leg did not return scores 0 in that leg. A leg whose scores are all equal
    normalises to 1 for every key it returned.
    """
    fused: dict[K, Fused[K]] = {}
    for leg, hits in scored.items():
        weight = weights.get(leg, 0.0)
        if not hits:
            continue
        values = [score for _, score in hits]
        low, high = min(values), max(values)
        span = high - low
        for rank, (key, score) in enumerate(hits, start=1):
            entry = fused.get(key)
            if entry is None:
                entry = fused[key] = Fused(key=key, score=0.0)
            if leg in entry.ranks:
                continue
            entry.ranks[leg] = rank
            entry.score += weight * ((score - low) / span if span > 0 else 1.0)
    return _best_first(fused)


def weighted_rrf(
    rankings: Mapping[str, Sequence[K]], weights: Mapping[str, float], *, k: int = RRF_K
) -> list[Fused[K]]:
    """Reciprocal rank fusion with a weight per leg: score(d) = Σ w_leg / (k + rank_leg(d))."""
    if k < 1:
        raise ValueError("k must be at least 1")
    fused: dict[K, Fused[K]] = {}
    for leg, keys in rankings.items():
        weight = weights.get(leg, 1.0)
        for rank, key in enumerate(keys, start=1):
            entry = fused.get(key)
            if entry is None:
                entry = fused[key] = Fused(key=key, score=0.0)
            if leg in entry.ranks:
                continue
            entry.ranks[leg] = rank
            entry.score += weight / (k + rank)
    return _best_first(fused)


def _best_first(fused: Mapping[K, Fused[K]]) -> list[Fused[K]]:
    # Equal scores: the better best rank first, then first seen.
    return sorted(fused.values(), key=lambda entry: (-entry.score, min(entry.ranks.values(), default=0)))
