"""Every tool, as a client sees it in tools/list, is fully described (zulip's rule, and the spec's hints)."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_server.tools.catalog import TOOL_SPECS, WRITE_TOOLS
from tests.mcp_server.clients import mcp_session, run

pytestmark = pytest.mark.django_db(transaction=True)


def listed_tools(base: str) -> list[Any]:
    async def scenario() -> list[Any]:
        async with mcp_session(base, None, "streamable-http") as session:
            return list((await session.list_tools()).tools)

    return run(scenario)


def test_every_tool_is_described_strict_annotated_versioned_and_has_an_output_schema(
    in_process_url: str,
) -> None:
    tools = listed_tools(in_process_url)
    assert [tool.name for tool in tools] == [spec.name for spec in TOOL_SPECS]
    for tool in tools:
        assert tool.title and len(tool.description or "") > 80, tool.name
        schema = tool.input_schema
        assert schema["type"] == "object" and schema["additionalProperties"] is False, tool.name
        for name, prop in schema.get("properties", {}).items():
            assert prop.get("description"), f"{tool.name}.{name} has no description"
        for required in schema.get("required", []):
            assert required in schema["properties"], f"{tool.name} requires an undeclared {required}"
        assert tool.output_schema and tool.output_schema["type"] == "object", tool.name
        hints = tool.annotations
        assert hints is not None
        assert None not in (
            hints.read_only_hint,
            hints.destructive_hint,
            hints.idempotent_hint,
            hints.open_world_hint,
        ), tool.name
        assert tool.meta and tool.meta["version"] and tool.meta["writes"] is (tool.name in WRITE_TOOLS)


def test_the_hints_tell_reads_from_writes(in_process_url: str) -> None:
    by_name = {tool.name: tool.annotations for tool in listed_tools(in_process_url)}
    assert {"upsert_item", "delete_item", "sync_source", "run_evaluation", "reembed_library"} == WRITE_TOOLS
    for name, hints in by_name.items():
        # Only the user's own libraries, never the outside world — but a sync reads its source,
        # which may be a website.
        assert hints.open_world_hint is (name == "sync_source")
        if name == "run_evaluation":
            # It adds a run each call and changes nothing of the libraries.
            assert (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint) == (
                False,
                False,
                False,
            )
        elif name in WRITE_TOOLS:
            assert hints.read_only_hint is False and hints.destructive_hint is True
            assert hints.idempotent_hint is True
        else:
            assert hints.read_only_hint is True and hints.destructive_hint is False
            assert hints.idempotent_hint is True


def test_required_arguments_are_declared_required(in_process_url: str) -> None:
    required = {
        tool.name: set(tool.input_schema.get("required", [])) for tool in listed_tools(in_process_url)
    }
    assert required["search"] == {"query"}
    assert required["get_chunk"] == {"chunk_uid"}
    assert required["get_concept_neighbors"] == {"concept"}
    assert required["upsert_item"] == {"collection_uid", "title"}
    assert required["delete_item"] == {"item_uid"}
    assert required["sync_source"] == {"source_uid"}
    assert required["run_evaluation"] == {"evaluation_set_uid"}
    assert required["get_evaluation_run"] == {"run_id"}
    assert required["reembed_library"] == {"library_uid"}
    assert required["list_concepts"] == required["list_topics"] == required["get_collection_config"] == set()


def test_every_tool_takes_strict_arguments_each_described() -> None:
    for spec in TOOL_SPECS:
        config = spec.arguments.model_config
        assert config.get("strict") is True and config.get("extra") == "forbid", spec.name
        for name, field in spec.arguments.model_fields.items():
            assert field.description, f"{spec.name}.{name} has no description"
        assert ("cursor" in spec.arguments.model_fields) is spec.pages, spec.name
        assert ("next_cursor" in spec.result.model_fields) is spec.pages, spec.name
