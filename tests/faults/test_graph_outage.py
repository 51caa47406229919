"""The concept graph's store failing (as a Neo4j server going away would): search goes on without
the graph leg and says why, the concept tools answer that the graph is unavailable, the outage is
logged once, and the next answer after it returns is normal."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from access import decision, identify
from mcp_server import tool_calls
from mcp_server.asked import asked_of
from mcp_server.tools import catalog
from mnemosyne import graph
from mnemosyne.embedding import Embedder
from mnemosyne.graph import GraphError
from mnemosyne.lib import outages
from tests.conftest import ingest_fixture_docs

pytestmark = pytest.mark.django_db(transaction=True)


class Unreachable:
    """A graph store whose server is gone: every call fails as the Neo4j store fails."""

    def __getattr__(self, name: str) -> Any:
        def failing(*args: Any, **kwargs: Any) -> Any:
            raise GraphError("the graph server refused the connection")

        return failing


def call(tool: str, arguments: dict[str, Any]) -> tool_calls.ToolAnswer:
    asked = asked_of("tools/call", {"name": tool, "arguments": arguments})
    allowed = decision.check_call(identify.local(), asked, transport="test")
    spec = catalog.spec_named(tool)
    assert isinstance(allowed, decision.Allowed) and spec is not None
    return tool_calls.execute(tool_calls.ToolCall(allowed=allowed, spec=spec, arguments=arguments))


def test_a_graph_outage_is_answered_clearly_logged_once_and_recovered_from(
    embedder: Embedder, settings: Any, caplog: pytest.LogCaptureFixture
) -> None:
    ingest_fixture_docs(embedder)
    settings.SEARCH_GRAPH_WEIGHT = 0.3
    working = graph.get_graph_store()
    graph._stores[settings.GRAPH_BACKEND] = outages.Watched(
        Unreachable(), outages.Dependency.GRAPH, (GraphError,)
    )  # type: ignore[assignment]
    caplog.set_level(logging.WARNING, logger="mnemosyne.lib.outages")
    try:
        found = [
            call("search", {"query": "backup restore", "search_types": ["vector", "graph"]}) for _ in range(3)
        ]
        concepts = call("list_concepts", {})
        neighbours = call("get_concept_neighbors", {"concept": "backup"})
    finally:
        graph._stores[settings.GRAPH_BACKEND] = working
    for answer in found:
        assert not answer.is_error and answer.structured is not None
        assert answer.structured["results"], "the other legs still answer"
        assert "the concept graph is unavailable" in answer.structured["legs_not_run"]["graph"]
    for answer in (concepts, neighbours):
        assert answer.is_error and "the concept graph is unavailable right now" in answer.text
    recovered = call("list_concepts", {})
    assert not recovered.is_error
    messages = [record.getMessage() for record in caplog.records if record.name == "mnemosyne.lib.outages"]
    assert sum("the concept graph is unavailable:" in message for message in messages) == 1, messages
    assert sum("the concept graph is available again" in message for message in messages) == 1, messages
