"""A scope renders the same conditions for every store (the stores' own tests run them: the graph
contract tests compare SQL, the ORM and the graph store on one corpus). Here: the Cypher, which
this machine has no Neo4j server to run, read as text."""

from __future__ import annotations

from mnemosyne.graph import neo4j
from mnemosyne.lib.scope import EVERYWHERE, Scope


def test_an_unbounded_scope_is_true_everywhere() -> None:
    assert EVERYWHERE.cypher("ch") == ("true", {})
    assert EVERYWHERE.sql("c.library_id", "c.collection_id") == ("", {})
    assert not EVERYWHERE.matches_nothing()


def test_each_bound_is_one_condition_with_its_parameter_in_sql_and_cypher() -> None:
    scope = Scope(library_id=1, library_ids=[2, 3], collection_id=4)
    assert scope.cypher("ch") == (
        "ch.library_id = $library_id AND ch.library_id IN $library_ids AND ch.collection_id = $collection_id",
        {"library_id": 1, "library_ids": [2, 3], "collection_id": 4},
    )
    assert scope.sql("o.library_id", "i.collection_id") == (
        " AND o.library_id = %(library_id)s AND o.library_id = ANY(%(library_ids)s)"
        " AND i.collection_id = %(collection_id)s",
        {"library_id": 1, "library_ids": [2, 3], "collection_id": 4},
    )
    assert Scope(library_ids=[]).matches_nothing()


def test_the_neo4j_queries_take_the_scope_where_they_filter_chunks() -> None:
    where, _ = Scope(collection_id=4).cypher("ch")
    for query in (neo4j.CHUNKS_MENTIONING, neo4j.TOP_CONCEPTS):
        rendered = query % where
        assert "WHERE ch.collection_id = $collection_id\n" in rendered
        assert "%" not in rendered
