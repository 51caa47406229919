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


def reciprocal_rank_fusion(rankings: Mapping[str, Sequence[K]], *, k: int = RRF_K) -> list[Fused[K]]:
    """Fuse ranked lists: score(d) = Σ 1 / (k + rank(d)), best first; ties keep first-seen order."""
    if k < 1:
        raise ValueError("k must be at least 1")
    fused: dict[K, Fused[K]] = {}
    for leg, keys in rankings.items():
        for rank, key in enumerate(keys, start=1):
            entry = fused.get(key)
            if entry is None:
                entry = fused[key] = Fused(key=key, score=0.0)
            if leg in entry.ranks:
                continue  # a key listed twice in one leg counts once, at its best rank
            entry.ranks[leg] = rank
            entry.score += 1.0 / (k + rank)
    return sorted(fused.values(), key=lambda entry: entry.score, reverse=True)
