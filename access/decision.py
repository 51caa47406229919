"""The one place that decides whether a request may go ahead.

Every MCP transport (HTTP, stdio, gRPC) calls `decide` — or, holding a caller already,
`check_call` — once per request, and maps a Refusal to its own answer (refusals.py). A door that
calls no tool asks what it does instead: `may_read` and `may_change` these libraries (the console's
pages, uploads and deletions), with that door's own limits. For one tool call, in order:

1. a client address over its limit of failed authentications is refused before its credential is
   looked at, and each bad credential it sends counts (throttles.py);
2. the caller is identified (identify.py) with what it reaches now (library_access.py);
3. a tool call: the tool must exist, the token's whitelist allow it, the caller hold the scope it
   needs ("write" for tools that write); a read of library content through resources, prompts or
   completions needs "read";
4. the call is counted against the token's per-minute limit and the tool's per-caller limit;
5. every library, collection, item or chunk uid among the arguments must lie inside what the
   caller may see (outside is answered exactly like a uid that does not exist), and for a tool
   that writes, inside what it may change.

The answer is an Allowed (the caller, for the handlers: `acting_as` / `current`) or a Refusal. The
tool call then runs through tool_calls.execute, which never decides again.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Protocol

from django.conf import settings

from access import identify, services, throttles
from access.credentials import AuthFailure
from access.metrics import AUTH_FAILURES
from access.principal import Principal
from access.refusals import READ, WRITE, Refusal
from mnemosyne.evaluation.models import EvaluationSet, Run
from mnemosyne.lib import outages
from mnemosyne.lib.outages import Dependency
from mnemosyne.library.errors import NotFound
from mnemosyne.library.models import Chunk, Collection, Item, Library, Source

# JSON-RPC methods that read library content without calling a tool.
READING_METHODS = frozenset({"resources/list", "resources/read", "completion/complete", "prompts/get"})
_BAD_CREDENTIAL = (AuthFailure.INVALID, AuthFailure.EXPIRED, AuthFailure.REVOKED)
# Refusals that are about what the request names, not about the caller: not counted as auth failures.
_NOT_AUTH = (AuthFailure.UNKNOWN_TOOL, AuthFailure.NOT_FOUND)


class Tool(Protocol):
    """What the decision needs of a tool (tools/spec.ToolSpec is one)."""

    @property
    def name(self) -> str: ...

    @property
    def writes(self) -> bool: ...


@dataclass(frozen=True)
class Asked:
    """What one request asks for, as far as access cares."""

    # tools/call: the name as sent, and the tool when one has that name (None: unknown).
    tool: str | None = None
    spec: Tool | None = None
    arguments: Mapping[str, Any] = field(default_factory=dict)
    # resources, prompts, completions: library content read without a tool.
    reads: bool = False
    # tools/list: a caller is needed only when it sends a credential (to list what it may call).
    lists_tools: bool = False

    def needs_caller(self, credential: str | None) -> bool:
        return self.tool is not None or self.reads or (self.lists_tools and credential is not None)


@dataclass(frozen=True)
class Allowed:
    """A request that may go ahead, and who makes it."""

    principal: Principal
    # "http", "sse", "stdio", "grpc" or "console": a label for metrics, logs and audit rows.
    transport: str
    spec: Tool | None = None
    # The server's address as this caller reaches it (MCP_PUBLIC_BASE_URL, else the request's own
    # scheme and Host; "" where there is no request: stdio, gRPC), for the links in answers.
    base_url: str = ""


def required_scope(spec: Tool | None) -> str:
    return WRITE if spec is not None and spec.writes else READ


def may_call(principal: Principal, spec: Tool) -> bool:
    """Whether the tool is on this caller's list at all (whitelist and scope; nothing counted)."""
    return _rights(principal, spec) is None


def check_call(principal: Principal, asked: Asked, *, transport: str) -> Allowed | Refusal:
    """Steps 3-5 for a caller already identified."""
    refusal = _check(principal, asked)
    if refusal is not None:
        return _refused(refusal)
    return Allowed(principal, transport, asked.spec)


def _check(principal: Principal, asked: Asked) -> Refusal | None:
    if asked.tool is not None:
        spec = asked.spec
        if spec is None:
            return Refusal(AuthFailure.UNKNOWN_TOOL, asked.tool)
        return (
            _rights(principal, spec)
            or _limits(principal, spec)
            or _within(principal, asked.arguments, writes=spec.writes, tool=spec.name)
        )
    if asked.reads and not principal.has_scope(READ):
        return Refusal(AuthFailure.INSUFFICIENT_SCOPE)
    return None


def may_read(principal: Principal, *, door: str, **uids: str) -> Allowed | Refusal:
    """Whether this caller may read what the uids name (library_uid, collection_uid, item_uid,
    chunk_uid), for a door that reads without calling a tool (the console's pages). A uid outside
    what the caller sees is refused as one that does not exist. Nothing is counted."""
    if not principal.has_scope(READ):
        return _refused(Refusal(AuthFailure.INSUFFICIENT_SCOPE))
    return _decided(principal, door, _within(principal, uids, writes=False))


def may_change(principal: Principal, *, door: str, **uids: str) -> Allowed | Refusal:
    """Whether this caller may change what the uids name, for a door that changes libraries without
    calling a tool (the console's uploads, deletions and re-reads): the write scope, the editor
    role in each library named, and the door's own per-minute limit of changes (throttles.py) —
    never a tool's limit, which counts tool calls."""
    if not principal.has_scope(WRITE):
        return _refused(
            Refusal(
                AuthFailure.INSUFFICIENT_SCOPE,
                scope=WRITE,
                detail="you may read these libraries but not change them",
            )
        )
    refusal = _within(principal, uids, writes=True)
    if refusal is None:
        wait = throttles.change_wait(principal, door)
        if wait is not None:
            refusal = Refusal(AuthFailure.CHANGES_RATE_LIMITED, retry_after=wait)
    return _decided(principal, door, refusal)


