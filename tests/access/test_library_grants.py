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
import json
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
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
from mcp.shared.exceptions import MCPError
from mcp.types import PromptReference

from access import tokens as token_format
from access.library_access import Role
from access.library_grants import grant, revoke
from access.models import MCPToken
from mcp_server.transports.grpc_api import tool_service_pb2 as pb
from mcp_server.transports.grpc_api import tool_service_pb2_grpc as pb_grpc
from mnemosyne.embedding import Embedder
from mnemosyne.library.models import Chunk, Collection, Item, Library
from tests.conftest import ingest_fixture_docs
from tests.servers import ROOT, child_env, first_choice_forgotten, grpc_server, uvicorn_server

pytestmark = pytest.mark.django_db(transaction=True)

GRANTS = {"LIBRARY_ACCESS": "grants"}
QUERY = "restore the database from a backup"
BOGUS_CHUNK = "chk_doesnotexist000000"

# What each operation shows: SEES (something of Engineering), NONE (an empty answer), NOT_FOUND (as
# for a uid that does not exist), NOT_EDITOR (may read, may not change), WROTE, REFUSED (no caller).
SEES, NONE, NOT_FOUND, NOT_EDITOR, WROTE, REFUSED = (
    "sees",
    "none",
    "not found",
    "not editor",
    "wrote",
    "refused",
)

# The operations: tools on every transport; resources, prompts and completions over MCP only.
TOOL_OPERATIONS = [
    "list_libraries",
    "list_collections",
    "list_items",
    "search",
    "search in Engineering",
    "get_chunk in Engineering",
    "get_chunk in Personnel",
    "list_topics",
    "list_concepts",
    "get_collection_config",
    "get_ingestion_status",
    "upsert_item in Engineering",
    "delete_item in Engineering",
    "upsert_item in Personnel",
]
MCP_OPERATIONS = [
    "resources/list",
    "resources/read Engineering",
    "resources/read Personnel",
    "prompts/get cite-sources Engineering",
    "completion/complete library",
]

NO_ACCESS = {
    "list_libraries": NONE,
    "list_collections": NONE,
    "list_items": NONE,
    "search": NONE,
    "search in Engineering": NOT_FOUND,
    "get_chunk in Engineering": NOT_FOUND,
    "get_chunk in Personnel": NOT_FOUND,
    "list_topics": NONE,
    "list_concepts": NONE,
    "get_collection_config": NONE,
    "get_ingestion_status": NONE,
    "upsert_item in Engineering": NOT_FOUND,
    "delete_item in Engineering": NOT_FOUND,
    "upsert_item in Personnel": NOT_FOUND,
    "resources/list": NONE,
    "resources/read Engineering": NOT_FOUND,
    "resources/read Personnel": NOT_FOUND,
    "prompts/get cite-sources Engineering": NOT_FOUND,
    "completion/complete library": NONE,
}
READER = {
    **{operation: SEES for operation in NO_ACCESS},
    "get_chunk in Personnel": NOT_FOUND,
    "upsert_item in Engineering": NOT_EDITOR,
    "delete_item in Engineering": NOT_EDITOR,
    "upsert_item in Personnel": NOT_FOUND,
    "resources/read Personnel": NOT_FOUND,
}
EDITOR = {**READER, "upsert_item in Engineering": WROTE, "delete_item in Engineering": WROTE}
SUPERUSER = {**EDITOR, "get_chunk in Personnel": SEES, "upsert_item in Personnel": WROTE}
SUPERUSER["resources/read Personnel"] = SEES

# state → (the person, what changes mid-session or None, the table after it)
STATES: dict[str, tuple[str, str | None, dict[str, str]]] = {
    "no grant": ("nobody", None, NO_ACCESS),
    "reader": ("reader", None, READER),
    "editor (through a group)": ("editor", None, EDITOR),
    "manager": ("manager", None, EDITOR),
    "superuser": ("boss", None, SUPERUSER),
    "grant revoked mid-session": ("leaver", "revoke", NO_ACCESS),
    "user deactivated mid-session": ("departed", "deactivate", {op: REFUSED for op in NO_ACCESS}),
    "group membership removed mid-session": ("mover", "leave group", NO_ACCESS),
}


@dataclass
class World:
    engineering: Library
    personnel: Library
    eng_collection: Collection
    per_collection: Collection
    eng_item: Item
    eng_chunk: Chunk
    per_chunk: Chunk
    tokens: dict[str, str]

    def secrets(self) -> list[str]:
        """What must never reach anyone but the superuser."""
        hidden = [self.personnel.name, self.personnel.uid, self.per_collection.name, self.per_collection.uid]
        hidden += list(Item.objects.filter(collection=self.per_collection).values_list("uid", flat=True))
        hidden += list(Chunk.objects.filter(library=self.personnel).values_list("uid", flat=True)[:200])
        return hidden


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


