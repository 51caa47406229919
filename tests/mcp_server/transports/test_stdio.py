"""`manage.py mcp_stdio` started by the official Python SDK's stdio client: every tool, a token's
library boundary, the local operator, refusals, and a malformed line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from access.services import create_token
from mcp_server.tools.catalog import TOOL_SPECS
from mnemosyne.embedding import Embedder
from mnemosyne.library.models import Collection, Library
from tests.conftest import ingest_fixture_docs
from tests.mcp_server.clients import run
from tests.servers import ROOT, database_url

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def stdio_env(data_dir: Path, **extra: str) -> dict[str, str]:
    return {
        **{key: value for key, value in os.environ.items() if key != "MNEMOSYNE_TOKEN"},
        "DJANGO_SETTINGS_MODULE": "mnemosyne.project.settings",
        "DATABASE_URL": database_url(),
        "MNEMOSYNE_DATA_DIR": str(data_dir),
        "DEBUG": "true",
        "LOG_LEVEL": "warning",
        **extra,
    }


# Where the server says people reach it (links to the console in answers).
PUBLIC = "https://mnemosyne.example.org"


def server(data_dir: Path, *args: str, **extra: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=[str(ROOT / "manage.py"), "mcp_stdio", *args],
        env=stdio_env(data_dir, **extra),
        cwd=str(ROOT),
    )


async def session_calls(
    parameters: StdioServerParameters, calls: list[tuple[str, dict[str, Any]]]
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        out["tools"] = {tool.name for tool in (await session.list_tools()).tools}
        for name, arguments in calls:
            out[name] = await session.call_tool(name, arguments)
        out["resource"] = await session.read_resource("mnemosyne://libraries")
    return out


@pytest.fixture
def two_libraries(embedder: Embedder) -> tuple[Library, Collection, Library]:
    library, collection, _ = ingest_fixture_docs(embedder)
    other, _, _ = ingest_fixture_docs(embedder, library="Elsewhere", collection="other")
    return library, collection, other


def test_every_tool_over_stdio_within_the_tokens_library(
    shared_data_dir: Path, two_libraries: tuple[Library, Collection, Library]
) -> None:
    library, collection, other = two_libraries
    _, token = create_token(
        user=User.objects.create(username="desktop"),
        name="stdio",
        scopes=["read", "write"],
        libraries=[library],
    )
    note = {"collection_uid": collection.uid, "title": "Tides", "text": "# Tides\n\nHigh water at 06:12."}

    async def scenario() -> dict[str, Any]:
        parameters = server(shared_data_dir, MNEMOSYNE_TOKEN=token, MCP_PUBLIC_BASE_URL=PUBLIC)
        first = await session_calls(parameters, [("search", {"query": "restore the database from a dump"})])
        hit = first["search"].structured_content["results"][0]
        rest = await session_calls(
            parameters,
            [
                ("get_chunk", {"chunk_uid": hit["chunk_uid"]}),
                ("list_libraries", {}),
                ("list_collections", {"library_uid": library.uid}),
                ("list_items", {"collection_uid": collection.uid}),
                ("get_collection_config", {"collection_uid": collection.uid}),
                ("list_topics", {"library_uid": library.uid}),
                ("list_concepts", {"library_uid": library.uid}),
                ("get_concept_neighbors", {"concept": "backup"}),
                ("get_ingestion_status", {"collection_uid": collection.uid}),
                ("upsert_item", note),
                ("list_collections", {"library_uid": other.uid}),
            ],
        )
        created = rest["upsert_item"].structured_content["item_uid"]
        deleted = await session_calls(parameters, [("delete_item", {"item_uid": created, "dry_run": False})])
        return {**first, **rest, "deleted": deleted["delete_item"], "hit": hit}

    out = run(scenario)
    assert out["tools"] == {spec.name for spec in TOOL_SPECS}
    assert out["hit"]["library"]["uid"] == library.uid
    # Citations open in the console at this server's public address, over stdio too.
    citation = f"{PUBLIC}/console/chunks/{out['hit']['chunk_uid']}#passage"
    assert out["hit"]["url"] == out["get_chunk"].structured_content["url"] == citation
    for name in (
        "get_chunk",
        "list_libraries",
        "list_items",
        "get_collection_config",
        "list_topics",
        "list_concepts",
        "get_ingestion_status",
    ):
        assert out[name].is_error is False, (name, out[name].content)
    assert out["get_concept_neighbors"].is_error is False
    assert [lib["uid"] for lib in out["list_libraries"].structured_content["libraries"]] == [library.uid]
    assert out["upsert_item"].structured_content["status"] == "created"
    assert out["deleted"].structured_content["deleted"] is True
    # The other library is outside the token's boundary: as if it did not exist.
    outside = out["list_collections"]
    assert outside.is_error and other.uid in outside.content[0].text
    libraries = json.loads(out["resource"].contents[0].text)
    assert [entry["uid"] for entry in libraries["libraries"]] == [library.uid]


def test_the_local_operator_sees_every_library(
    shared_data_dir: Path, two_libraries: tuple[Library, Collection, Library]
) -> None:
    library, _, other = two_libraries

    async def scenario() -> dict[str, Any]:
        return await session_calls(server(shared_data_dir, "--local"), [("list_libraries", {})])

    out = run(scenario)
    uids = {lib["uid"] for lib in out["list_libraries"].structured_content["libraries"]}
    assert {library.uid, other.uid} <= uids


@pytest.mark.parametrize(
    ("args", "extra", "message"),
    [
        ((), {}, "stdio needs a credential: set MNEMOSYNE_TOKEN"),
        (("--local",), {"MNEMOSYNE_TOKEN": "mnem_x"}, "give MNEMOSYNE_TOKEN or --local, not both"),
        (
            (),
            {"MNEMOSYNE_TOKEN": "mnem_" + "z" * 43},
            "MNEMOSYNE_TOKEN is refused: the bearer token is not valid",
        ),
    ],
)
def test_without_a_usable_credential_it_refuses_in_one_line(
    shared_data_dir: Path, args: tuple[str, ...], extra: dict[str, str], message: str
) -> None:
    done = subprocess.run(
        [sys.executable, "manage.py", "mcp_stdio", *args],
        cwd=ROOT,
        env=stdio_env(shared_data_dir, **extra),
        input="",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0 and done.stdout == ""
    (line,) = done.stderr.strip().splitlines()
    assert message in line


def test_a_malformed_line_gets_a_parse_error_and_eof_ends_it(shared_data_dir: Path) -> None:
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    lines = "this is not json\n" + '{"hello": "world"}\n' + json.dumps(initialize) + "\n"
    done = subprocess.run(
        [sys.executable, "manage.py", "mcp_stdio", "--local"],
        cwd=ROOT,
        env=stdio_env(shared_data_dir),
        input=lines,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr  # EOF ends it cleanly
    answers = [json.loads(line) for line in done.stdout.splitlines()]  # stdout: protocol only
    assert answers[0] == {"jsonrpc": "2.0", "id": None, "error": answers[0]["error"]}
    assert answers[0]["error"]["code"] == -32700
    assert answers[1]["error"]["code"] == -32600
    assert answers[2]["id"] == 1 and answers[2]["result"]["serverInfo"]["name"] == "mnemosyne"
