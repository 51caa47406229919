"""What a hit's leg scores are made of (explain): each query term's share of the full-text score,
adding up to it, and the concepts through which the graph leg found a chunk, adding up to its
graph score — on the fixture documents, with the fast tier's stand-in embedder."""

from __future__ import annotations

import pytest

from mnemosyne.embedding import get_embedder
from mnemosyne.search.service import SearchRequest, search
from tests.conftest import ingest_fixture_docs

# The legs read on connections of their own: the documents are committed.
pytestmark = pytest.mark.django_db(transaction=True)


def test_the_terms_shares_add_up_to_the_full_text_score_and_name_the_query_terms() -> None:
    ingest_fixture_docs(get_embedder())
    request = SearchRequest(
        query="restoring the database from a dump", search_types=["fulltext"], explain=True
    )
    hits = search(request).hits
    assert hits
    for hit in hits:
        assert hit.term_shares, hit.chunk.uid
        assert sum(hit.term_shares.values()) == pytest.approx(hit.legs["fulltext"].score, rel=1e-9)
        assert set(hit.term_shares) <= {"restor", "databas", "dump"}
        assert list(hit.term_shares.values()) == sorted(hit.term_shares.values(), reverse=True)
    # Not asked for, not read.
    assert all(not hit.term_shares for hit in search(SearchRequest(query=request.query)).hits)


def test_the_concepts_a_graph_hit_was_found_through_add_up_to_its_graph_score() -> None:
    ingest_fixture_docs(get_embedder())
    hits = search(SearchRequest(query="sticky sessions", search_types=["graph"], explain=True)).hits
    assert hits
    for hit in hits:
        assert hit.concept_shares, hit.chunk.uid
        assert sum(hit.concept_shares.values()) == pytest.approx(hit.legs["graph"].score, rel=1e-9)
