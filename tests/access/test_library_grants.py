"""Library grants, table-driven: every tool, resource, prompt and completion argument by every state a
person can be in by every transport (HTTP, stdio, gRPC; the mid-session changes over SSE too), with
LIBRARY_ACCESS=grants.

Two libraries hold the same documents: Engineering, which the people below are granted in various
ways, and Personnel, which none of them (but the superuser) is. Each person has one unconfined
token allowed to read and write, so what they see is decided by their grants alone. The mid-session
states change a grant, a group or the account between two calls of one session: the change counts
from the very next call. Besides the table, nothing of Personnel may reach anyone but the
superuser: no name, no uid, no count, and an error about one of its uids worded exactly as for a
uid that does not exist.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import httpx2
import pytest
from django.contrib.auth.models import Group, User
from mcp import ClientSession, StdioServerParameters
from mcp.client.sse import sse_client
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from access import tokens as token_format
from access.library_access import Role
from access.library_grants import grant
from access.models import MCPToken
from mcp_server.transports.grpc_api import tool_service_pb2 as pb
from mcp_server.transports.grpc_api import tool_service_pb2_grpc as pb_grpc
from mnemosyne.embedding import Embedder
from mnemosyne.library.models import Chunk, Item
from tests.access.grant_table import (
    BOGUS_CHUNK,
    MCP_OPERATIONS,
    SEES,
    TOOL_OPERATIONS,
    Answer,
    GRPCCaller,
    MCPCaller,
    World,
    change,
    check_states,
    judge,
    one_session,
    play,
    same_as_a_missing_uid,
)
from tests.conftest import ingest_fixture_docs
from tests.servers import ROOT, child_env, first_choice_forgotten, grpc_server, uvicorn_server

pytestmark = pytest.mark.django_db(transaction=True)

GRANTS = {"LIBRARY_ACCESS": "grants"}


@pytest.fixture
def world(embedder: Embedder) -> World:
    engineering, eng_collection, _ = ingest_fixture_docs(
        embedder, library="Engineering", collection="manuals"
    )
    personnel, per_collection, _ = ingest_fixture_docs(embedder, library="Personnel", collection="vault")
    people = {
        name: User.objects.create(username=name)
        for name in ("nobody", "reader", "editor", "manager", "leaver", "departed", "mover")
    }
    people["boss"] = User.objects.create(username="boss", is_superuser=True, is_staff=True)
    writers, readers = Group.objects.create(name="writers"), Group.objects.create(name="readers")
    people["editor"].groups.add(writers)
    people["mover"].groups.add(readers)
    for name in ("reader", "leaver", "departed"):
        grant(library=engineering, role=Role.READER, user=people[name], actor="test")
    grant(library=engineering, role=Role.EDITOR, group=writers, actor="test")
    grant(library=engineering, role=Role.READER, group=readers, actor="test")
    grant(library=engineering, role=Role.MANAGER, user=people["manager"], actor="test")
    tokens = {name: minted_under_open(user) for name, user in people.items()}
    return World(
        engineering=engineering,
        personnel=personnel,
        eng_collection=eng_collection,
        per_collection=per_collection,
        eng_item=Item.objects.filter(collection=eng_collection).order_by("pk").first(),  # type: ignore[arg-type]
        eng_chunk=Chunk.objects.filter(library=engineering).order_by("pk").first(),  # type: ignore[arg-type]
        per_chunk=Chunk.objects.filter(library=personnel).order_by("pk").first(),  # type: ignore[arg-type]
        tokens=tokens,
    )


def minted_under_open(user: User) -> str:
    """An unconfined read-write token as `create_token` made it under the open policy, before the
    switch to grants (the servers of this module have recorded grants: create_token would now refuse
    a token giving more than its owner holds), so that grants alone decide what it reaches."""
    raw = token_format.generate_token()
    MCPToken.objects.create(
        user=user,
        name="all",
        digest=token_format.digest(raw),
        prefix=token_format.display_prefix(raw),
        scopes=["read", "write"],
    )
    return raw


# -- the servers ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def grants_http(
    django_db_setup: Any, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    data_dir = tmp_path_factory.mktemp("grants-http")
    with django_db_blocker.unblock(), uvicorn_server(data_dir, env=GRANTS, log_name="grants") as url:
        yield url


@pytest.fixture(scope="module")
def grants_grpc(
    django_db_setup: Any, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    with django_db_blocker.unblock(), grpc_server(tmp_path_factory.mktemp("grants-grpc"), GRANTS) as target:
        yield target


def test_http_answers_every_state_as_the_table_says(grants_http: str, world: World) -> None:
    def session_for(person: str) -> Callable[[str], dict[str, Answer]]:
        def play_state(state: str) -> dict[str, Answer]:
            async def scenario() -> dict[str, Answer]:
                headers = {"Authorization": f"Bearer {world.tokens[person]}"}
                statuses: list[int] = []

                async def record(response: httpx2.Response) -> None:
                    statuses.append(response.status_code)

                async with (
                    httpx2.AsyncClient(
                        headers=headers, timeout=60, event_hooks={"response": [record]}
                    ) as http,
                    streamable_http_client(f"{grants_http}/mcp/", http_client=http) as streams,
                    ClientSession(streams[0], streams[1]) as session,
                ):
                    await session.initialize()
                    caller = MCPCaller(session, world, statuses)
                    return await one_session(world, state, caller, TOOL_OPERATIONS + MCP_OPERATIONS)

            return asyncio.run(asyncio.wait_for(scenario(), timeout=300))

        return play_state

    check_states(world, session_for, TOOL_OPERATIONS + MCP_OPERATIONS)


def test_sse_counts_a_change_from_the_next_call_of_an_open_session(grants_http: str, world: World) -> None:
    """The legacy SSE transport: one long-lived session per state, the change made between its calls.
    A deactivated user's next message is answered 401, on which the SDK's SSE client ends the
    session: that is checked apart from the table."""
    lost_access = ["grant revoked mid-session", "group membership removed mid-session"]

    def session_for(person: str) -> Callable[[str], dict[str, Answer]]:
        def play_state(state: str) -> dict[str, Answer]:
            async def scenario() -> dict[str, Answer]:
                async with sse_session(grants_http, world.tokens[person]) as session:
                    return await one_session(world, state, MCPCaller(session, world), TOOL_OPERATIONS)

            return asyncio.run(asyncio.wait_for(scenario(), timeout=300))

        return play_state

    check_states(world, session_for, TOOL_OPERATIONS, lost_access)

    statuses: list[int] = []

    async def record(response: httpx2.Response) -> None:
        statuses.append(response.status_code)

    def recording_client(
        headers: dict[str, str] | None = None, timeout: Any = None, auth: Any = None
    ) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(
            headers=headers, timeout=timeout, auth=auth, event_hooks={"response": [record]}
        )

    async def deactivated() -> Answer:
        async with sse_session(grants_http, world.tokens["departed"], recording_client) as session:
            first = await MCPCaller(session, world).run("list_libraries", 0)
            await asyncio.to_thread(change, world, "departed", "deactivate")
            # The next message's answer is what is checked (the SDK's client then ends the session
            # without answering the call): wait for that answer, not for the call.
            sent = len(statuses)
            call = asyncio.ensure_future(session.call_tool("list_libraries", {}))
            try:
                for _ in range(300):
                    if len(statuses) > sent or call.done():
                        break
                    await asyncio.sleep(0.1)
            finally:
                call.cancel()
                with contextlib.suppress(BaseException):
                    await call
        return first

    with contextlib.suppress(BaseException):
        first = asyncio.run(asyncio.wait_for(deactivated(), timeout=120))
    assert judge(world, "list_libraries", first) == SEES
    assert statuses[-1] == 401, statuses  # the message after the change, refused


@contextlib.asynccontextmanager
async def sse_session(base: str, token: str, client: Any = None) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        sse_client(
            f"{base}/mcp/sse/",
            headers=headers,
            timeout=60,
            **({"httpx_client_factory": client} if client else {}),
        ) as streams,
        ClientSession(streams[0], streams[1]) as session,
    ):
        await session.initialize()
        yield session


def test_stdio_answers_every_state_as_the_table_says(shared_data_dir: Path, world: World) -> None:
    def session_for(person: str) -> Callable[[str], dict[str, Answer]]:
        def play_state(state: str) -> dict[str, Answer]:
            async def scenario() -> dict[str, Answer]:
                env = {
                    **child_env(shared_data_dir, {**GRANTS, "MNEMOSYNE_TOKEN": world.tokens[person]}),
                }
                parameters = StdioServerParameters(
                    command=sys.executable,
                    args=[str(ROOT / "manage.py"), "mcp_stdio"],
                    env=env,
                    cwd=str(ROOT),
                )
                async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
                    await session.initialize()
                    caller = MCPCaller(session, world)
                    return await one_session(world, state, caller, TOOL_OPERATIONS + MCP_OPERATIONS)

            return asyncio.run(asyncio.wait_for(scenario(), timeout=300))

        return play_state

    with first_choice_forgotten(GRANTS):
        check_states(world, session_for, TOOL_OPERATIONS + MCP_OPERATIONS)


def test_grpc_answers_every_state_as_the_table_says(grants_grpc: str, world: World) -> None:
    def session_for(person: str) -> Callable[[str], dict[str, Answer]]:
        def play_state(state: str) -> dict[str, Answer]:
            caller = GRPCCaller(grants_grpc, world.tokens[person], world)
            return play(world, state, caller, TOOL_OPERATIONS)

        return play_state

    check_states(world, session_for, TOOL_OPERATIONS)


def test_a_hidden_uid_is_answered_as_a_missing_one_on_every_transport(
    grants_http: str, grants_grpc: str, world: World
) -> None:
    async def over_http(chunk_uid: str) -> Answer:
        headers = {"Authorization": f"Bearer {world.tokens['reader']}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=60) as http,
            streamable_http_client(f"{grants_http}/mcp/", http_client=http) as streams,
            ClientSession(streams[0], streams[1]) as session,
        ):
            await session.initialize()
            result = await session.call_tool("get_chunk", {"chunk_uid": chunk_uid})
            return Answer(not result.is_error, result.content[0].text)  # type: ignore[union-attr]

    hidden, missing = (asyncio.run(over_http(uid)) for uid in (world.per_chunk.uid, BOGUS_CHUNK))
    assert not hidden.ok and same_as_a_missing_uid(world, hidden, missing), (hidden.text, missing.text)
    stub = pb_grpc.ToolServiceStub(grpc.insecure_channel(grants_grpc))
    metadata = [("authorization", f"Bearer {world.tokens['reader']}")]
    over_grpc = [
        stub.CallTool(
            pb.CallToolRequest(toolName="get_chunk", parameters={"chunk_uid": uid}), metadata=metadata
        )
        for uid in (world.per_chunk.uid, BOGUS_CHUNK)
    ]
    assert [answer.success for answer in over_grpc] == [False, False]
    assert over_grpc[0].message.replace(world.per_chunk.uid, "<uid>") == over_grpc[1].message.replace(
        BOGUS_CHUNK, "<uid>"
    )
