"""The one tool-call path: every transport (MCP over HTTP or stdio, gRPC) runs a tool through `execute`.

A call arrives decided (access/decision.py: the tool exists, the caller may call it, its uids lie in
the caller's libraries, it was counted against the rate limits). Then, in order: the arguments
validated strictly against the tool's model, errors naming the argument; inside the caller's
library boundary an approval required when the tool needs one, a signed request's nonce checked,
the handler run, its result rendered and, for a token that asks, signed.
Every call is timed and counted, every write-tool call leaves an audit row, and library, storage and
graph failures become tool errors whose message is fit for the caller. Call it on a worker thread
through `blocking` (which keeps the database connection fresh).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from django.db import DatabaseError
from mcp.types import ImageContent
from pydantic import ValidationError

from access import call_checks, services
from access.decision import Allowed
from access.refusals import clip
from mcp_server import cursors
from mcp_server.metrics import TOOL_DURATION, TOOL_INVOCATIONS
from mcp_server.tools.spec import ArgumentError, ToolSpec
from mnemosyne.embedding import EmbeddingError
from mnemosyne.graph import GraphError
from mnemosyne.lib import cancellation, outages
from mnemosyne.lib.outages import Dependency
from mnemosyne.library import query_log
from mnemosyne.library.errors import LibraryError
from mnemosyne.library.selectors import library_boundary
from mnemosyne.storage import StorageError

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ToolCall:
    # The decision that let this call through (access/decision.py), and the tool it is for.
    allowed: Allowed
    spec: ToolSpec
    # As sent (signed results are computed over these).
    arguments: Mapping[str, Any]
    approval_id: str | None = None
    nonce: str | None = None
    timestamp: str | None = None


@dataclass(frozen=True)
class ToolAnswer:
    text: str
    structured: dict[str, Any] | None
    attachments: list[ImageContent] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    is_error: bool = False


class InvalidToolArguments(Exception):
    """Arguments the tool refuses; the message names each argument at fault."""


def execute(call: ToolCall) -> ToolAnswer:
    """Run one decided tool call; raises InvalidToolArguments, else answers."""
    started = time.perf_counter()
    spec = call.spec
    if call.allowed.spec is not spec:
        raise RuntimeError(f"a call of {spec.name} decided for another tool")
    principal = call.allowed.principal
    outcome = "error"
    answer: ToolAnswer | None = None
    refused = ""
    try:
        answer = _run(spec, call, started)
        outcome = "error" if answer.is_error else "ok"
        return answer
    except InvalidToolArguments as exc:
        refused = str(exc)
        raise
    finally:
        elapsed = time.perf_counter() - started
        _keep(call, answer, refused, elapsed)
        TOOL_INVOCATIONS.labels(tool=spec.name, status=outcome).inc()
        TOOL_DURATION.labels(tool=spec.name).observe(elapsed)
        # One line per call: which tool, which kind of caller, how it went; never the arguments.
        logger.info(
            "tool %s: %s in %.1f ms (%s over %s)",
            spec.name,
            outcome,
            elapsed * 1000,
            principal.kind.value,
            call.allowed.transport,
            extra={
                "tool": spec.name,
                "outcome": outcome,
                "ms": round(elapsed * 1000, 1),
                "caller": principal.kind.value,
                "transport": call.allowed.transport,
            },
        )
        if spec.writes:
            _audit(call, spec, outcome)


def _keep(call: ToolCall, answer: ToolAnswer | None, refused: str, seconds: float) -> None:
    """The call into the query log; whatever goes wrong there is logged and never fails the call."""
    try:
        query_log.record(logged_call(call, answer, refused, seconds))
    except Exception:
        logger.exception("tool %s: the call could not be described for the query log", call.spec.name)


def logged_call(call: ToolCall, answer: ToolAnswer | None, refused: str, seconds: float) -> query_log.Call:
    """The call as the query log keeps it: a search's query, hits and best score; the library it
    named, or else its best hit's."""
    principal = call.allowed.principal
    arguments = call.arguments
    results = (answer.structured or {}).get("results") if answer is not None and not answer.is_error else None
    results = results if isinstance(results, list) else None
    library = arguments.get("library_uid")
    if not isinstance(library, str) and results:
        library = (results[0].get("library") or {}).get("uid")
    caller = (
        principal.actor if principal.token is None else f"{principal.actor} (token {principal.token.name})"
    )
    if refused:
        outcome, reason = "invalid", refused
    elif answer is None:
        outcome, reason = "error", "internal error"
    else:
        outcome, reason = ("error", answer.text) if answer.is_error else ("ok", "")
    query = arguments.get("query")
    return query_log.Call(
        tool=call.spec.name,
        transport=call.allowed.transport,
        caller=caller,
        library_uid=library if isinstance(library, str) else None,
        query=query if isinstance(query, str) else "",
        hits=None if results is None else len(results),
        top_score=float(results[0]["score"]) if results else None,
        ms=seconds * 1000,
        outcome=outcome,
        reason=reason,
    )


