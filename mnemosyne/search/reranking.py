"""Applying the configured reranker to fused hits (the reranker backends live in search.rerank)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from django.conf import settings

from mnemosyne.library.selectors import chunk_text
from mnemosyne.search.rerank import RerankError, get_reranker

if TYPE_CHECKING:
    from mnemosyne.search.service import SearchHit

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RerankOutcome:
    hits: list[SearchHit]
    applied: bool
    note: str


def rerank_hits(query: str, hits: Sequence[SearchHit], *, requested: bool) -> RerankOutcome:
    """Reorder the first RERANK_TOP_N hits by the reranker's scores; the rest keep their place after them.

    Without a configured reranker, or when it fails, the fused order stands and the note says why.
    """
    if not requested:
        return RerankOutcome(list(hits), False, "")
    reranker = get_reranker()
    if reranker is None:
        return RerankOutcome(list(hits), False, "no reranker is configured; results are in fused order")
    if not hits:
        return RerankOutcome([], False, "nothing to rerank")
    head, tail = list(hits[: settings.RERANK_TOP_N]), list(hits[settings.RERANK_TOP_N :])
    try:
        scores = reranker.score(query, [chunk_text(hit.chunk) for hit in head])
    except RerankError as exc:
        logger.warning("rerank failed: %s", exc)
        return RerankOutcome(list(hits), False, f"rerank failed ({exc}); results are in fused order")
    order = sorted(range(len(head)), key=lambda i: (-scores[i], i))
    reranked = [replace(head[i], rerank_score=scores[i]) for i in order]
    return RerankOutcome(reranked + tail, True, f"top {len(head)} reranked by {reranker.name}")
