"""One question's answer scored against its evidence.

The hits are collapsed to the units the evidence is given in — items, pages, or chunks, the finest
the question's evidence uses — each at its best hit's rank (as BEIR ranks documents by their best
passage), and each piece of evidence counts once: a unit earns the grade of the best evidence it
matches that no unit above it has matched. On item-level evidence this is BEIR's nDCG, recall and
MRR exactly (measures.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mnemosyne.evaluation import measures
from mnemosyne.search.types import RankedHit

# The hits of each answer kept with the run, to read and compare.
KEPT_HITS = 10
NDCG_DEPTH = 10
MRR_DEPTH = 10


@dataclass(frozen=True)
class Expected:
    item_uid: str
    pages: tuple[int, ...] = ()
    chunk_uid: str = ""
    grade: int = 1

    def matches(self, hit: RankedHit) -> bool:
        chunk = hit.chunk
        if chunk.item.uid != self.item_uid:
            return False
        if self.chunk_uid and chunk.uid != self.chunk_uid:
            return False
        if self.pages:
            if chunk.page is None:
                return False
            last = chunk.page_end or chunk.page
            return any(chunk.page <= page <= last for page in self.pages)
        return True


@dataclass(frozen=True)
class Scored:
    # The rank (from 1) of the first unit that answers; None when no result does.
    rank: int | None
    ndcg_at_10: float
    reciprocal_rank: float
    recall: float
    hits: list[dict[str, object]]


def score(hits: Sequence[RankedHit], expected: Sequence[Expected]) -> Scored:
    grain = _grain(expected)
    claimed: set[int] = set()
    seen: set[tuple[object, ...]] = set()
    gains: list[int] = []
    kept: list[dict[str, object]] = []
    for hit in hits:
        unit = _unit(hit, grain)
        if unit in seen:
            continue
        seen.add(unit)
        best = max(
            (i for i, evidence in enumerate(expected) if i not in claimed and evidence.matches(hit)),
            key=lambda i: expected[i].grade,
            default=None,
        )
        if best is not None:
            claimed.add(best)
        gains.append(expected[best].grade if best is not None else 0)
        if len(kept) < KEPT_HITS:
            kept.append(
                {
                    "chunk_uid": hit.chunk.uid,
                    "item_uid": hit.chunk.item.uid,
                    "title": hit.chunk.item.title,
                    "page": hit.chunk.page,
                    "score": round(hit.score, 4),
                    "relevant": best is not None,
                }
            )
    rank = next((position for position, gain in enumerate(gains, start=1) if gain > 0), None)
    ideal = sorted((evidence.grade for evidence in expected), reverse=True)
    return Scored(
        rank=rank,
        ndcg_at_10=measures.ndcg(gains, ideal, NDCG_DEPTH),
        reciprocal_rank=1.0 / rank if rank is not None and rank <= MRR_DEPTH else 0.0,
        recall=len(claimed) / len(expected) if expected else 0.0,
        hits=kept,
    )


def _grain(expected: Sequence[Expected]) -> str:
    if any(evidence.chunk_uid for evidence in expected):
        return "chunk"
    if any(evidence.pages for evidence in expected):
        return "page"
    return "item"


def _unit(hit: RankedHit, grain: str) -> tuple[object, ...]:
    if grain == "chunk":
        return (hit.chunk.uid,)
    if grain == "page":
        return (hit.chunk.item.uid, hit.chunk.page)
    return (hit.chunk.item.uid,)
