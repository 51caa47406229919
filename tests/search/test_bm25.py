"""The full-text leg's BM25 against a reference computed here, corpus statistics, and impact-ordered reads."""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import pytest
from django.db import connection, transaction
from pytest_django.fixtures import Settings

from mnemosyne.ingestion import services
from mnemosyne.library.models import Chunk, Item, Posting
from mnemosyne.library.services import ensure_collection, ensure_library
from mnemosyne.search import legs

pytestmark = pytest.mark.django_db

TEXTS = [
    "Glaciers carve valleys; glaciers retreat as the climate warms.",
    "The valley floor holds a lake fed by meltwater from the glacier.",
    "Climate records from ice cores reach back eight hundred thousand years.",
    "Lakes freeze in winter and the ice thickens until spring.",
    "Meltwater pulses raise the lake level every summer.",
]


def add_chunks(texts: list[str], *, library: str = "Geo") -> list[Chunk]:
    collection = ensure_collection(library=ensure_library(name=library), name="notes")
    item = Item.objects.create(collection=collection, title="Notes", item_type="text", source=f"{library}.md")
    chunks = Chunk.objects.bulk_create(
        Chunk(
            item=item,
            collection=collection,
            library_id=collection.library_id,
            ordinal=ordinal,
            text_preview=text,
            char_start=0,
            char_end=len(text),
            storage_key=f"{library}/{ordinal}",
        )
        for ordinal, text in enumerate(texts)
    )
    services.write_search_vectors(
        [chunk.pk for chunk in chunks], [""] * len(chunks), texts, ["english"] * len(chunks)
    )
    return chunks


def lexemes(text: str) -> Counter[str]:
    """The english configuration's lexemes of a text, with their counts (what the index stores)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT lexeme, coalesce(array_length(positions, 1), 1) FROM unnest(to_tsvector('english', %s))",
            [text],
        )
        return Counter(dict(cursor.fetchall()))


def reference_bm25(
    query: str,
    texts: list[str],
    k1: float,
    b: float,
    *,
    terms: set[str] | None = None,
    weights: dict[str, float] | None = None,
) -> list[float]:
    """BM25 of each text; `weights` gives a term's IDF·(k1 + 1) in place of its own."""
    documents = [lexemes(text) for text in texts]
    terms = set(lexemes(query)) if terms is None else terms
    n = len(documents)
    avgdl = sum(sum(document.values()) for document in documents) / n
    scores = []
    for document in documents:
        dl = sum(document.values())
        score = 0.0
        for term in terms & set(document):
            df = sum(1 for other in documents if term in other)
            weight = math.log(1 + (n - df + 0.5) / (df + 0.5)) * (k1 + 1)
            weight = (weights or {}).get(term, weight)
            tf = document[term]
            score += weight * tf / (tf + k1 * (1 - b + b * dl / avgdl))
        scores.append(score)
    return scores


def test_scores_are_bm25_from_the_current_corpus_statistics(settings: Settings) -> None:
    chunks = add_chunks(TEXTS)
    query = "glacier meltwater lake"
    expected = reference_bm25(query, TEXTS, settings.SEARCH_BM25_K1, settings.SEARCH_BM25_B)
    found = dict(legs.fulltext_leg(query, legs.Filters(), 10))
    assert set(found) == {chunk.pk for chunk, score in zip(chunks, expected, strict=True) if score > 0}
    for chunk, score in zip(chunks, expected, strict=True):
        if score > 0:
            assert found[chunk.pk] == pytest.approx(score, rel=1e-9)


