"""Pages and documents fused into the chunk ranking.

The legs rank chunks; a question is often answered by a page (a statement, a table) of one
version of a document. After fusion each candidate chunk gains

    DOCUMENT_WEIGHT · confidence · document score of its item      (search/named_documents.py)
  + PAGE_WEIGHT · page evidence of its page(s)

where a page's evidence is its full text's BM25 (search/pages.py) over the best candidate page's.
So a page whose evidence is spread over several chunks rises above one loose chunk elsewhere, and
a chunk of the version the question names above the same passage in another version. A chunk
running over pages takes its best page's.

A page's evidence is one piece of evidence: it is credited once, to the page's first chunk in the
fused order. Credited to every chunk on it, one page's chunks took the head of the ranking
together and pushed the other pages down — the same evidence counted two and three times
(measured: docs/benchmarks.md, "A page's evidence counted once"). Pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from dataclasses import dataclass, field

from mnemosyne.search.fusion import Fused

DOCUMENT_WEIGHT = 0.3
PAGE_WEIGHT = 0.3
# A chunk on a page the question points at ("on page 14", "the cover page").
PAGE_NAMED_WEIGHT = 0.2

PageKey = tuple[int, int]


@dataclass(frozen=True)
class Located:
    """Where a candidate chunk is: its item and its pages."""

    item_id: int
    page: int | None
    page_end: int | None = None
    # The chunk's uid (what a grouped result lists its group's other chunks by).
    uid: str = ""

    def pages(self) -> list[PageKey]:
        if self.page is None:
            return []
        return [(self.item_id, number) for number in range(self.page, (self.page_end or self.page) + 1)]


@dataclass
class UnitScores:
    """What the documents and pages added to each chunk, for `explain`."""

    document: dict[int, float] = field(default_factory=dict)
    page: dict[int, float] = field(default_factory=dict)


def page_evidence(page_text: Mapping[PageKey, float]) -> dict[PageKey, float]:
    """Each candidate page's evidence in [0, 1]: its full text's score over the best page's.

    (Adding a page's best chunks' fused scores to it was measured too, and lost: those chunks
    are in the ranking already; docs/benchmarks.md.)
    """
    best = max(page_text.values(), default=0.0)
    return {page: score / best for page, score in page_text.items()} if best > 0 else {}


def rescore(
    fused: list[Fused[int]],
    located: Mapping[int, Located],
    *,
    documents: Mapping[int, float],
    document_confidence: float,
    pages: Mapping[PageKey, float],
    pages_named: Set[int] = frozenset(),
    document_weight: float | None = None,
    page_weight: float | None = None,
) -> tuple[list[Fused[int]], UnitScores]:
    """The candidates reordered by their score plus their document's and page's (and, when the
    question points at pages by number, PAGE_NAMED_WEIGHT for a chunk on one of them).

    `fused` is in fused order (best first): a page's evidence goes to the first of its chunks."""
    document_weight = DOCUMENT_WEIGHT if document_weight is None else document_weight
    page_weight = PAGE_WEIGHT if page_weight is None else page_weight
    added = UnitScores()
    if not documents and not pages and not pages_named:
        # No evidence to add (no document named, no page scored): the order stands, and each
        # located chunk is credited nothing.
        for entry in fused:
            if entry.key in located:
                added.document[entry.key] = added.page[entry.key] = 0.0
        return list(fused), added
    rescored: list[Fused[int]] = []
    credited: set[PageKey] = set()
    for entry in fused:
        where = located.get(entry.key)
        bonus = 0.0
        if where is not None:
            document = documents.get(where.item_id, 0.0) * document_confidence
            on = where.pages()
            page = max((pages.get(key, 0.0) for key in on if key not in credited), default=0.0)
            credited.update(on)
            added.document[entry.key] = document
            added.page[entry.key] = page
            bonus = document_weight * document + page_weight * page
            if pages_named and any(number in pages_named for _, number in where.pages()):
                bonus += PAGE_NAMED_WEIGHT
        rescored.append(Fused(key=entry.key, score=entry.score + bonus, ranks=dict(entry.ranks)))
    rescored.sort(key=lambda entry: -entry.score)
    return rescored, added
