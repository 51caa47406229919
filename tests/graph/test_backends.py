"""Choosing and configuring the graph backend: PostgreSQL by default, Neo4j from settings."""

from __future__ import annotations

import json

import pytest
from django.core.exceptions import ImproperlyConfigured
from pytest_django.fixtures import Settings

from mnemosyne.graph import close_graph_store, get_graph_store
from mnemosyne.graph.base import GraphUnavailable
from mnemosyne.graph.postgres import PostgresGraphStore
from tests.test_settings import import_settings


def test_the_default_graph_store_is_postgres_and_shared() -> None:
    close_graph_store()
    assert isinstance(get_graph_store().inner, PostgresGraphStore)  # type: ignore[attr-defined]
    assert get_graph_store() is get_graph_store()
    close_graph_store()


def test_the_neo4j_backend_needs_a_uri(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NEO4J_URI", raising=False)
    settings.GRAPH_BACKEND = "neo4j"
    close_graph_store()
    with pytest.raises(ImproperlyConfigured, match="NEO4J_URI"):
        get_graph_store()


@pytest.mark.slow  # starts a process
def test_neo4j_settings_come_from_the_environment(settings: Settings) -> None:
    from mnemosyne.graph.neo4j import Neo4jSettings

    result = import_settings(
        {
            "GRAPH_BACKEND": "neo4j",
            "NEO4J_URI": "bolt://graph.internal:7687",
            "NEO4J_USER": "mnemosyne",
            "NEO4J_PASSWORD": "secret",
            "NEO4J_DATABASE": "",
        },
        code="import json, mnemosyne, mnemosyne.project.settings as s; "
        "print(json.dumps([s.NEO4J_URI, s.NEO4J_USER, s.NEO4J_PASSWORD, s.NEO4J_DATABASE]))",
    )
    assert result.returncode == 0, result.stderr
    uri, user, password, database = json.loads(result.stdout)
    settings.NEO4J_URI, settings.NEO4J_USER, settings.NEO4J_PASSWORD = uri, user, password
    settings.NEO4J_DATABASE = database
    config = Neo4jSettings.from_settings()
    assert (config.uri, config.user, config.password, config.database) == (
        "bolt://graph.internal:7687",
        "mnemosyne",
        "secret",
        None,
    )
    assert config.connection_timeout <= 5 and config.max_transaction_retry_time <= 5


@pytest.mark.slow  # starts a process
def test_a_neo4j_backend_without_a_usable_uri_refuses_to_start() -> None:
    missing = import_settings({"GRAPH_BACKEND": "neo4j", "NEO4J_URI": None})
    assert missing.returncode != 0 and "NEO4J_URI is required when GRAPH_BACKEND=neo4j" in missing.stderr
    wrong = import_settings({"GRAPH_BACKEND": "neo4j", "NEO4J_URI": "http://graph.internal:7474"})
    assert wrong.returncode != 0 and "NEO4J_URI must start with one of bolt://" in wrong.stderr


def test_an_unreachable_neo4j_raises_graph_unavailable() -> None:
    from mnemosyne.graph.neo4j import Neo4jGraphStore, Neo4jSettings

    store = Neo4jGraphStore(
        Neo4jSettings(uri="bolt://127.0.0.1:1", user="neo4j", password="x", database=None)
    )
    try:
        with pytest.raises(GraphUnavailable, match="unreachable"):
            store.known_concepts(["alpha"])
    finally:
        store.close()