def test_rescoring_reads_the_candidates_postings_from_the_per_chunk_index_alone() -> None:
    """The postings' heap stays unread by a search: posting_by_chunk_term covers what rescoring reads."""
    add_chunks(TEXTS)
    plans: list[str] = []

    def explain(execute: Any, sql: str, params: Any, many: bool, context: dict[str, Any]) -> Any:
        if "library_posting" in sql and not plans:
            with context["connection"].connection.cursor() as raw:  # the driver's own cursor
                raw.execute("EXPLAIN " + sql, params)
                plans.append("\n".join(row[0] for row in raw.fetchall()))
        return execute(sql, params, many, context)

    with transaction.atomic(), connection.cursor() as cursor:
        # A table of five chunks is read whole by the planner's choice; this asks what the index
        # can serve, as the planner chooses it on a large table. Its statistics are the five
        # chunks' own: left to autovacuum, they are whatever the tests before this one left in the
        # table, and on some of those the planner preferred the primary key's index.
        cursor.execute("ANALYZE library_posting")
        cursor.execute("SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off")
        with connection.execute_wrapper(explain):
            found = legs.fulltext_leg("glacier meltwater lake", legs.Filters(), 10)
    assert found
    (plan,) = plans
    assert "Index Only Scan using posting_by_chunk_term" in plan, plan
    assert "Index Scan using posting_by_chunk_term" not in plan, plan


def test_deleting_chunks_updates_document_frequencies_and_lengths(settings: Settings) -> None:
    chunks = add_chunks(TEXTS)
    Chunk.objects.filter(pk__in=[chunks[0].pk, chunks[1].pk]).delete()
    remaining = TEXTS[2:]
    expected = reference_bm25("lake ice", remaining, settings.SEARCH_BM25_K1, settings.SEARCH_BM25_B)
    found = dict(legs.fulltext_leg("lake ice", legs.Filters(), 10))
    assert sorted(found.values()) == pytest.approx(sorted(score for score in expected if score > 0), rel=1e-9)


def test_impacts_are_the_term_frequency_part_with_the_average_length_after_the_insert(
    settings: Settings,
) -> None:
    chunks = add_chunks(TEXTS)
    documents = {chunk.pk: lexemes(text) for chunk, text in zip(chunks, TEXTS, strict=True)}
    avgdl = sum(sum(document.values()) for document in documents.values()) / len(documents)
    k1, b = settings.SEARCH_BM25_K1, settings.SEARCH_BM25_B
    postings = list(Posting.objects.filter(chunk_id__in=documents).values("chunk_id", "tf", "dl", "impact"))
    assert len(postings) == sum(len(document) for document in documents.values())
    for posting in postings:
        tf, dl = posting["tf"], posting["dl"]
        assert dl == sum(documents[posting["chunk_id"]].values())
        assert posting["impact"] == pytest.approx(tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl)))


def test_each_term_contributes_only_its_strongest_postings(settings: Settings) -> None:
    # "river" is in every chunk; the short chunks that say it twice have the highest impacts.
    strong = ["river river", "river river bank", "river river delta"]
    weak = [
        f"the river passes {word} on its long winding way to the distant sea" for word in ("mills", "farms")
    ]
    chunks = add_chunks(strong + weak)
    strong_ids, weak_ids = {c.pk for c in chunks[:3]}, {c.pk for c in chunks[3:]}

    settings.SEARCH_BM25_TERM_POSTINGS = 3
    assert {chunk_id for chunk_id, _ in legs.fulltext_leg("river", legs.Filters(), 10)} == strong_ids
    # A rarer query term still reaches its own postings.
    found = dict(legs.fulltext_leg("river mills", legs.Filters(), 10))
    assert set(found) == strong_ids | {chunks[3].pk}

    settings.SEARCH_BM25_TERM_POSTINGS = 1000
    exact = dict(legs.fulltext_leg("river", legs.Filters(), 10))
    assert set(exact) == strong_ids | weak_ids
    exact_two_terms = dict(legs.fulltext_leg("river mills", legs.Filters(), 10))
    settings.SEARCH_BM25_TERM_POSTINGS = 3
    # The candidates are scored over all their terms' postings, exactly as without the limit:
    # the "mills" chunk's "river" posting is not among the three read, yet it counts.
    for chunk_id, score in legs.fulltext_leg("river", legs.Filters(), 10):
        assert score == pytest.approx(exact[chunk_id], rel=1e-12)
    assert found[chunks[3].pk] == pytest.approx(exact_two_terms[chunks[3].pk], rel=1e-12)
    settings.SEARCH_BM25_RESCORE = 1  # only the `limit` best candidates are rescored
    assert dict(legs.fulltext_leg("river mills", legs.Filters(), 1)) == {
        chunks[3].pk: pytest.approx(exact_two_terms[chunks[3].pk], rel=1e-12)
    }


