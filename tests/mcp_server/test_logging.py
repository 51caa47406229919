"""What the server writes to its log, read from a real uvicorn's output: LOG_LEVEL reaches uvicorn's
own loggers, LOG_FORMAT=json gives one object per line with the request id, and no credential sent
in a URL is written down."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from mnemosyne.library.models import Collection, Library
from tests.mcp_server.clients import JSON_HEADERS, post, rpc
from tests.servers import uvicorn_server

# A real uvicorn process: the full tier.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def test_json_logs_carry_the_request_id_and_never_a_query_string(
    shared_data_dir: Path, corpus: tuple[Library, Collection], token: str
) -> None:
    env = {"LOG_LEVEL": "info", "LOG_FORMAT": "json"}
    with uvicorn_server(shared_data_dir, env=env, log_name="json-logs") as base:
        refused = httpx.post(
            f"{base}/mcp/?access_token={token}&token={token}",
            content=json.dumps(rpc("tools/call", {"name": "list_libraries", "arguments": {}})),
            headers=JSON_HEADERS,
        )
        assert refused.status_code == 401
        called = post(
            base,
            rpc("tools/call", {"name": "list_libraries", "arguments": {}}),
            token,
            headers={"X-Request-ID": "req-from-the-proxy-1"},
        )
        assert called.status_code == 200
        assert called.headers["x-request-id"] == "req-from-the-proxy-1"
        made_up = post(base, rpc("tools/list"), headers={"X-Request-ID": "no spaces\tor tabs"})
        assert made_up.headers["x-request-id"] != "no spaces\tor tabs"
        log_file = next(shared_data_dir.glob("json-logs-*.log"))
    text = log_file.read_text()
    assert token not in text
    records = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
    access = [record for record in records if record["logger"] == "uvicorn.access"]
    # LOG_LEVEL=info reaches uvicorn: its access lines are written, the query string cut.
    assert any("POST /mcp/?…" in record["message"] for record in access), access
    tool_lines = [record for record in records if record.get("tool") == "list_libraries"]
    assert tool_lines, records
    line = tool_lines[-1]
    assert line["request_id"] == "req-from-the-proxy-1"
    assert line["outcome"] == "ok" and line["caller"] == "token" and line["level"] == "INFO"
    assert "arguments" not in line
