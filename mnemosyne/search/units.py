"""Pages and documents fused into the chunk ranking.

The legs rank chunks; a question is often answered by a page (a statement, a table) of one
version of a document. After fusion each candidate chunk gains

    DOCUMENT_WEIGHT · confidence · document score of its item      (search/documents.py)
  + PAGE_WEIGHT · page evidence of its page(s)

where a page's evidence is half its full text's BM25 (search/pages.py) and half the sum of the
fused scores of its best PAGE_CHUNKS chunks among the candidates, each normalised by the best
page's. So a page whose evidence is spread over several chunks rises above one loose chunk
elsewhere, and a chunk of the version the question names above the same passage in another
version. A chunk cites its best page. Pure.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field

from mnemosyne.search.fusion import Fused

DOCUMENT_WEIGHT = 0.3
PAGE_WEIGHT = 0.3
# A page's chunks counted towards its evidence.
PAGE_CHUNKS = 3
# Share of a page's evidence from its full text (the rest from its chunks).
PAGE_TEXT_SHARE = 0.5

PageKey = tuple[int, int]


@dataclass(frozen=True)
class Located:
    """Where a candidate chunk is: its item and its pages."""

    item_id: int
    page: int | None
    page_end: int | None = None

    def pages(self) -> list[PageKey]:
        if self.page is None:
            return []
        return [(self.item_id, number) for number in range(self.page, (self.page_end or self.page) + 1)]


@dataclass
class UnitScores:
    """What the documents and pages added to each chunk, for `explain`."""

    document: dict[int, float] = field(default_factory=dict)
    page: dict[int, float] = field(default_factory=dict)


def page_evidence(
    fused: list[Fused[int]], located: Mapping[int, Located], page_text: Mapping[PageKey, float]
) -> dict[PageKey, float]:
    """Each candidate page's evidence in [0, 1]: its full text's score and its best chunks'."""
    chunk_scores: dict[PageKey, list[float]] = defaultdict(list)
    for entry in fused:
        where = located.get(entry.key)
        if where is None:
            continue
        for page in where.pages():
            chunk_scores[page].append(entry.score)
    summed = {page: sum(sorted(scores, reverse=True)[:PAGE_CHUNKS]) for page, scores in chunk_scores.items()}
    best_sum = max(summed.values(), default=0.0)
    best_text = max(page_text.values(), default=0.0)
    evidence: dict[PageKey, float] = {}
    for page in summed:
        from_chunks = summed[page] / best_sum if best_sum > 0 else 0.0
        from_text = page_text.get(page, 0.0) / best_text if best_text > 0 else 0.0
        if best_text > 0:
            evidence[page] = PAGE_TEXT_SHARE * from_text + (1 - PAGE_TEXT_SHARE) * from_chunks
        else:
            evidence[page] = from_chunks
    return evidence


def rescore(
    fused: list[Fused[int]],
    located: Mapping[int, Located],
    *,
    documents: Mapping[int, float],
    document_confidence: float,
    pages: Mapping[PageKey, float],
    document_weight: float | None = None,
    page_weight: float | None = None,
) -> tuple[list[Fused[int]], UnitScores]:
    """The candidates reordered by their score plus their document's and page's."""
    document_weight = DOCUMENT_WEIGHT if document_weight is None else document_weight
    page_weight = PAGE_WEIGHT if page_weight is None else page_weight
    added = UnitScores()
    rescored: list[Fused[int]] = []
    for entry in fused:
        where = located.get(entry.key)
        bonus = 0.0
        if where is not None:
            document = documents.get(where.item_id, 0.0) * document_confidence
            page = max((pages.get(key, 0.0) for key in where.pages()), default=0.0)
            added.document[entry.key] = document
            added.page[entry.key] = page
            bonus = document_weight * document + page_weight * page
        rescored.append(Fused(key=entry.key, score=entry.score + bonus, ranks=dict(entry.ranks)))
    rescored.sort(key=lambda entry: -entry.score)
    return rescored, added