def change(world: World, person: str, what: str) -> None:
    user = User.objects.get(username=person)
    if what == "revoke":
        revoke(library=world.engineering, user=user, actor="test")
    elif what == "deactivate":
        User.objects.filter(pk=user.pk).update(is_active=False)
    else:
        user.groups.remove(Group.objects.get(name="readers"))


def tool_arguments(world: World, operation: str, serial: int) -> tuple[str, dict[str, Any]]:
    upsert = {"title": f"Planted {serial}", "text": f"# Planted {serial}\n\nA note."}
    calls: dict[str, tuple[str, dict[str, Any]]] = {
        "list_libraries": ("list_libraries", {}),
        "list_collections": ("list_collections", {}),
        "list_items": ("list_items", {"limit": 1000}),
        "search": ("search", {"query": QUERY, "limit": 20}),
        "search in Engineering": ("search", {"query": QUERY, "library_uid": world.engineering.uid}),
        "get_chunk in Engineering": ("get_chunk", {"chunk_uid": world.eng_chunk.uid}),
        "get_chunk in Personnel": ("get_chunk", {"chunk_uid": world.per_chunk.uid}),
        "list_topics": ("list_topics", {}),
        "list_concepts": ("list_concepts", {}),
        "get_collection_config": ("get_collection_config", {}),
        "get_ingestion_status": ("get_ingestion_status", {"status": "complete"}),
        "upsert_item in Engineering": ("upsert_item", {"collection_uid": world.eng_collection.uid, **upsert}),
        "delete_item in Engineering": ("delete_item", {"item_uid": world.eng_item.uid, "dry_run": True}),
        "upsert_item in Personnel": ("upsert_item", {"collection_uid": world.per_collection.uid, **upsert}),
    }
    return calls[operation]


@dataclass
class Answer:
    ok: bool
    text: str
    data: Any = None
    refused: bool = False


def judge(world: World, operation: str, answer: Answer) -> str:
    """What an answer shows, in the words of the table."""
    if answer.refused:
        return REFUSED
    text = answer.text
    if not answer.ok:
        if "but not change it" in text:
            return NOT_EDITOR
        if "no library" in text or "no collection" in text or "no item" in text or "no chunk" in text:
            return NOT_FOUND
        return f"error: {text[:200]}"
    if operation.startswith(("upsert_item", "delete_item")):
        return WROTE
    eng = world.engineering
    markers = [eng.uid, eng.name, world.eng_collection.uid, world.eng_chunk.uid]
    if operation.endswith("Personnel"):
        markers = [world.personnel.uid, world.personnel.name, world.per_chunk.uid]
    if operation == "get_ingestion_status":
        counts = (answer.data or {}).get("counts") or {}
        return SEES if any(counts.values()) else NONE
    if operation in ("list_topics", "list_concepts"):
        listed = (answer.data or {}).get("topics") or (answer.data or {}).get("concepts")
        return SEES if listed else NONE
    if operation == "list_items":
        return SEES if (answer.data or {}).get("total") else NONE
    if operation == "search":
        return SEES if (answer.data or {}).get("results") else NONE
    return SEES if any(marker in text for marker in markers) else NONE


# -- transports: each runs one operation for one session and says what came back --------------


class MCPCaller:
    """An MCP session of the official Python SDK client (over streamable HTTP or stdio)."""

    def __init__(self, session: ClientSession, world: World, statuses: list[int] | None = None) -> None:
        # Over HTTP, the status of each response (the SDK client reports a 401 only as an error).
        self.session, self.world, self.statuses = session, world, statuses

    async def run(self, operation: str, serial: int) -> Answer:
        try:
            return await self._run(operation, serial)
        except MCPError as exc:
            text = str(exc)
            if self.statuses is not None:
                refused = bool(self.statuses) and self.statuses[-1] == 401
            else:  # stdio: the refusal's own words
                refused = "bearer token" in text
            return Answer(False, text, refused=refused)

    async def _run(self, operation: str, serial: int) -> Answer:
        world, session = self.world, self.session
        if operation in TOOL_OPERATIONS:
            name, arguments = tool_arguments(world, operation, serial)
            result = await session.call_tool(name, arguments)
            text = " ".join(getattr(block, "text", "") for block in result.content)
            text += json.dumps(result.structured_content or {})
            return Answer(not result.is_error, text, result.structured_content)
        if operation == "resources/list":
            listed = await session.list_resources()
            return Answer(True, json.dumps([r.model_dump(mode="json") for r in listed.resources]))
        if operation.startswith("resources/read"):
            library = world.engineering if operation.endswith("Engineering") else world.personnel
            read = await session.read_resource(f"mnemosyne://library/{library.uid}")
            return Answer(True, json.dumps([c.model_dump(mode="json") for c in read.contents]))
        if operation.startswith("prompts/get"):
            prompt = await session.get_prompt("cite-sources", {"question": QUERY, "library": "Engineering"})
            return Answer(True, json.dumps(prompt.model_dump(mode="json")))
        completed = await session.complete(
            PromptReference(type="ref/prompt", name="cite-sources"), {"name": "library", "value": ""}
        )
        values = completed.completion.values
        return Answer(True, json.dumps(values), values)


