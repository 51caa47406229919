"""SearchService against real data: ingest the fixtures, then query."""

from __future__ import annotations

import pytest

from mnemosyne.ingestion.embedding import Embedder
from mnemosyne.library.errors import InvalidArgument, NotFound
from mnemosyne.search.service import SearchRequest, search
from tests.conftest import ingest_fixture_docs

pytestmark = pytest.mark.django_db


@pytest.fixture
def corpus(embedder: Embedder):
    handbook = ingest_fixture_docs(embedder)
    other = ingest_fixture_docs(embedder, library="Archive", collection="old", library_type="notes")
    return handbook, other


def top_titles(request: SearchRequest, embedder: Embedder) -> list[str]:
    return [hit.chunk.item.title for hit in search(request, embedder=embedder).hits]


def test_a_semantic_query_finds_the_right_chunk(corpus, embedder: Embedder) -> None:
    response = search(SearchRequest(query="how do I bring the database back from a dump?"), embedder=embedder)
    best = response.hits[0]
    assert best.chunk.item.title == "Backups"
    assert "Restoring" in best.chunk.section_path
    assert response.legs_run == ["vector", "fulltext"]
    assert "graph" in response.legs_not_run
    assert response.rerank_applied is False and "no reranker" in response.rerank_note


def test_a_keyword_query_finds_the_right_chunk_by_full_text(corpus, embedder: Embedder) -> None:
    response = search(SearchRequest(query="uvicorn sticky", search_types=["fulltext"]), embedder=embedder)
    assert response.hits[0].chunk.section_path.endswith("Workers")
    assert response.hits[0].legs["fulltext"].rank == 1


def test_filters_are_and_combined_in_each_leg(corpus, embedder: Embedder) -> None:
    (handbook, _, _), (archive, archive_col, _) = corpus
    for request in (
        SearchRequest(query="backups", library_uid=archive.uid),
        SearchRequest(query="backups", collection_uid=archive_col.uid),
        SearchRequest(query="backups", library_type="notes"),
    ):
        hits = search(request, embedder=embedder).hits
        assert hits and {hit.chunk.library_id for hit in hits} == {archive.id}
    mismatch = SearchRequest(query="backups", library_uid=archive.uid, library_type="documentation")
    assert search(mismatch, embedder=embedder).hits == []
    crossed = SearchRequest(query="backups", library_uid=handbook.uid, collection_uid=archive_col.uid)
    assert search(crossed, embedder=embedder).hits == []


def test_limit_bounds_the_results(corpus, embedder: Embedder) -> None:
    assert len(search(SearchRequest(query="the", limit=2), embedder=embedder).hits) == 2


@pytest.mark.parametrize(
    ("request_kwargs", "message"),
    [
        ({"query": "   "}, "must not be empty"),
        ({"query": "x", "limit": 0}, "between 1 and 100"),
        ({"query": "x", "limit": 101}, "between 1 and 100"),
        ({"query": "x", "search_types": ["telepathy"]}, "unknown search type"),
        ({"query": "x", "search_types": []}, "at least one"),
        ({"query": "x", "library_type": "poetry"}, "unknown library_type"),
        ({"query": "x" * 20_001}, "maximum"),
    ],
)
def test_bad_requests_get_clear_errors(embedder: Embedder, request_kwargs: dict, message: str) -> None:
    with pytest.raises(InvalidArgument, match=message):
        search(SearchRequest(**request_kwargs), embedder=embedder)


def test_an_unknown_filter_uid_is_named(embedder: Embedder) -> None:
    with pytest.raises(NotFound, match="lib_nope"):
        search(SearchRequest(query="x", library_uid="lib_nope"), embedder=embedder)
    with pytest.raises(NotFound, match="col_nope"):
        search(SearchRequest(query="x", collection_uid="col_nope"), embedder=embedder)


@pytest.mark.parametrize(
    "query", ["the and of", "?!…;", "Резервное копирование базы", "' OR 1=1 --", "a:* & !"]
)
def test_odd_queries_return_results_or_nothing_but_never_fail(corpus, embedder: Embedder, query: str) -> None:
    response = search(SearchRequest(query=query), embedder=embedder)
    assert isinstance(response.hits, list)
