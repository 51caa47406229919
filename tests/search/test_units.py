"""Pages and documents fused into the chunk ranking, and numbers in the forms people type them. Pure."""

from __future__ import annotations

import datetime as dt

from mnemosyne.library.searchable_forms import document_form, query_form
from mnemosyne.search.documents import _Document, score
from mnemosyne.search.fusion import Fused
from mnemosyne.search.units import Located, page_evidence, rescore


def test_numbers_are_indexed_as_typed_with_and_without_separators_and_signs() -> None:
    assert document_form("Cash $5,794 and (1,234)") == "Cash $5794 and (1234) -1234"
    assert query_form("cash of 5,794 or (1,234)") == "cash of 5794 or (1234)"
    assert document_form("1,234.56 and 10,000,000") == "1234.56 and 10000000"
    assert "fiscal 2019" in query_form("FY2019") and "fiscal 2019" in document_form("FY19")
    assert query_form("Q3 results") == "Q3 third quarter results"
    # Lists of small numbers are left alone.
    assert document_form("items 1,2,3") == "items 1,2,3"


def test_a_page_whose_evidence_is_spread_over_chunks_outranks_one_loose_chunk() -> None:
    fused = [Fused(1, 0.8), Fused(2, 0.7), Fused(3, 0.7), Fused(4, 0.65)]
    located = {1: Located(10, 5), 2: Located(20, 8), 3: Located(20, 8), 4: Located(20, 8)}
    evidence = page_evidence(fused, located, {(10, 5): 3.0, (20, 8): 9.0})
    assert evidence[(20, 8)] == 1.0 and evidence[(10, 5)] < 0.5
    ranked, added = rescore(fused, located, documents={}, document_confidence=0.0, pages=evidence)
    assert ranked[0].key in (2, 3) and added.page[2] == 1.0


def test_the_version_the_question_names_outranks_the_same_passage_of_another() -> None:
    fused = [Fused(1, 0.95), Fused(2, 0.93)]
    located = {1: Located(10, 3), 2: Located(11, 3)}
    ranked, added = rescore(
        fused, located, documents={11: 1.0, 10: 0.4}, document_confidence=1.0, pages={}
    )
    assert [entry.key for entry in ranked] == [2, 1]
    assert added.document == {1: 0.4, 2: 1.0}


def test_asked_for_the_latest_the_newest_version_of_each_organisations_documents_wins() -> None:
    documents = [
        _Document(1, 3.0, "Apple Inc.", "10-Q", dt.date(2023, 7, 1)),
        _Document(2, 3.0, "Apple Inc.", "10-Q", dt.date(2023, 4, 1)),
        _Document(3, 1.0, "Intel Corporation", "10-Q", dt.date(2023, 9, 30)),
    ]
    latest = score(documents, 3.0, latest=True)
    assert latest[1] > latest[2] > latest[3]
    assert score(documents, 3.0, latest=False) == {1: 1.0, 2: 1.0, 3: 1 / 3}
    assert score(documents, 0.0, latest=True) == {}
