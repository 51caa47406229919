"""Load shedding: the places a server process works on calls in, and the 503 for a call that got none
(mcp_server/transports/admission.py) — the rule alone, then over real HTTP against uvicorn."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest
from django.contrib.auth.models import User

from access.services import create_token
from mcp_server.transports.admission import Admission, Busy
from tests.mcp_server.clients import JSON_HEADERS, rpc
from tests.mcp_server.transports.test_http import metric
from tests.servers import uvicorn_server


def test_a_call_queues_for_a_place_and_one_that_finds_the_queue_full_is_refused_at_once() -> None:
    async def scenario() -> tuple[list[str], float, str]:
        admission = Admission(1, 1)
        order: list[str] = []
        release, held = anyio.Event(), anyio.Event()

        async def holder() -> None:
            async with admission.place():
                held.set()
                await release.wait()
                order.append("holder")

        async def queued() -> None:
            async with admission.place():
                order.append("queued")

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(holder)
            await held.wait()
            tasks.start_soon(queued)
            await anyio.wait_all_tasks_blocked()
            started = time.monotonic()
            with pytest.raises(Busy) as refused:
                async with admission.place():
                    order.append("refused")
            refused_after = time.monotonic() - started
            release.set()
        return order, refused_after, str(refused.value)

    order, refused_after, message = anyio.run(scenario)
    assert order == ["holder", "queued"], "the queued call got the place when it came free"
    assert refused_after < 0.5, "refused at once, not after a wait"
    assert message == "the server is busy: 1 calls in progress and 1 waiting; retry after 1 s"


def test_no_bound_admits_everyone_at_once() -> None:
    async def scenario() -> int:
        admission, inside = Admission(0, 0), 0
        async with admission.place(), admission.place():
            inside = 2
        return inside

    assert anyio.run(scenario) == 2


@pytest.fixture(scope="module")
def one_place_url(django_db_blocker, shared_data_dir: Path) -> Iterator[str]:
    env = {"MCP_MAX_CALLS": "1", "MCP_MAX_WAITING_CALLS": "0"}
    with django_db_blocker.unblock(), uvicorn_server(shared_data_dir, env=env, log_name="one-place") as url:
        yield url


@pytest.mark.django_db(transaction=True)
def test_over_http_calls_beyond_the_places_are_answered_503_busy_and_listings_never(
    one_place_url: str,
) -> None:
    _, token = create_token(user=User.objects.create(username="crowd"), name="c")
    headers = {**JSON_HEADERS, "Authorization": f"Bearer {token}"}
    call = rpc("tools/call", {"name": "list_libraries", "arguments": {}}, id=7)
    listing = rpc("tools/list", {}, id=8)

    async def crowd() -> tuple[list[httpx.Response], list[httpx.Response]]:
        async with httpx.AsyncClient(base_url=one_place_url, headers=headers, timeout=30) as client:
            calls = [client.post("/mcp/", json=call) for _ in range(30)]
            listings = [client.post("/mcp/", json=listing) for _ in range(5)]
            answers = await asyncio.gather(*calls, *listings)
        return list(answers[:30]), list(answers[30:])

    before = httpx.get(f"{one_place_url}/metrics").text
    calls, listings = asyncio.run(crowd())
    after = httpx.get(f"{one_place_url}/metrics").text
    statuses = [answer.status_code for answer in calls]
    assert set(statuses) <= {200, 503} and 200 in statuses and 503 in statuses, statuses
    refused = next(answer for answer in calls if answer.status_code == 503)
    assert refused.headers["retry-after"] == "1"
    error = refused.json()
    assert error["id"] == 7 and error["error"]["code"] == -32000
    assert error["error"]["message"].startswith("the server is busy")
    assert "Traceback" not in refused.text
    assert [answer.status_code for answer in listings] == [200] * 5, "listings take no place"
    shed = metric(after, "mcp_calls_shed_total") - metric(before, "mcp_calls_shed_total")
    assert shed == statuses.count(503)
    # Afterwards every place is free again: a lone call is answered.
    alone = httpx.post(f"{one_place_url}/mcp/", json=call, headers=headers, timeout=30)
    assert alone.status_code == 200 and "result" in alone.json()
