"""`manage.py serve` with several worker processes: every worker answers streamable HTTP, and legacy
SSE, whose session lives in one process, is refused with a reason instead of failing at random."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import psutil
import pytest

from tests.servers import ROOT, child_env, free_port, stop, wait_healthy

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def test_serve_runs_the_workers_it_is_asked_for_and_refuses_legacy_sse(tmp_path: Path) -> None:
    port = free_port()
    environment = child_env(tmp_path, {"MCP_REQUIRE_AUTH": "false", "SERVE_WORKERS": "2"})
    log = tmp_path / "serve.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            [sys.executable, "manage.py", "serve", "--no-worker", "--port", str(port)],
            cwd=ROOT,
            env=environment,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
        try:
            base = f"http://127.0.0.1:{port}"
            wait_healthy(process, base, log, seconds=180)
            # SERVE_WORKERS is the default: uvicorn's supervisor with two workers under it.
            workers = [
                child
                for child in psutil.Process(process.pid).children(recursive=True)
                if "multiprocessing" in " ".join(child.cmdline())
            ]
            assert len(workers) >= 2, [child.cmdline() for child in workers]
            with httpx.Client(base_url=base, headers=HEADERS, timeout=60) as client:
                for number in range(20):
                    call = {
                        "jsonrpc": "2.0",
                        "id": number,
                        "method": "tools/call",
                        "params": {"name": "list_libraries", "arguments": {}},
                    }
                    answer = client.post("/mcp/", content=json.dumps(call))
                    assert answer.status_code == 200 and "isError" in answer.text
                    assert '"isError":true' not in answer.text
                sse = client.get("/mcp/sse/")
            assert sse.status_code == 503
            assert "--workers 1" in sse.json()["error"] and "streamable HTTP" in sse.json()["error"]
            assert "2 worker processes" in log.read_text()
        finally:
            stop(process)
