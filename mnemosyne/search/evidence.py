"""The evidence of pages and documents, read for the head of a fused ranking and added to it.

search/units.py says how (pure); this reads what it needs: where each candidate chunk is (as the
legs read it, else legs.locate), its pages' full-text scores (pages.py), the named documents' scores
(named_documents.py).
"""

from __future__ import annotations

from mnemosyne.search import legs, page_pointers, units
from mnemosyne.search.fusion import Fused
from mnemosyne.search.named_documents import NamedDocuments, confidence
from mnemosyne.search.pages import page_scores
from mnemosyne.search.units import Located

# The head of the fused list whose pages and documents are scored.
UNIT_POOL = 150


def with_units(
    fused: list[Fused[int]], named: NamedDocuments, leg_query: legs.LegQuery, query: str
) -> tuple[list[Fused[int]], units.UnitScores, dict[int, Located]]:
    """The fused head reordered with its pages' and documents' evidence (search/units.py); the
    rest of the list after it, as it was; and where each chunk of the head is."""
    pool = fused[:UNIT_POOL]
    if not pool:
        return fused, units.UnitScores(), {}
    located = legs.locate([entry.key for entry in pool], known=leg_query.located)
    page_keys = sorted({page for where in located.values() for page in where.pages()})
    page_text = page_scores(
        leg_query.text,
        page_keys,
        leg_query.filters.text_configs,
        periods=leg_query.filters.written_periods,
    )
    rescored, added = units.rescore(
        pool,
        located,
        documents=named.scores,
        document_confidence=confidence(named.weight),
        pages=units.page_evidence(page_text),
        pages_named=page_pointers.pages_named(query),
    )
    return rescored + fused[UNIT_POOL:], added, located
