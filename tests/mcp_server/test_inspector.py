"""The MCP Inspector CLI (docs/clients.md) lists our tools and calls one with a bearer token."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from django.contrib.auth.models import User

from access.services import create_token
from mcp_server.tools.catalog import TOOL_SPECS
from tests.server_fixtures import node_env, npx
from tests.servers import ROOT

pytestmark = pytest.mark.django_db(transaction=True)


def inspector(url: str, *args: str, home: Path) -> subprocess.CompletedProcess[str]:
    command = [*npx("@modelcontextprotocol/inspector"), "--cli", url, "--transport", "http", *args]
    env = {**node_env(home), "MCP_CATALOG_PATH": str(home / "mcp.json")}
    return subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False
    )


def test_the_inspector_cli_lists_tools_and_calls_one_with_a_token(
    live_server_url: str, tmp_path: Path
) -> None:
    _, token = create_token(user=User.objects.create(username="inspector"), name="inspector")
    url = f"{live_server_url}/mcp/"

    listed = inspector(url, "--method", "tools/list", home=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert {tool["name"] for tool in json.loads(listed.stdout)["tools"]} == {spec.name for spec in TOOL_SPECS}

    called = inspector(
        url,
        "--method",
        "tools/call",
        "--tool-name",
        "list_libraries",
        "--tool-arg",
        "limit=5",
        "--header",
        f"Authorization: Bearer {token}",
        home=tmp_path,
    )
    assert called.returncode == 0, called.stderr
    result = json.loads(called.stdout)
    assert result["structuredContent"] == {"libraries": [], "next_cursor": None}
    assert result["_meta"]["elapsed_ms"] >= 0

    refused = inspector(url, "--method", "tools/call", "--tool-name", "list_libraries", home=tmp_path)
    assert refused.returncode != 0
