"""The GraphStore contract, run against every backend: PostgreSQL always, Neo4j when NEO4J_URI is set.

Neo4j runs wipe every :Chunk and :Concept node of NEO4J_DATABASE: point them at a scratch database.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from django.db import connection

from mnemosyne.graph.base import ChunkConcepts, GraphStore, Neighbour
from mnemosyne.graph.concepts import Concept
from mnemosyne.graph.models import Edge, Mention
from mnemosyne.graph.postgres import PostgresGraphStore
from mnemosyne.lib.scope import Scope
from mnemosyne.library.models import Chunk, Collection, Item, Library
from mnemosyne.search.filters import Filters

NO_NEO4J = "NEO4J_URI not set: no Neo4j server here"
BACKENDS = [
    pytest.param("postgres", id="postgres"),
    pytest.param(
        "neo4j", id="neo4j", marks=pytest.mark.skipif(not os.environ.get("NEO4J_URI"), reason=NO_NEO4J)
    ),
]


def wipe_neo4j(store: GraphStore) -> None:
    from mnemosyne.graph.neo4j import Neo4jGraphStore

    store = getattr(store, "inner", store)  # get_graph_store's watcher around it
    assert isinstance(store, Neo4jGraphStore)
    store.ensure_schema()
    with store._driver.session(database=store._config.database) as session:
        session.run("MATCH (n) WHERE n:Chunk OR n:Concept DETACH DELETE n").consume()


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, db: None) -> Iterator[GraphStore]:
    if request.param == "postgres":
        yield PostgresGraphStore()
        return
    from mnemosyne.graph.neo4j import Neo4jGraphStore, Neo4jSettings

    neo4j_store = Neo4jGraphStore(Neo4jSettings.from_settings())
    wipe_neo4j(neo4j_store)
    try:
        yield neo4j_store
    finally:
        wipe_neo4j(neo4j_store)
        neo4j_store.close()


@dataclass
class Corpus:
    """Library A (collections a1, a2) and library B (collection b1), with six chunks in each collection."""

    a: Library
    b: Library
    a1: list[Chunk]
    a2: list[Chunk]
    b1: list[Chunk]


def make_chunks(collection: Collection, source: str, count: int) -> list[Chunk]:
    item = Item.objects.create(collection=collection, title=source, item_type="text", source=source)
    return [
        Chunk.objects.create(
            item=item,
            collection=collection,
            library=collection.library,
            ordinal=ordinal,
            text_preview=f"chunk {ordinal}",
            char_start=ordinal * 10,
            char_end=ordinal * 10 + 9,
            storage_key=f"test/{source}/{ordinal}.txt",
        )
        for ordinal in range(count)
    ]


@pytest.fixture
def corpus(db: None) -> Corpus:
    a = Library.objects.create(name="Library A", library_type="documentation")
    b = Library.objects.create(name="Library B", library_type="research")
    a1 = Collection.objects.create(library=a, name="a1")
    a2 = Collection.objects.create(library=a, name="a2")
    b1 = Collection.objects.create(library=b, name="b1")
    return Corpus(
        a, b, make_chunks(a1, "a1.txt", 6), make_chunks(a2, "a2.txt", 6), make_chunks(b1, "b1.txt", 6)
    )


def mentions(chunk: Chunk, *keys: str, scores: dict[str, float] | None = None) -> ChunkConcepts:
    scores = scores or {}
    concepts = [Concept(key, key.title(), scores.get(key, 1.0)) for key in keys]
    return ChunkConcepts(chunk.pk, chunk.library_id, chunk.collection_id, concepts)


def weights(store: GraphStore, key: str) -> dict[str, int]:
    return {n.key: n.weight for n in store.neighbours(key, limit=100)}


def test_neighbours_count_each_co_mentioning_chunk_once(store: GraphStore, corpus: Corpus) -> None:
    c = corpus.a1
    store.record_chunk_concepts(
        [
            mentions(c[0], "alpha", "beta", "gamma", "alpha"),  # a repeated key counts once
            mentions(c[1], "alpha", "beta"),
            mentions(c[2], "delta"),
        ]
    )
    assert store.neighbours("alpha", limit=10) == [
        Neighbour("beta", "Beta", 2, sorted([c[0].pk, c[1].pk])),
        Neighbour("gamma", "Gamma", 1, [c[0].pk]),
    ]
    assert weights(store, "gamma") == {"alpha": 1, "beta": 1}
    assert store.neighbours("alpha", limit=1)[0].key == "beta"
    assert store.neighbours("delta", limit=10) == []
    assert store.neighbours("unheard of", limit=10) == []


def test_neighbours_give_at_most_three_example_chunks(store: GraphStore, corpus: Corpus) -> None:
    store.record_chunk_concepts([mentions(chunk, "alpha", "beta") for chunk in corpus.a1])
    (beta,) = store.neighbours("alpha", limit=10)
    assert beta.weight == 6
    assert beta.example_chunk_ids == sorted(chunk.pk for chunk in corpus.a1)[:3]


def test_neighbours_within_libraries_count_only_their_chunks(store: GraphStore, corpus: Corpus) -> None:
    a, b = corpus.a1 + corpus.a2, corpus.b1
    store.record_chunk_concepts(
        [
            mentions(a[0], "alpha", "beta"),
            mentions(a[7], "alpha", "beta", "gamma"),
            mentions(b[0], "alpha", "beta"),
            mentions(b[1], "alpha", "beta", "delta"),
            mentions(b[2], "alpha", "delta"),
        ]
    )
    assert store.neighbours("alpha", limit=10, library_ids=[corpus.a.pk]) == [
        Neighbour("beta", "Beta", 2, sorted([a[0].pk, a[7].pk])),
        Neighbour("gamma", "Gamma", 1, [a[7].pk]),
    ]
    assert weights(store, "alpha") == {"beta": 4, "delta": 2, "gamma": 1}
    both = store.neighbours("alpha", limit=10, library_ids=[corpus.a.pk, corpus.b.pk])
    assert both == store.neighbours("alpha", limit=10)
    assert store.neighbours("alpha", limit=1, library_ids=[corpus.b.pk]) == [
        Neighbour("beta", "Beta", 2, sorted([b[0].pk, b[1].pk]))
    ]
    assert store.neighbours("alpha", limit=10, library_ids=[]) == []
    assert store.neighbours("gamma", limit=10, library_ids=[corpus.b.pk]) == []


def test_expand_one_hop_scores_neighbours_by_decayed_normalised_weight(
    store: GraphStore, corpus: Corpus
) -> None:
    c = corpus.a1
    store.record_chunk_concepts(
        [
            mentions(c[0], "a", "b"),
            mentions(c[1], "a", "b"),
            mentions(c[2], "a", "c"),
            mentions(c[3], "b", "d"),
        ]
    )
    assert store.expand(["a"], hops=1, limit=10) == [("a", 1.0), ("b", 0.5), ("c", 0.25)]


def test_expand_two_hops_reaches_neighbours_of_neighbours(store: GraphStore, corpus: Corpus) -> None:
    c = corpus.a1
    store.record_chunk_concepts(
        [
            mentions(c[0], "a", "b"),
            mentions(c[1], "a", "b"),
            mentions(c[2], "a", "c"),
            mentions(c[3], "b", "d"),
        ]
    )
    # d is reached through b (0.5), whose strongest edge (to a) weighs 2: 0.5 * 0.5 * 1/2.
    assert store.expand(["a"], hops=2, limit=10) == [("a", 1.0), ("b", 0.5), ("c", 0.25), ("d", 0.125)]
    assert store.expand(["a"], hops=2, limit=2) == [("a", 1.0), ("b", 0.5)]
    assert store.expand(["a", "d"], hops=1, limit=10) == [("a", 1.0), ("d", 1.0), ("b", 0.5), ("c", 0.25)]


def test_expand_keeps_unknown_seeds_and_rejects_bad_arguments(store: GraphStore, corpus: Corpus) -> None:
    assert store.expand(["nowhere"], hops=2, limit=5) == [("nowhere", 1.0)]
    with pytest.raises(ValueError, match="hops"):
        store.expand(["a"], hops=3, limit=5)
    with pytest.raises(ValueError, match="limit"):
        store.neighbours("a", limit=0)


def test_chunks_mentioning_score_concept_weight_times_mention_score(
    store: GraphStore, corpus: Corpus
) -> None:
    a1, a2, b1 = corpus.a1[0], corpus.a2[0], corpus.b1[0]
    store.record_chunk_concepts(
        [
            mentions(a1, "alpha", "beta", scores={"alpha": 1.0, "beta": 0.5}),
            mentions(a2, "alpha", scores={"alpha": 0.5}),
            mentions(b1, "beta", "gamma", scores={"beta": 1.0}),
        ]
    )
    query = [("alpha", 1.0), ("beta", 0.5)]
    tied = sorted([a2.pk, b1.pk])
    assert store.chunks_mentioning(query, limit=10) == [(a1.pk, 1.25), (tied[0], 0.5), (tied[1], 0.5)]
    assert store.chunks_mentioning(query, limit=1) == [(a1.pk, 1.25)]
    assert store.chunks_mentioning([("alpha", 0.2), ("alpha", 1.0)], limit=10) == [(a1.pk, 1.0), (a2.pk, 0.5)]
    assert store.chunks_mentioning([("unknown", 1.0)], limit=10) == []
    assert store.chunks_mentioning([], limit=10) == []


def test_chunks_mentioning_and_combine_the_filters(store: GraphStore, corpus: Corpus) -> None:
    a1, a2, b1 = corpus.a1[0], corpus.a2[0], corpus.b1[0]
    store.record_chunk_concepts([mentions(chunk, "alpha") for chunk in (a1, a2, b1)])
    query = [("alpha", 1.0)]

    def ids(**filters: Any) -> set[int]:
        return {chunk_id for chunk_id, _ in store.chunks_mentioning(query, limit=10, scope=Scope(**filters))}

    assert ids() == {a1.pk, a2.pk, b1.pk}
    assert ids(library_id=corpus.a.pk) == {a1.pk, a2.pk}
    assert ids(collection_id=a2.collection_id) == {a2.pk}
    assert ids(library_ids=[corpus.b.pk]) == {b1.pk}
    assert ids(library_ids=[corpus.a.pk, corpus.b.pk]) == {a1.pk, a2.pk, b1.pk}
    assert ids(library_ids=[]) == set()
    assert ids(library_id=corpus.a.pk, collection_id=b1.collection_id) == set()
    assert ids(library_id=corpus.a.pk, library_ids=[corpus.b.pk]) == set()


def test_one_scope_selects_the_same_chunks_in_sql_the_orm_and_the_graph(
    store: GraphStore, corpus: Corpus
) -> None:
    every = corpus.a1 + corpus.a2 + corpus.b1
    store.record_chunk_concepts([mentions(chunk, "alpha") for chunk in every])
    a2, b1 = corpus.a2[0].collection_id, corpus.b1[0].collection_id
    scopes = [
        Scope(),
        Scope(library_id=corpus.a.pk),
        Scope(collection_id=a2),
        Scope(library_ids=[corpus.b.pk]),
        Scope(library_ids=[corpus.a.pk, corpus.b.pk], collection_id=b1),
        Scope(library_id=corpus.a.pk, collection_id=b1),
        Scope(library_ids=[]),
        # A search's filters are a scope too: what only the chunk tables know is left to them.
        Filters(library_id=corpus.b.pk, include_images=False, item_ids=[corpus.b1[0].item_id]),
    ]
    for scope in scopes:
        in_graph = {
            chunk_id for chunk_id, _ in store.chunks_mentioning([("alpha", 1.0)], scope=scope, limit=100)
        }
        in_orm = set(
            Chunk.objects.filter(Scope.q(scope), id__in=[c.pk for c in every]).values_list("id", flat=True)
        )
        where, params = scope.sql("c.library_id", "c.collection_id")
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT c.id FROM library_chunk c WHERE c.id = ANY(%(ids)s){where}",
                {**params, "ids": [c.pk for c in every]},
            )
            in_sql = {chunk_id for (chunk_id,) in cursor}
        assert in_graph == in_orm == in_sql, scope
        assert not scope.matches_nothing() or in_graph == set()


def test_top_concepts_count_mentioning_chunks_within_the_filters(store: GraphStore, corpus: Corpus) -> None:
    store.record_chunk_concepts(
        [mentions(chunk, "alpha", "beta") for chunk in corpus.a1[:3]]
        + [mentions(chunk, "beta") for chunk in corpus.a2[:2]]
        + [mentions(chunk, "gamma") for chunk in corpus.b1]
    )
    everything = [(c.key, c.label, c.mention_count) for c in store.top_concepts(limit=10)]
    assert everything == [("gamma", "Gamma", 6), ("beta", "Beta", 5), ("alpha", "Alpha", 3)]
    assert [c.key for c in store.top_concepts(limit=1, offset=1)] == ["beta"]
    in_a = store.top_concepts(scope=Scope(library_id=corpus.a.pk), limit=10)
    assert [(c.key, c.mention_count) for c in in_a] == [("beta", 5), ("alpha", 3)]
    in_a2 = store.top_concepts(scope=Scope(collection_id=corpus.a2[0].collection_id), limit=10)
    assert [(c.key, c.mention_count) for c in in_a2] == [("beta", 2)]
    elsewhere = Scope(library_id=corpus.a.pk, collection_id=corpus.b1[0].collection_id)
    assert store.top_concepts(scope=elsewhere, limit=10) == []
    assert store.top_concepts(scope=Scope(library_ids=[]), limit=10) == []


def test_known_concepts_are_those_some_chunk_mentions(store: GraphStore, corpus: Corpus) -> None:
    store.record_chunk_concepts([mentions(corpus.a1[0], "alpha", "beta")])
    assert store.known_concepts(["beta", "nope", "alpha", "beta"]) == ["beta", "alpha"]
    assert store.known_concepts([]) == []
    store.forget_chunks([corpus.a1[0].pk])
    assert store.known_concepts(["alpha", "beta"]) == []


def test_forget_chunks_takes_their_pairs_off_edges_and_drops_edges_at_zero(
    store: GraphStore, corpus: Corpus
) -> None:
    c = corpus.a1
    store.record_chunk_concepts(
        [mentions(c[0], "alpha", "beta", "gamma"), mentions(c[1], "alpha", "beta"), mentions(c[2], "gamma")]
    )
    store.forget_chunks([c[0].pk])
    assert weights(store, "alpha") == {"beta": 1}
    assert weights(store, "gamma") == {}
    assert [(x.key, x.mention_count) for x in store.top_concepts(limit=10)] == [
        ("alpha", 1),
        ("beta", 1),
        ("gamma", 1),
    ]
    store.forget_chunks([c[0].pk])  # again: nothing changes
    store.forget_chunks([])
    assert weights(store, "alpha") == {"beta": 1}
    store.forget_chunks([c[1].pk, c[2].pk])
    assert store.neighbours("alpha", limit=10) == []
    assert store.top_concepts(limit=10) == []


def test_recording_a_chunk_again_replaces_what_it_mentioned(store: GraphStore, corpus: Corpus) -> None:
    c = corpus.a1
    store.record_chunk_concepts([mentions(c[0], "alpha", "beta", "gamma"), mentions(c[1], "alpha", "beta")])
    store.record_chunk_concepts([mentions(c[0], "alpha", "beta", "gamma")])  # the same again
    assert weights(store, "alpha") == {"beta": 2, "gamma": 1}
    store.record_chunk_concepts([mentions(c[0], "alpha", "delta", scores={"alpha": 0.5})])
    assert weights(store, "alpha") == {"beta": 1, "delta": 1}
    assert weights(store, "gamma") == {}
    assert store.chunks_mentioning([("alpha", 1.0)], limit=10) == [(c[1].pk, 1.0), (c[0].pk, 0.5)]
    store.record_chunk_concepts([mentions(c[0])])  # mentions nothing now
    assert weights(store, "alpha") == {"beta": 1}
    assert store.known_concepts(["delta"]) == []


def test_the_first_label_recorded_for_a_concept_stays(store: GraphStore, corpus: Corpus) -> None:
    first = ChunkConcepts(
        corpus.a1[0].pk, corpus.a.pk, corpus.a1[0].collection_id, [Concept("gpu", "GPUs", 1.0)]
    )
    second = ChunkConcepts(
        corpus.a1[1].pk, corpus.a.pk, corpus.a1[1].collection_id, [Concept("gpu", "gpu", 1.0)]
    )
    store.record_chunk_concepts([first])
    store.record_chunk_concepts([second])
    assert [(c.key, c.label) for c in store.top_concepts(limit=5)] == [("gpu", "GPUs")]


# PostgreSQL only: edge weights follow mentions however rows are deleted or written.


def test_deleting_an_item_through_django_takes_its_chunks_off_the_edges(corpus: Corpus) -> None:
    store = PostgresGraphStore()
    a1, a2 = corpus.a1, corpus.a2
    store.record_chunk_concepts(
        [
            mentions(a1[0], "alpha", "beta"),
            mentions(a1[1], "alpha", "gamma"),
            mentions(a2[0], "alpha", "beta"),
        ]
    )
    Item.objects.filter(pk=a1[0].item_id).delete()
    assert weights(store, "alpha") == {"beta": 1}
    assert not Mention.objects.filter(chunk_id__in=[a1[0].pk, a1[1].pk]).exists()
    Chunk.objects.filter(pk=a2[0].pk).delete()
    assert store.neighbours("alpha", limit=10) == []
    assert not Edge.objects.exists()


def test_mentions_written_with_the_orm_also_update_edges(corpus: Corpus) -> None:
    store = PostgresGraphStore()
    store.record_chunk_concepts([mentions(corpus.a1[0], "alpha", "beta", "gamma")])
    beta, gamma = Mention.objects.filter(concept__key__in=["beta", "gamma"]).order_by("concept__key")
    chunk = corpus.a1[1]
    Mention.objects.bulk_create(
        [
            Mention(chunk=chunk, concept_id=m.concept_id, score=1.0, library_id=chunk.library_id,
                    collection_id=chunk.collection_id)
            for m in (beta, gamma)
        ]
    )  # fmt: skip
    assert weights(store, "beta") == {"alpha": 1, "gamma": 2}
    Mention.objects.filter(chunk=chunk, concept_id=gamma.concept_id).delete()
    assert weights(store, "beta") == {"alpha": 1, "gamma": 1}
