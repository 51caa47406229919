"""The console's search views in Chromium (Playwright) against uvicorn over real HTTP, under
LIBRARY_ACCESS=grants. The playground: the numbers a person reads for each hit are those MCP
`search` with `return_metadata: ["explain"]` gives an MCP client of theirs; two configurations side
by side with the moves marked; a bad value said in words. The activity views: a staff member reads
the calls just made over MCP. axe-core on each page; the docs' screenshots."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from access.library_access import Role
from access.library_grants import grant
from access.services import create_token
from mnemosyne.embedding import Embedder
from tests.browser import axe_violations, chromium, screenshot, sign_in
from tests.conftest import ingest_fixture_docs
from tests.mcp_server.clients import post, rpc, sse_payload
from tests.servers import uvicorn_server

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

PASSWORD = "a playground password 4 tests"
QUERY = "restore the database from a dump"


@pytest.fixture(scope="module")
def server(django_db_setup: None, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    data_dir = tmp_path_factory.mktemp("playground")
    with (
        django_db_blocker.unblock(),
        uvicorn_server(data_dir, env={"LIBRARY_ACCESS": "grants"}, log_name="playground") as url,
    ):
        yield url, data_dir


def test_a_person_reads_for_each_hit_what_mcp_search_answers_and_compares_two_settings(
    server: tuple[str, Path], embedder: Embedder, settings: Any
) -> None:
    base, data_dir = server
    settings.MNEMOSYNE_DATA_DIR = data_dir
    handbook, _, _ = ingest_fixture_docs(embedder)
    ingest_fixture_docs(embedder, library="Archive", collection="old")
    person = User.objects.create_user("pia", password=PASSWORD)
    grant(library=handbook, role=Role.READER, user=person, actor="test")
    _, token = create_token(user=person, name="mcp", scopes=["read"])
    arguments = {"query": QUERY, "limit": 5, "alpha": 0.3, "return_metadata": ["explain", "duplicates"]}
    answered = sse_payload(post(base, rpc("tools/call", {"name": "search", "arguments": arguments}), token))
    expected = answered["result"]["structuredContent"]["results"]
    assert expected and {hit["library"]["uid"] for hit in expected} == {handbook.uid}

    with chromium() as browser:
        page = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
        page.goto(f"{base}/console/playground/?q={QUERY.replace(' ', '+')}&limit=5&alpha=0.3")
        sign_in(page, "pia", PASSWORD)
        page.wait_for_selector("li.hit")
        hits = page.locator("li.hit")
        assert hits.count() == len(expected)
        for number, hit in enumerate(expected):
            row = hits.nth(number)
            assert row.get_attribute("data-chunk") == hit["chunk_uid"]
            assert row.locator(".rank").inner_text() == str(number + 1)
            assert row.locator("dd.fused").inner_text() == str(hit["explain"]["fused_score"])
            assert row.locator("dd.score").inner_text() == str(hit["score"])
            for leg, found in hit["explain"]["legs"].items():
                cells = (
                    row.locator("table.explain tbody tr", has_text=leg).first.locator("td").all_inner_texts()
                )
                assert cells[:2] == [str(found["rank"]), str(found["score"])], leg
            # The full-text score's parts: each query term's share, as MCP's explain gives them.
            shares = hit["explain"]["terms"] or {}
            fulltext = row.locator("table.explain tbody tr", has_text="fulltext").first
            assert fulltext.locator(".part").all_inner_texts() == [f"{t} {v}" for t, v in shares.items()]
        assert "alpha=0.3" in page.locator("dl.facts").first.inner_text()
        assert page.locator("li.hit mark").count() > 0
        assert axe_violations(page) == []

        # A second configuration beside the first: the hits that moved are marked.
        page.check("#compare")
        page.click("form.playground-form button[type=submit]")
        page.wait_for_selector("#b_alpha")
        page.fill("#b_alpha", "0.9")
        page.click("form.playground-form button[type=submit]")
        page.wait_for_selector("section.results >> nth=1")
        second = page.locator("section.results").nth(1)
        marks = second.locator(".badge.move").all_inner_texts()
        assert marks and all(
            mark == "new" or mark == "same" or mark.split()[0] in ("up", "down") for mark in marks
        )
        assert "alpha=0.9" in second.inner_text()
        assert axe_violations(page) == []
        screenshot(page, "console-playground")

        # A bad value is said in words, and nothing else is run.
        page.fill("#alpha", "lots")
        page.click("form.playground-form button[type=submit]")
        assert "alpha must be a number from 0 to 1" in page.locator("[role=alert]").first.inner_text()


def test_staff_read_the_calls_just_made_over_mcp_in_the_activity_views(
    server: tuple[str, Path], embedder: Embedder, settings: Any
) -> None:
    base, data_dir = server
    settings.MNEMOSYNE_DATA_DIR = data_dir
    handbook, _, _ = ingest_fixture_docs(embedder)
    person = User.objects.create_user("ola", password=PASSWORD)
    grant(library=handbook, role=Role.READER, user=person, actor="test")
    _, token = create_token(user=person, name="desk", scopes=["read"])
    for query in ("restore the database from a dump", "qqzx nothing here"):
        post(
            base,
            rpc(
                "tools/call", {"name": "search", "arguments": {"query": query, "search_types": ["fulltext"]}}
            ),
            token,
        )
    User.objects.create_user("stan", password=PASSWORD, is_staff=True)

    with chromium() as browser:
        page = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
        page.goto(f"{base}/console/activity/")
        sign_in(page, "stan", PASSWORD)
        page.wait_for_selector("h1:has-text('Activity')")
        assert "qqzx nothing here" in page.locator("table[aria-labelledby=nothing-found]").inner_text()
        recent = page.locator("table[aria-labelledby=recent]").inner_text()
        assert "restore the database from a dump" in recent and "ola (token desk)" in recent
        assert page.locator("figure.chart rect").count() >= 1
        assert axe_violations(page) == []
        screenshot(page, "console-activity")
