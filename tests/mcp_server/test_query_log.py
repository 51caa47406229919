"""The query log (mnemosyne/library/query_log.py) and the console's activity views, in-process:
each tool call over MCP leaves one row (who, over what, which library, the query, hits, best score,
time, outcome); a library that opted out and QUERY_LOG_DAYS=0 leave none; old rows are pruned;
staff see every row, a library's manager only their libraries', anyone else is told no."""

from __future__ import annotations

import json
import threading
import time
from datetime import timedelta
from typing import Any
from unittest import mock

import pytest
from django.contrib.auth.models import User
from django.db import connection, transaction
from django.test import Client
from django.utils import timezone

from access.library_access import Role
from access.library_grants import grant
from access.services import create_token
from mnemosyne.embedding import get_embedder
from mnemosyne.library import query_log
from mnemosyne.library.models import Library, QueryLog
from tests.conftest import ingest_fixture_docs
from tests.mcp_server.clients import JSON_HEADERS, modern, post, rpc, run, sse_payload
from tests.mcp_server.in_process import asgi_client

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def world(settings: Any) -> dict[str, Any]:
    settings.LIBRARY_ACCESS = "grants"
    settings.QUERY_LOG_DAYS = 30
    handbook, _, _ = ingest_fixture_docs(get_embedder())
    archive, _, _ = ingest_fixture_docs(get_embedder(), library="Archive", collection="old")
    people = {
        name: User.objects.create_user(name, password="a long test password")
        for name in ("ann", "max", "rob")
    }
    grant(library=handbook, role=Role.MANAGER, user=people["max"], actor="test")
    grant(library=handbook, role=Role.READER, user=people["rob"], actor="test")
    grant(library=archive, role=Role.READER, user=people["ann"], actor="test")
    grant(library=handbook, role=Role.READER, user=people["ann"], actor="test")
    _, token = create_token(user=people["ann"], name="laptop", scopes=["read"])
    return {"handbook": handbook, "archive": archive, "people": people, "token": token}