class GRPCCaller:
    def __init__(self, target: str, token: str, world: World) -> None:
        self.stub = pb_grpc.ToolServiceStub(grpc.insecure_channel(target))
        self.token, self.world = token, world

    async def run(self, operation: str, serial: int) -> Answer:
        return await asyncio.to_thread(self._run, operation, serial)

    def _run(self, operation: str, serial: int) -> Answer:
        name, arguments = tool_arguments(self.world, operation, serial)
        parameters = {
            key: value if isinstance(value, str) else json.dumps(value) for key, value in arguments.items()
        }
        request = pb.CallToolRequest(toolName=name, parameters=parameters)
        try:
            answer = self.stub.CallTool(
                request, metadata=[("authorization", f"Bearer {self.token}")], timeout=60
            )
        except grpc.RpcError as exc:
            refused = exc.code() == grpc.StatusCode.UNAUTHENTICATED
            return Answer(False, str(exc.details()), refused=refused)
        data = json.loads(answer.output) if answer.output else None
        return Answer(answer.success, answer.message + answer.output, data)


def play(world: World, state: str, caller: Any, operations: list[str]) -> dict[str, Answer]:
    return asyncio.run(asyncio.wait_for(_scenario(world, state, caller, operations), timeout=300))


def mismatches(world: World, state: str, answers: dict[str, Answer], operations: list[str]) -> list[str]:
    _, _, table = STATES[state]
    wrong = []
    for operation in operations:
        seen = judge(world, operation, answers[operation])
        if seen != table[operation]:
            wrong.append(f"{state} / {operation}: expected {table[operation]}, got {seen}")
    if state != "superuser":
        for operation, answer in answers.items():
            text = answer.text
            if operation.endswith("Personnel"):  # the error quotes the uid that was asked for
                for asked in (world.per_chunk.uid, world.per_collection.uid, world.personnel.uid):
                    text = text.replace(asked, "<asked>")
            leaked = [secret for secret in world.secrets() if secret and secret in text]
            if leaked:
                wrong.append(f"{state} / {operation}: leaks {leaked[:3]}")
    return wrong


def same_as_a_missing_uid(world: World, hidden: Answer, missing: Answer) -> bool:
    return hidden.text.replace(world.per_chunk.uid, "<uid>") == missing.text.replace(BOGUS_CHUNK, "<uid>")


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


def check_states(
    world: World, session_for: Callable[[str], Any], operations: list[str], states: list[str] | None = None
) -> None:
    wrong: list[str] = []
    for state in states or list(STATES):
        person = STATES[state][0]
        answers = session_for(person)(state)
        first = judge(world, "list_libraries", answers["(before the change)"])
        if STATES[state][1] is not None and first != SEES:
            wrong.append(f"{state}: before the change expected {SEES}, got {first}")
        wrong += mismatches(world, state, answers, operations)
    assert not wrong, "\n".join(wrong)


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
                    return await _scenario(world, state, caller, TOOL_OPERATIONS + MCP_OPERATIONS)

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
                    return await _scenario(world, state, MCPCaller(session, world), TOOL_OPERATIONS)

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
                    return await _scenario(world, state, caller, TOOL_OPERATIONS + MCP_OPERATIONS)

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


async def _scenario(world: World, state: str, caller: Any, operations: list[str]) -> dict[str, Answer]:
    """One session of the state: a first call, the mid-session change (if any), then every operation."""
    person, what, _ = STATES[state]
    answers = {"(before the change)": await caller.run("list_libraries", 0)}
    if what is not None:
        await asyncio.to_thread(change, world, person, what)
    for serial, operation in enumerate(operations, start=1):
        answers[operation] = await caller.run(operation, serial)
    return answers
