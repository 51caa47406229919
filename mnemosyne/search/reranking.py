"""Applying the configured reranker to fused hits (the reranker backends are search.rerankers)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

from django.conf import settings

from mnemosyne.lib import outages
from mnemosyne.lib.outages import Dependency
from mnemosyne.library.chunk_reads import chunk_text
from mnemosyne.search.rerankers import RerankError, get_reranker, rerank_order
from mnemosyne.search.types import RankedHit


@dataclass(frozen=True)
class RerankOutcome:
    hits: list[RankedHit]
    applied: bool
    note: str


def rerank_hits(query: str, hits: Sequence[RankedHit], *, requested: bool) -> RerankOutcome:
    """Reorder the first RERANK_TOP_N hits by the reranker's scores; the rest keep their place after them.

    Without a configured reranker, or when it fails (or answers with the wrong number of scores,
    or a score that is not a finite number), the fused order stands and the note says why.
    """
    if not requested:
        return RerankOutcome(list(hits), False, "")
    reranker = get_reranker()
    if reranker is None:
        return RerankOutcome(list(hits), False, "no reranker is configured; results are in fused order")
    if not hits:
        return RerankOutcome([], False, "nothing to rerank")
    top_n = settings.RERANK_TOP_N
    began = time.monotonic()
    try:
        order = rerank_order(query, [chunk_text(hit.chunk) for hit in hits[:top_n]], reranker, top_n)
    except RerankError as exc:
        outages.failed(Dependency.RERANKER, exc)  # logged once per outage
        return RerankOutcome(list(hits), False, f"rerank failed ({exc}); results are in fused order")
    outages.succeeded(Dependency.RERANKER, began)
    reranked = [replace(hits[index], rerank_score=score) for index, score in order]
    return RerankOutcome(
        reranked + list(hits[top_n:]), True, f"top {len(reranked)} reranked by {reranker.name}"
    )
