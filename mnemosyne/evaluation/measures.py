"""Retrieval quality measures (as BEIR/pytrec_eval compute them), as pure functions."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence


def ndcg_at_k(ranked: Sequence[str], relevant: Mapping[str, int], k: int = 10) -> float:
    """nDCG@k with graded relevance and the log2(rank + 1) discount; 0 when nothing is relevant."""
    ideal = sorted((grade for grade in relevant.values() if grade > 0), reverse=True)
    return ndcg([relevant.get(doc, 0) for doc in ranked], ideal, k)


def ndcg(gains: Sequence[int], ideal: Sequence[int], k: int) -> float:
    """The DCG@k of `gains` (each ranked result's grade, best first) over that of `ideal` (the
    grades in their best order); 0 when the ideal has none."""
    idcg = dcg(ideal[:k])
    return dcg(gains[:k]) / idcg if idcg > 0 else 0.0


def dcg(gains: Sequence[int]) -> float:
    """Σ gain / log2(rank + 1), ranks from 1."""
    return sum(gain / math.log2(rank + 2) for rank, gain in enumerate(gains) if gain > 0)


def recall_at_k(ranked: Sequence[str], relevant: Mapping[str, int], k: int = 100) -> float:
    wanted = {doc for doc, grade in relevant.items() if grade > 0}
    if not wanted:
        return 0.0
    return len(wanted.intersection(ranked[:k])) / len(wanted)


def mrr_at_k(ranked: Sequence[str], relevant: Mapping[str, int], k: int = 10) -> float:
    for rank, doc in enumerate(ranked[:k], start=1):
        if relevant.get(doc, 0) > 0:
            return 1.0 / rank
    return 0.0


def percentile(values: Sequence[float], fraction: float) -> float:
    """Linear-interpolated percentile (fraction in [0, 1]); 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    position = (len(ordered) - 1) * fraction
    low = math.floor(position)
    high = math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def best_per_document(chunk_hits: Sequence[tuple[str, float]]) -> list[str]:
    """Collapse ranked (document id, score) chunk hits to documents, each at its best chunk's rank."""
    seen: set[str] = set()
    documents = []
    for document, _ in chunk_hits:
        if document not in seen:
            seen.add(document)
            documents.append(document)
    return documents
