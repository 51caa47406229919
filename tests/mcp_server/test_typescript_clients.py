"""The official TypeScript SDK clients over streamable HTTP (sdk_clients/typescript_client.mjs):
v2 negotiating 2026-07-28 and pinned to it, v1 on the 2025-11-25 handshake. Each lists tools,
resources and prompts, calls search with its result validated against the output schema, and reads
the evidence app's page; an unknown uid is the tool's error."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from mcp_server import evidence_app
from mnemosyne.library.models import Collection, Library
from tests.server_fixtures import node_bin, node_env
from tests.servers import ROOT

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]
CLIENT = Path(__file__).parent / "sdk_clients" / "typescript_client.mjs"


def typescript_client(mode: str, url: str, token: str, home: Path) -> dict[str, Any]:
    command = [str(node_bin() / "node"), str(CLIENT), mode, f"{url}/mcp/", token, "How are backups kept?"]
    done = subprocess.run(
        command, cwd=ROOT, env=node_env(home), capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    seen: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return seen


@pytest.mark.parametrize(
    ("mode", "era", "version"),
    [("auto", "modern", "2026-07-28"), ("pin", "modern", "2026-07-28"), ("v1", "legacy", "2025-11-25")],
)
def test_the_typescript_sdk_client_lists_and_searches(
    live_server_url: str,
    corpus: tuple[Library, Collection],
    token: str,
    tmp_path: Path,
    mode: str,
    era: str,
    version: str,
) -> None:
    library, _ = corpus
    seen = typescript_client(mode, live_server_url, token, tmp_path)
    assert (seen["era"], seen["version"]) == (era, version)
    assert seen["tools"][:2] == ["search", "get_chunk"] and "upsert_item" in seen["tools"]
    assert seen["search_ui"] == {"resourceUri": evidence_app.APP_URI}
    assert {evidence_app.APP_URI, "mnemosyne://libraries", f"mnemosyne://library/{library.uid}"} <= set(
        seen["resources"]
    )
    assert evidence_app.PAGE_TEMPLATE in seen["templates"]
    assert seen["prompts"] == ["cite-sources"]
    assert seen["search"]["isError"] is False and seen["search"]["results"] > 0
    assert seen["app"] == {"mimeType": "text/html;profile=mcp-app", "bytes": len(evidence_app.html())}
    assert seen["bad_uid"]["isError"] is True and "chk_nowhere00000000" in seen["bad_uid"]["text"]
