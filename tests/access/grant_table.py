"""The library grants' table and how it is played: what each operation shows in each state a person
can be in (STATES), the two libraries and the people's tokens (World), one session's calls over MCP
or gRPC (MCPCaller, GRPCCaller) and what an answer shows in the table's words (judge). The tests
over every transport: tests/access/test_library_grants.py.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import grpc
from django.contrib.auth.models import Group, User
from mcp import ClientSession
from mcp.shared.exceptions import MCPError
from mcp.types import PromptReference

from access.library_grants import revoke
from mcp_server.transports.grpc_api import tool_service_pb2 as pb
from mcp_server.transports.grpc_api import tool_service_pb2_grpc as pb_grpc
from mnemosyne.library.models import Chunk, Collection, Item, Library

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
    return asyncio.run(asyncio.wait_for(one_session(world, state, caller, operations), timeout=300))


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


async def one_session(world: World, state: str, caller: Any, operations: list[str]) -> dict[str, Answer]:
    """One session of the state: a first call, the mid-session change (if any), then every operation."""
    person, what, _ = STATES[state]
    answers = {"(before the change)": await caller.run("list_libraries", 0)}
    if what is not None:
        await asyncio.to_thread(change, world, person, what)
    for serial, operation in enumerate(operations, start=1):
        answers[operation] = await caller.run(operation, serial)
    return answers