def _decided(principal: Principal, door: str, refusal: Refusal | None) -> Allowed | Refusal:
    return Allowed(principal, door) if refusal is None else _refused(refusal)


def _refused(refusal: Refusal) -> Refusal:
    if refusal.failure not in _NOT_AUTH:
        AUTH_FAILURES.labels(reason=refusal.failure.value).inc()
    return refusal


def _rights(principal: Principal, spec: Tool) -> Refusal | None:
    scope = required_scope(spec)
    if not principal.allows_tool(spec.name):
        return Refusal(AuthFailure.FORBIDDEN_TOOL, spec.name, scope=scope)
    if not principal.has_scope(scope):
        # Anonymous callers may only read: for anything else, the answer is "bring a token".
        failure = AuthFailure.MISSING if principal.is_anonymous else AuthFailure.INSUFFICIENT_SCOPE
        return Refusal(failure, spec.name, scope=scope)
    return None


def _limits(principal: Principal, spec: Tool) -> Refusal | None:
    """Counted in PostgreSQL, shared by every worker and host."""
    if principal.token is not None:
        wait = services.take_rate_limit_slot(principal.token)
        if wait is not None:
            return Refusal(AuthFailure.RATE_LIMITED, retry_after=wait)
    wait = throttles.tool_wait(principal, spec.name)
    if wait is not None:
        return Refusal(AuthFailure.TOOL_RATE_LIMITED, spec.name, retry_after=wait)
    return None


# Each uid argument, the kind it names and how to find its library id (one indexed query).
_UID_ARGUMENTS = (
    ("library_uid", "library", Library.objects.all(), "id"),
    ("collection_uid", "collection", Collection.objects.all(), "library_id"),
    ("item_uid", "item", Item.objects.all(), "collection__library_id"),
    ("chunk_uid", "chunk", Chunk.objects.all(), "library_id"),
    ("source_uid", "source", Source.objects.all(), "collection__library_id"),
    ("evaluation_set_uid", "evaluation set", EvaluationSet.objects.all(), "library_id"),
    ("run_id", "evaluation run", Run.objects.all(), "evaluation_set__library_id"),
)


def _within(
    principal: Principal, arguments: Mapping[str, Any], *, writes: bool, tool: str = ""
) -> Refusal | None:
    """Every uid among the arguments inside what the caller sees, and for a change inside what it
    may change."""
    confined = principal.library_ids is not None or (writes and principal.editable_ids is not None)
    if not confined:
        return None
    for argument, kind, rows, library_field in _UID_ARGUMENTS:
        uid = arguments.get(argument)
        if not isinstance(uid, str):
            continue  # absent, or refused by the tool's own validation
        library_id = rows.filter(uid=uid).values_list(library_field, flat=True).first()
        if library_id is None or not principal.sees(library_id):
            return Refusal(AuthFailure.NOT_FOUND, tool, detail=str(NotFound(kind, uid)))
        if writes and not principal.may_change(library_id):
            name = Library.objects.filter(pk=library_id).values_list("name", flat=True).first()
            return Refusal(
                AuthFailure.NOT_EDITOR,
                tool,
                scope=WRITE,
                detail=(
                    f"this caller may read library {name!r} but not change it; "
                    "ask one of its managers for the editor role"
                ),
            )
    return None


def decide(
    credential: str | None, asked: Asked, *, transport: str, address: str = ""
) -> Allowed | Refusal | None:
    """The request's caller and whether it may go ahead; None when it needs no caller (initialize,
    ping, notifications, tools/list without a credential). With MCP_REQUIRE_AUTH=false everyone is
    let in: as the token it sends, else as the local operator."""
    if not asked.needs_caller(credential):
        return None
    throttled = settings.MCP_REQUIRE_AUTH and credential and throttles.blocked(throttles.AUTH, address)
    if throttled:
        return _throttled(throttled)
    found: Principal | Refusal | None = None
    if credential or settings.MCP_REQUIRE_AUTH:
        began = time.monotonic()
        found = identify.identify(credential)
        outages.succeeded(Dependency.DATABASE, began)  # identifying the caller read it
        if credential and isinstance(found, Refusal) and found.failure in _BAD_CREDENTIAL:
            wait = throttles.failed(throttles.AUTH, address) if settings.MCP_REQUIRE_AUTH else None
            if wait is not None:
                return _throttled(wait)
    if not settings.MCP_REQUIRE_AUTH and not isinstance(found, Principal):
        found = identify.local("anonymous")
    if found is None or isinstance(found, Refusal):
        return found
    return check_call(found, asked, transport=transport)


def _throttled(wait: int) -> Refusal:
    AUTH_FAILURES.labels(reason=AuthFailure.THROTTLED.value).inc()
    return Refusal(AuthFailure.THROTTLED, retry_after=wait)


_CURRENT: ContextVar[Allowed | None] = ContextVar("mnemosyne_allowed", default=None)


@contextlib.contextmanager
def acting_as(allowed: Allowed | None) -> Iterator[None]:
    """Within the block (and the worker threads it starts), `current()` is this decision."""
    reset = _CURRENT.set(allowed)
    try:
        yield
    finally:
        _CURRENT.reset(reset)


def current() -> Allowed | None:
    return _CURRENT.get()