def call(token: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    body, headers = modern("tools/call", {"name": tool, "arguments": arguments}, tool)

    async def scenario() -> dict[str, Any]:
        async with asgi_client() as client:
            sent = {**JSON_HEADERS, **headers, "Authorization": f"Bearer {token}"}
            return dict((await client.post("/mcp/", content=json.dumps(body), headers=sent)).json())

    return run(scenario)  # the app's lifespan ends with the query log's rows written


def test_each_call_leaves_one_row_saying_who_what_and_how_it_went(world: dict[str, Any]) -> None:
    answer = call(
        world["token"], "search", {"query": "restore the database", "library_uid": world["archive"].uid}
    )
    best = answer["result"]["structuredContent"]["results"]
    call(world["token"], "list_libraries", {})
    call(world["token"], "search", {"query": "x", "limit": 1000})
    search, listing, refused = QueryLog.objects.order_by("at")
    assert (search.tool, search.transport, search.caller, search.library_id) == (
        "search",
        "http",
        "ann (token laptop)",
        world["archive"].pk,
    )
    assert (search.query, search.hits, search.top_score, search.outcome) == (
        "restore the database",
        len(best),
        best[0]["score"],
        "ok",
    )
    assert search.ms > 0
    assert (listing.tool, listing.query, listing.hits, listing.library_id) == (
        "list_libraries",
        "",
        None,
        None,
    )
    assert refused.outcome == "invalid" and "limit" in refused.reason


def test_a_library_that_opted_out_and_a_log_turned_off_keep_nothing(
    world: dict[str, Any], settings: Any
) -> None:
    Library.objects.filter(pk=world["archive"].pk).update(log_queries=False)
    query_log._libraries = query_log._Libraries()  # as a process started after the change would read it
    call(world["token"], "search", {"query": "restore", "library_uid": world["archive"].uid})
    assert not QueryLog.objects.exists()
    call(world["token"], "search", {"query": "restore", "library_uid": world["handbook"].uid})
    assert QueryLog.objects.count() == 1
    settings.QUERY_LOG_DAYS = 0
    call(world["token"], "search", {"query": "restore", "library_uid": world["handbook"].uid})
    assert QueryLog.objects.count() == 1


def test_rows_older_than_query_log_days_are_pruned(world: dict[str, Any], settings: Any) -> None:
    for age in (40, 31, 29, 1):
        QueryLog.objects.create(
            at=timezone.now() - timedelta(days=age),
            tool="search",
            transport="http",
            caller="c",
            ms=1,
            outcome="ok",
        )
    assert query_log.prune() == 2
    assert QueryLog.objects.count() == 2
    settings.QUERY_LOG_DAYS = 0
    assert query_log.prune() == 2 and not QueryLog.objects.exists()


def page(person: User, **params: str) -> Any:
    client = Client()
    client.force_login(person)
    return client.get("/console/activity/", params)


def test_staff_see_every_call_a_manager_only_their_librarys_and_a_reader_none(world: dict[str, Any]) -> None:
    secret = "<script>alert('archive salaries')</script>"
    call(world["token"], "search", {"query": secret, "library_uid": world["archive"].uid})
    call(world["token"], "search", {"query": "restore the database", "library_uid": world["handbook"].uid})
    call(
        world["token"],
        "search",
        {"query": "zzqx nothing matches", "library_uid": world["handbook"].uid, "search_types": ["fulltext"]},
    )
    staff = User.objects.create_user("sam", password="a long test password", is_staff=True)

    everything = page(staff).content.decode()
    assert "archive salaries" in everything and secret not in everything  # shown as text, never run
    assert "restore the database" in everything and "zzqx nothing matches" in everything
    assert '<th scope="row">search</th><td class="num">3</td>' in everything

    managed = page(world["people"]["max"]).content.decode()
    assert "restore the database" in managed and "archive salaries" not in managed
    nothing_found = managed.split('id="nothing-found"')[1].split("<h2")[0]
    assert "zzqx nothing matches" in nothing_found and "restore the database" not in nothing_found
    # Each opens in the playground on its library, where the hit that answers it can be marked.
    offer = f"/console/playground/?q=zzqx%20nothing%20matches&amp;library={world['handbook'].uid}"
    assert f'<a class="offer" href="{offer}">add to an evaluation set</a>' in nothing_found

    refused = page(world["people"]["rob"])
    assert refused.status_code == 403
    assert "restore the database" not in refused.content.decode()
    assert "shown to staff, and to a library&#x27;s managers" in refused.content.decode()


@pytest.mark.parametrize("background", [True, False], ids=["by the writer", "before the answer"])
def test_a_log_that_cannot_be_written_never_fails_the_call(
    world: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    settings: Any,
    background: bool,
) -> None:
    settings.QUERY_LOG_BACKGROUND = background
    # No statement at all: the write fails at once.
    monkeypatch.setattr(query_log, "_ONE" if background else "_ROW", None)
    answer = call(world["token"], "search", {"query": "restore the database"})
    assert answer["result"]["structuredContent"]["results"]
    assert "could not be written to the query log" in caplog.text
    assert not QueryLog.objects.exists()


def test_past_days_are_rolled_up_once_and_the_views_count_them_with_today(world: dict[str, Any]) -> None:
    handbook, archive = world["handbook"], world["archive"]
    now = timezone.now()
    for days_ago, library, ms, outcome in [
        (3, handbook, 4.0, "ok"),
        (3, handbook, 40.0, "ok"),
        (3, archive, 400.0, "error"),
        (1, handbook, 8.0, "ok"),
        (0, handbook, 15.0, "ok"),
    ]:
        QueryLog.objects.create(
            at=now - timedelta(days=days_ago),
            tool="search",
            transport="http",
            caller="c",
            library=library,
            ms=ms,
            outcome=outcome,
        )
    rolled = query_log.roll_up()
    assert sorted(rolled) == sorted({(now - timedelta(days=d)).date() for d in (3, 1)})
    assert query_log.roll_up() == []  # each day once
    tools, per_day = query_log.load(7, None)
    (search,) = tools
    assert (search.calls, search.errors) == (5, 1)
    assert (search.p50, search.p95) == ("≤ 20", "≤ 500")  # 4, 8, 15, 40, 400 ms: buckets' upper edges
    assert [calls for _, calls in per_day] == [3, 1, 1]
    managed, _ = query_log.load(7, [handbook.pk])
    assert (managed[0].calls, managed[0].errors) == (4, 0)
    assert query_log.load(1, None)[0][0].calls == 1  # today alone
    page_html = page(
        User.objects.create_user("sue", password="a long test password", is_staff=True)
    ).content.decode()
    assert (
        '<th scope="row">search</th><td class="num">5</td><td class="num">1</td><td class="num">≤ 20</td>'
        in page_html
    )


def test_a_call_over_http_leaves_its_row(world: dict[str, Any], live_server_url: str) -> None:
    """Behind uvicorn too, the call's row is there, with who made it and how it went."""
    answer = sse_payload(
        post(live_server_url, rpc("tools/call", {"name": "list_libraries", "arguments": {}}), world["token"])
    )
    assert answer["result"]["structuredContent"]["libraries"]
    # Written by the server's writer thread, after the answer.
    deadline = time.monotonic() + 10
    while not QueryLog.objects.filter(tool="list_libraries").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    (row,) = QueryLog.objects.filter(tool="list_libraries")
    assert (row.caller, row.outcome, row.transport) == ("ann (token laptop)", "ok", "http")


def test_without_the_background_writer_the_row_is_there_when_the_call_returns(settings: Any) -> None:
    settings.QUERY_LOG_DAYS = 30
    settings.QUERY_LOG_BACKGROUND = False
    with mock.patch.object(query_log._writer, "add") as handed_over:
        query_log.record(query_log.Call("search", "http", "at once", None, "q", 1, 0.5, 1.0, "ok"))
    handed_over.assert_not_called()
    assert QueryLog.objects.filter(caller="at once").count() == 1


def test_a_row_written_inside_a_transaction_leaves_its_commit_as_it_was(settings: Any) -> None:
    settings.QUERY_LOG_DAYS = 30
    settings.QUERY_LOG_BACKGROUND = True
    row = query_log.Call("search", "http", "c", None, "q", 1, 0.5, 1.0, "ok")
    query_log.record(row)  # on its own: by the writer, committed without waiting for the disk
    assert query_log.flush()
    with transaction.atomic(), connection.cursor() as cursor:
        query_log.record(row)  # there and then, in this transaction
        assert QueryLog.objects.filter(caller="c").count() == 2
        cursor.execute("SHOW synchronous_commit")
        assert cursor.fetchone()[0] == "on"
    assert query_log.flush()
    assert QueryLog.objects.filter(caller="c").count() == 2


def test_calls_from_many_threads_are_all_written_each_once(settings: Any) -> None:
    settings.QUERY_LOG_DAYS = 30
    settings.QUERY_LOG_BACKGROUND = True
    statements: list[int] = []
    write = query_log._write

    def counted(rows: list[tuple[Any, ...]]) -> None:
        statements.append(len(rows))
        write(rows)

    with mock.patch.object(query_log, "_write", counted):

        def calls(thread: int) -> None:
            for number in range(100):
                query_log.record(
                    query_log.Call("search", "http", f"t{thread}", None, f"q{number}", 1, 0.5, 1.0, "ok")
                )

        threads = [threading.Thread(target=calls, args=(thread,)) for thread in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert query_log.flush()
    assert QueryLog.objects.filter(caller__startswith="t").count() == 600
    assert sum(statements) == 600


def test_rows_are_written_after_the_database_dropped_the_writers_connection(settings: Any) -> None:
    settings.QUERY_LOG_DAYS = 30
    settings.QUERY_LOG_BACKGROUND = True
    row = query_log.Call("search", "http", "restart", None, "q", 1, 0.5, 1.0, "ok")
    query_log.record(row)
    assert query_log.flush()
    with connection.cursor() as cursor:  # as a restart of the database would (a live server's too)
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND application_name = %s",
            [query_log.WRITER_NAME],
        )
        assert (True,) in cursor.fetchall()
    query_log.record(row)
    assert query_log.flush()
    assert QueryLog.objects.filter(caller="restart").count() == 2
