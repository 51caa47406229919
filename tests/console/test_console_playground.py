"""The console's playground, in-process (Django's test client for the page, the app served
in-process for MCP): every argument of `search` as a form; each hit's rank, per-leg ranks and
scores, fused and final score exactly what MCP `search` with `return_metadata: ["explain"]` answers
the same person; two configurations compared with the moves marked; bad input refused in words.
The browser's view of it is the full tier's (test_console.py)."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlencode

import pytest
from django.contrib.auth.models import User
from django.test import Client

from access.library_access import Role
from access.library_grants import grant
from access.services import create_token
from mnemosyne.embedding import get_embedder
from mnemosyne.library.models import Library
from tests.conftest import ingest_fixture_docs
from tests.mcp_server.clients import JSON_HEADERS, modern, run
from tests.mcp_server.in_process import asgi_client

pytestmark = pytest.mark.django_db(transaction=True)

QUERY = "restore the database from a dump"


@pytest.fixture
def reader(settings: Any) -> tuple[User, Library, Library]:
    """A person granted Handbook only, under LIBRARY_ACCESS=grants; Archive exists beside it."""
    settings.LIBRARY_ACCESS = "grants"
    handbook, _, _ = ingest_fixture_docs(get_embedder())
    archive, _, _ = ingest_fixture_docs(get_embedder(), library="Archive", collection="old")
    person = User.objects.create_user("rita", password="a long test password")
    grant(library=handbook, role=Role.READER, user=person, actor="test")
    return person, handbook, archive


def page(person: User, **params: Any) -> Any:
    client = Client()
    client.force_login(person)
    return client.get(f"/console/playground/?{urlencode(params, doseq=True)}")


def over_mcp(person: User, arguments: dict[str, Any]) -> dict[str, Any]:
    _, token = create_token(user=person, name="mcp", scopes=["read"])
    body, headers = modern("tools/call", {"name": "search", "arguments": arguments}, "search")

    async def scenario() -> dict[str, Any]:
        async with asgi_client() as client:
            sent = {**JSON_HEADERS, **headers, "Authorization": f"Bearer {token}"}
            response = await client.post("/mcp/", content=json.dumps(body), headers=sent)
            return dict(response.json()["result"]["structuredContent"])

    return run(scenario)


def shown(html: str) -> list[dict[str, Any]]:
    """Each hit as the page shows it: its chunk, its leg rows, fused and final score."""
    hits = []
    for block in re.findall(r'<li class="hit" data-chunk="([^"]+)">(.*?)</li>', html, re.S):
        uid, body = block
        legs = {
            leg: (rank, score)
            for leg, rank, score, _ in re.findall(
                r'<tr><th scope="row">(\w+) <span class="muted">[^<]*</span></th>'
                r'<td class="num">([^<]+)</td><td class="num">([^<]+)</td><td class="parts">(.*?)</td></tr>',
                body,
            )
        }
        terms = re.search(r'<th scope="row">fulltext .*?<td class="parts">(.*?)</td>', body)
        assert terms
        fused = re.search(r'<dd class="fused">([^<]+)</dd>', body)
        score = re.search(r'<dd class="score">([^<]+)</dd>', body)
        assert fused and score
        parts = re.findall(r'<span class="part">(\S+) ([^<]+)</span>', terms.group(1))
        hits.append(
            {
                "chunk_uid": uid,
                "legs": legs,
                "terms": dict(parts),
                "fused": fused.group(1),
                "score": score.group(1),
            }
        )
    return hits


def test_the_playground_shows_what_mcp_search_answers_the_same_person(reader: Any) -> None:
    person, handbook, _ = reader
    response = page(person, q=QUERY, limit=5, alpha="0.3")
    assert response.status_code == 200
    html = response.content.decode()
    arguments = {"query": QUERY, "limit": 5, "alpha": 0.3, "return_metadata": ["explain", "duplicates"]}
    # The request ready to copy is the very one compared here.
    assert json.dumps({"name": "search", "arguments": arguments}, indent=2) in html.replace("&quot;", '"')
    answered = over_mcp(person, arguments)
    on_page = shown(html)
    assert [hit["chunk_uid"] for hit in on_page] == [hit["chunk_uid"] for hit in answered["results"]]
    assert {hit["library"]["uid"] for hit in answered["results"]} == {handbook.uid}  # only what she may read
    for seen, hit in zip(on_page, answered["results"], strict=True):
        explain = hit["explain"]
        assert (seen["fused"], seen["score"]) == (str(explain["fused_score"]), str(hit["score"]))
        assert seen["terms"] == {term: str(share) for term, share in (explain["terms"] or {}).items()}
        for leg, (rank, score) in seen["legs"].items():
            expected = explain["legs"].get(leg)
            assert (rank, score) == (
                (str(expected["rank"]), str(expected["score"])) if expected else ("—", "—")
            )
    # Each leg's time, and the query's words marked in the text.
    assert re.search(r"vector [\d.]+ ms, fulltext [\d.]+ ms", html)
    assert "<mark>" in html and "relative score fusion, alpha=0.3" in html


def test_two_configurations_side_by_side_mark_what_moved(reader: Any) -> None:
    person, _, _ = reader
    html = page(person, q=QUERY, limit=5, alpha="0.1", compare="1", b_alpha="0.9").content.decode()
    columns = html.split('<section class="results"')[1:]
    assert len(columns) == 2
    first, second = (shown(column) for column in columns)
    assert {hit["chunk_uid"] for hit in first} | {hit["chunk_uid"] for hit in second}
    before = {hit["chunk_uid"]: rank for rank, hit in enumerate(first, start=1)}
    marks = re.findall(r'<span class="badge move [^"]+">([^<]+)</span>', columns[1])
    assert len(marks) == len(second)
    for rank, (hit, mark) in enumerate(zip(second, marks, strict=True), start=1):
        was = before.get(hit["chunk_uid"])
        expected = (
            "new"
            if was is None
            else "same"
            if was == rank
            else f"up {was - rank}"
            if was > rank
            else f"down {rank - was}"
        )
        assert mark == expected
    assert "alpha=0.1" in columns[0] and "alpha=0.9" in columns[1]


@pytest.mark.parametrize(
    ("params", "says"),
    [
        ({"alpha": "lots"}, "alpha must be a number from 0 to 1"),
        ({"limit": "1000"}, "limit must be a whole number from 1 to 100"),
        ({"legs_sent": "1"}, "Choose at least one leg"),
        ({"collection": "col_nothing0000000000"}, "no collection"),
    ],
)
def test_bad_input_is_refused_in_words_never_a_500(reader: Any, params: dict[str, str], says: str) -> None:
    person, _, _ = reader
    response = page(person, q=QUERY, **params)
    assert response.status_code in (200, 400)
    assert says in response.content.decode()


def test_a_bad_value_the_second_column_takes_from_the_first_is_refused_in_both(reader: Any) -> None:
    person, _, _ = reader
    response = page(person, q=QUERY, alpha="lots", compare="1")
    assert response.status_code == 400
    assert response.content.decode().count("alpha must be a number from 0 to 1") == 2


def test_a_library_she_may_not_read_reads_as_missing_and_untrusted_text_stays_text(reader: Any) -> None:
    person, _, archive = reader
    html = page(person, q="<script>alert(1)</script>", library=archive.uid).content.decode()
    assert "no library" in html and archive.name not in html
    assert "<script>alert(1)</script>" not in html