def _run(spec: ToolSpec, call: ToolCall, started: float) -> ToolAnswer:
    began = time.monotonic()
    arguments = validated(spec, call.arguments)
    caller = call.allowed.principal
    sent = dict(call.arguments)
    try:
        with library_boundary(caller.library_ids):
            call_checks.check_approval(spec.name, caller, arguments.model_dump(), call.approval_id)
            signing = call_checks.Signing(sent, call.nonce, call.timestamp)
            nonce, timestamp = call_checks.check_nonce(caller, signing)
            if spec.pages:
                page = cursors.page_of(spec.name, arguments.model_dump(mode="json"))
                result = spec.handler(caller, arguments, page)
            else:
                result = spec.handler(caller, arguments)
            structured = result.model_dump(mode="json")
            attachments = spec.attachments(result) if spec.attachments else []
            meta = {
                **_elapsed(started),
                **call_checks.signature(
                    caller, spec.name, signing, structured, nonce=nonce, timestamp=timestamp
                ),
            }
            answer = ToolAnswer(spec.render(result), structured, attachments, meta)
        outages.succeeded(Dependency.DATABASE, began)
        return answer
    except cursors.InvalidCursor as exc:
        raise InvalidToolArguments(f"Invalid arguments for tool {spec.name}: cursor: {exc}") from None
    except ArgumentError as exc:
        raise InvalidToolArguments(f"Invalid arguments for tool {spec.name}: {exc}") from None
    except (LibraryError, call_checks.CallFailed) as exc:
        return _failed(spec, clip(str(exc), 1000), started)
    except cancellation.Cancelled as exc:  # its answer goes to no one
        return _failed(spec, str(exc), started)
    except StorageError:  # logged once per outage by the store's watcher
        return _failed(spec, outages.message(Dependency.CHUNK_STORE), started)
    except GraphError:
        return _failed(spec, outages.message(Dependency.GRAPH), started)
    except EmbeddingError as exc:  # a remote embeddings endpoint failed; the message names it, not its key
        logger.warning("tool %s: %s", spec.name, exc)
        return _failed(spec, clip(str(exc), 1000), started)
    except DatabaseError as exc:
        if outages.is_database_outage(exc):
            return _failed(spec, outages.failed(Dependency.DATABASE, exc), started)
        logger.exception("database error in tool %s", spec.name)
        return _failed(spec, "the database refused the request; the server log has the details", started)
    except Exception:
        logger.exception("tool %s failed", spec.name)
        return _failed(spec, "internal error; the server log has the details", started)


def validated(spec: ToolSpec, arguments: Mapping[str, Any]) -> Any:
    """The arguments as the tool's model, strictly: no "no" for false, no true for 1, nothing unknown."""
    try:
        return spec.arguments.model_validate(dict(arguments))
    except ValidationError as exc:
        raise InvalidToolArguments(
            f"Invalid arguments for tool {spec.name}: {describe_validation_error(exc)}"
        ) from None


def describe_validation_error(exc: ValidationError) -> str:
    problems = []
    for error in exc.errors(include_url=False, include_input=False):
        name = clip(".".join(str(part) for part in error["loc"]), 100) or "(arguments)"
        if error["type"] == "extra_forbidden":
            problems.append(f"{name}: unknown argument")
        elif error["type"] == "missing":
            problems.append(f"{name}: required argument missing")
        else:
            problems.append(f"{name}: {clip(error['msg'])}")
    return "; ".join(problems)


def _failed(spec: ToolSpec, message: str, started: float) -> ToolAnswer:
    return ToolAnswer(
        f"Error executing tool {spec.name}: {message}", None, meta=_elapsed(started), is_error=True
    )


def _elapsed(started: float) -> dict[str, Any]:
    return {"elapsed_ms": round((time.perf_counter() - started) * 1000, 2)}


def _audit(call: ToolCall, spec: ToolSpec, outcome: str) -> None:
    try:
        services.record_write_call(
            token=call.allowed.principal.token,
            actor=call.allowed.principal.actor,
            tool=spec.name,
            outcome=outcome,
            arguments=dict(call.arguments),
        )
    except DatabaseError as exc:
        if not outages.is_database_outage(exc):
            logger.exception("could not record the audit row for %s", spec.name)
            return
        outages.failed(Dependency.DATABASE, exc)
        logger.warning("no audit row for a %s call: %s", spec.name, outages.message(Dependency.DATABASE))
    except Exception:
        logger.exception("could not record the audit row for %s", spec.name)
