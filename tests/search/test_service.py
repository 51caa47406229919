"""SearchService against real data: ingest the fixtures, then query."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mnemosyne.embedding import Embedder
from mnemosyne.graph import get_graph_store
from mnemosyne.graph.concepts import query_concepts
from mnemosyne.library.errors import InvalidArgument, NotFound
from mnemosyne.library.models import Chunk
from mnemosyne.library.selectors import library_boundary
from mnemosyne.search import legs, service
from mnemosyne.search.service import SearchRequest, search
from tests.conftest import committed_for_the_module, ingest_fixture_docs

# Legs run in threads of their own, on connections of their own: the corpus they read is committed,
# once for the module (tests/conftest.committed_for_the_module); the tests only read it.
pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def corpus(
    django_db_setup: None, django_db_blocker: Any, shared_data_dir: Path, embedder: Embedder
) -> Iterator[Any]:
    with committed_for_the_module(django_db_blocker, shared_data_dir):
        handbook = ingest_fixture_docs(embedder)
        other = ingest_fixture_docs(embedder, library="Archive", collection="old", library_type="notes")
        yield handbook, other


def top_titles(request: SearchRequest, embedder: Embedder) -> list[str]:
    return [hit.chunk.item.title for hit in search(request, embedder=embedder).hits]


def test_a_semantic_query_finds_the_right_chunk(corpus, embedder: Embedder) -> None:
    semantic = search(
        SearchRequest(query="how do I bring the database back from a dump?", search_types=["vector"]),
        embedder=embedder,
    )
    assert "Restoring" in semantic.hits[0].chunk.section_path
    response = search(SearchRequest(query="restoring the database with pg_restore"), embedder=embedder)
    best = response.hits[0]
    assert best.chunk.item.title == "Backups"
    assert "Restoring" in best.chunk.section_path
    assert response.legs_run == ["vector", "fulltext"]
    assert "fusion weight is 0" in response.legs_not_run["graph"]
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


def test_pages_follow_on_without_overlap(corpus, embedder: Embedder) -> None:
    whole = search(SearchRequest(query="database", limit=6, collapse_duplicates=False), embedder=embedder)
    first = search(SearchRequest(query="database", limit=3, collapse_duplicates=False), embedder=embedder)
    second = search(
        SearchRequest(query="database", limit=3, offset=3, collapse_duplicates=False), embedder=embedder
    )
    assert [h.chunk.uid for h in first.hits + second.hits] == [h.chunk.uid for h in whole.hits]
    assert first.more


def test_identical_chunks_in_two_libraries_are_collapsed(corpus, embedder: Embedder) -> None:
    collapsed = search(SearchRequest(query="restore the database", limit=5), embedder=embedder)
    previews = [hit.chunk.text_preview for hit in collapsed.hits]
    assert len(previews) == len(set(previews))
    assert collapsed.hits[0].duplicates, "the same chunk from the second library is folded into the first"
    raw = search(
        SearchRequest(query="restore the database", limit=5, collapse_duplicates=False), embedder=embedder
    )
    assert raw.hits[0].chunk.text_preview == raw.hits[1].chunk.text_preview


def test_grouped_by_item_a_document_is_its_best_chunk_and_a_copy_folds_into_the_original(
    corpus, embedder: Embedder
) -> None:
    grouped = search(SearchRequest(query="restore the database", limit=5, group_by="item"), embedder=embedder)
    items = [hit.chunk.item.id for hit in grouped.hits]
    assert len(items) == len(set(items)) > 1
    best = grouped.hits[0]
    # The same document in the other library: its best passage is a copy of this one's, so the
    # copy folds into it instead of standing as a document of its own.
    copies = set(Chunk.objects.filter(uid__in=best.duplicates).values_list("item_id", flat=True))
    assert copies and not copies & set(items)
    # The others: the document's other chunks among the ranked ones, each a chunk of it.
    raw = search(
        SearchRequest(query="restore the database", limit=50, collapse_duplicates=False), embedder=embedder
    )
    others = {hit.chunk.uid for hit in raw.hits if hit.chunk.item.id == best.chunk.item.id} - {best.chunk.uid}
    assert others and set(best.grouped) == others
    assert set(Chunk.objects.filter(uid__in=best.grouped).values_list("item_id", flat=True)) == {
        best.chunk.item.id
    }


@pytest.mark.parametrize("alpha", [0.0, 0.5, 1.0])
def test_alpha_weights_the_legs(corpus, embedder: Embedder, alpha: float) -> None:
    response = search(SearchRequest(query="restore the database", alpha=alpha), embedder=embedder)
    assert response.hits and "alpha" in response.fusion
    top = response.hits[0]
    # (Identical chunks in the two libraries tie; the top hit has the leg's best score either way.)
    for leg, weight in (("vector", alpha), ("fulltext", 1.0 - alpha)):
        if weight == 1.0:
            best = max(hit.legs[leg].score for hit in response.hits if leg in hit.legs)
            assert top.legs[leg].score == best


def test_diversity_reorders_but_keeps_the_best_first(corpus, embedder: Embedder) -> None:
    plain = search(SearchRequest(query="database backups", limit=5), embedder=embedder)
    diverse = search(SearchRequest(query="database backups", limit=5, diversity=0.9), embedder=embedder)
    assert diverse.hits[0].chunk.uid == plain.hits[0].chunk.uid
    assert {h.chunk.item_id for h in diverse.hits[:3]} != {plain.hits[0].chunk.item_id}


def test_without_a_reranker_the_response_says_so(corpus, embedder: Embedder) -> None:
    response = search(SearchRequest(query="backups", rerank=True), embedder=embedder)
    assert not response.rerank_applied and "no reranker is configured" in response.rerank_note
    assert search(SearchRequest(query="backups", rerank=False), embedder=embedder).rerank_note == ""


def test_the_graph_leg_finds_chunks_through_query_concepts(corpus, embedder: Embedder) -> None:
    response = search(SearchRequest(query="sticky sessions", search_types=["graph"]), embedder=embedder)
    assert response.legs_run == ["graph"]
    assert response.hits, "the concept 'sticky session' is mentioned in the scaling guide"
    assert response.hits[0].chunk.item.title == "Scaling the service"
    assert search(SearchRequest(query="zebra", search_types=["graph"]), embedder=embedder).hits == []


def test_the_graph_leg_honours_filters(corpus, embedder: Embedder) -> None:
    (_, _, _), (archive, _, _) = corpus
    response = search(
        SearchRequest(query="sticky sessions", search_types=["graph"], library_uid=archive.uid),
        embedder=embedder,
    )
    assert response.hits and {hit.chunk.library_id for hit in response.hits} == {archive.id}


def test_a_confined_caller_gets_no_expansion_through_edges_counted_elsewhere(
    corpus, embedder: Embedder
) -> None:
    (_, _, _), (archive, _, _) = corpus
    with library_boundary(frozenset({archive.id})):
        confined = service.validate(SearchRequest(query="sticky sessions")).filters
        response = search(SearchRequest(query="sticky sessions", search_types=["graph"]), embedder=embedder)
    assert confined.confined and confined.library_ids == [archive.id]
    assert response.hits and {hit.chunk.library_id for hit in response.hits} == {archive.id}
    store = get_graph_store()
    seeds = store.known_concepts(query_concepts("sticky sessions"))
    own_concepts_only = store.chunks_mentioning(
        [(seed, 1.0) for seed in seeds], scope=legs.Filters(library_ids=[archive.id]), limit=100
    )
    assert legs.graph_leg("sticky sessions", confined, 100) == own_concepts_only
    # The same library asked for by an open caller is scored through the expansion as well.
    unconfined = legs.Filters(library_ids=[archive.id])
    assert not unconfined.confined
    assert legs.graph_leg("sticky sessions", unconfined, 100) != own_concepts_only


def test_a_configured_reranker_reorders_the_head(corpus, embedder: Embedder, settings, server) -> None:
    settings.RERANK_URL = f"{server.base}/tei"
    settings.RERANK_PROTOCOL = "tei"
    settings.RERANK_TOP_N = 5
    response = search(SearchRequest(query="laptop mentor talk", limit=8), embedder=embedder)
    assert response.rerank_applied and "reranked by http:tei" in response.rerank_note
    reranked = [hit.rerank_score for hit in response.hits if hit.rerank_score is not None]
    assert len(reranked) == 5 and reranked == sorted(reranked, reverse=True)
    assert response.hits[0].chunk.item.title == "onboarding"
    assert server.requests and server.requests[0].body["query"] == "laptop mentor talk"


def test_a_failing_reranker_is_reported_and_the_fused_order_stands(
    corpus, embedder: Embedder, settings, server
) -> None:
    settings.RERANK_URL = f"{server.base}/error"
    response = search(SearchRequest(query="laptop mentor talk"), embedder=embedder)
    assert not response.rerank_applied and "rerank failed" in response.rerank_note
    assert response.hits and all(hit.rerank_score is None for hit in response.hits)


def test_the_graph_leg_joins_the_fusion_when_weighted(corpus, embedder: Embedder, settings) -> None:
    settings.SEARCH_GRAPH_WEIGHT = 0.2
    response = search(SearchRequest(query="sticky sessions"), embedder=embedder)
    assert response.legs_run == ["vector", "fulltext", "graph"]
    assert any("graph" in hit.legs for hit in response.hits)


@pytest.mark.parametrize(
    ("written", "plain"),
    [
        ("ｒｅｓｔｏｒｅ ｄｒｉｌｌ", "restore drill"),  # full-width forms
        ("ﬁrst", "first"),  # a ligature, as copied out of a PDF
        ("re\u00adstore", "restore"),  # a soft hyphen
    ],
)
def test_a_query_is_normalised_as_the_documents_were(
    corpus, embedder: Embedder, written: str, plain: str
) -> None:
    def found(query: str) -> list[str]:
        request = SearchRequest(query=query, search_types=["fulltext"])
        return [hit.chunk.uid for hit in search(request, embedder=embedder).hits]

    assert found(plain) and found(written) == found(plain)


def test_the_legs_say_where_their_chunks_are_as_the_chunks_rows_do(corpus, embedder: Embedder) -> None:
    found: dict[int, legs.Located] = {}
    filters = legs.Filters()
    vector = legs.vector_leg(embedder.embed_query("restoring a dump"), filters, 20, located=found)
    fulltext = legs.fulltext_leg("workers behind nginx", filters, 20, located=found)
    ids = [chunk_id for chunk_id, _ in vector + fulltext]
    assert ids and set(found) == set(ids)
    assert found == legs.locate(ids)
    # What the legs located is not read again; the rest is.
    some = dict(list(found.items())[:3])
    assert legs.locate(ids, known=some) == found