def test_the_limit_applies_after_the_filters(settings: Settings) -> None:
    add_chunks(["river river", "river river bank", "river river delta"], library="Elsewhere")
    mine = add_chunks(["a river runs through the long valley past the old mill"], library="Mine")
    settings.SEARCH_BM25_TERM_POSTINGS = 1
    filters = legs.Filters(library_id=mine[0].library_id)
    assert [chunk_id for chunk_id, _ in legs.fulltext_leg("river", filters, 10)] == [mine[0].pk]


def test_only_the_rarest_query_terms_are_scored(settings: Settings) -> None:
    chunks = add_chunks(TEXTS)
    k1, b = settings.SEARCH_BM25_K1, settings.SEARCH_BM25_B
    # "valley" and "ice" are in two chunks each, "core" in one: with one term, "core" is scored.
    settings.SEARCH_BM25_MAX_QUERY_TERMS = 1
    expected = reference_bm25("", TEXTS, k1, b, terms={"core"})
    assert legs.fulltext_leg("valley ice cores", legs.Filters(), 10) == [
        (chunks[2].pk, pytest.approx(expected[2], rel=1e-9))
    ]
    settings.SEARCH_BM25_MAX_QUERY_TERMS = 32
    everything = reference_bm25("valley ice cores", TEXTS, k1, b)
    found = dict(legs.fulltext_leg("valley ice cores", legs.Filters(), 10))
    assert found == {
        chunk.pk: pytest.approx(score, rel=1e-9)
        for chunk, score in zip(chunks, everything, strict=True)
        if score
    }


@pytest.mark.parametrize("exact_up_to", [legs.OPERATOR_EXACT_MATCHES, 0])
@pytest.mark.parametrize(
    ("query", "matching"),
    [
        # A phrase: "the lake" also occurs in chunk 4, but only chunk 1 says "lake fed".
        ('"lake fed" meltwater', [1]),
        # Exclusion: the lake chunks without ice.
        ("lake -ice", [1, 4]),
        # OR: either side.
        ("cores or winter", [2, 3]),
    ],
)
def test_websearch_operators_restrict_the_matches_and_keep_bm25_scores(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, exact_up_to: int, query: str, matching: list[int]
) -> None:
    # Few matches are scored exactly over the matching chunks; many (here: more than 0) are
    # filtered after the bounded reads. Both give the same answer on a small corpus.
    monkeypatch.setattr(legs, "OPERATOR_EXACT_MATCHES", exact_up_to)
    chunks = add_chunks(TEXTS)
    expected = reference_bm25(query, TEXTS, settings.SEARCH_BM25_K1, settings.SEARCH_BM25_B)
    found = dict(legs.fulltext_leg(query, legs.Filters(), 10))
    assert found == {chunks[i].pk: pytest.approx(expected[i], rel=1e-9) for i in matching}


def test_operator_matches_respect_the_filters() -> None:
    add_chunks(["the lake froze early"], library="Elsewhere")
    mine = add_chunks(["a lake without ice", "the lake froze late"], library="Mine")
    filters = legs.Filters(library_id=mine[0].library_id)
    assert [chunk_id for chunk_id, _ in legs.fulltext_leg('"lake froze"', filters, 10)] == [mine[1].pk]


def test_a_long_text_is_searched_as_words_without_operators() -> None:
    chunks = add_chunks(TEXTS)
    # Over OPERATOR_MAX_QUERY_CHARS, "-ice" no longer excludes: the ice chunks are found too.
    text = "lake -ice " + "meltwater " * (legs.OPERATOR_MAX_QUERY_CHARS // 10)
    assert len(text) > legs.OPERATOR_MAX_QUERY_CHARS
    found = {chunk_id for chunk_id, _ in legs.fulltext_leg(text, legs.Filters(), 10)}
    assert found == {chunks[i].pk for i in (1, 2, 3, 4)}
