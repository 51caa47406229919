"""The person confirms a deletion before it happens (2026-07-28's multi-round-trip input).

`delete_item` with `dry_run: false` deletes. When the client says, in the request's capabilities,
that it can ask its person (`elicitation`, form mode), the call does not delete at once: it answers
`input_required` with one form — "Delete «title» (N chunks) from a library's collection?" and a
yes/no — and the request state (sealed by the SDK, so a client can neither read nor forge it)
binds the answer to this caller and these arguments. The client asks the person and sends the
call again with the answer: yes deletes, anything else leaves the item as it was and says so.

A client without elicitation, an earlier revision, and a dry run are served as before: a
deletion remains an explicit, strictly typed request (`dry_run` false). An item the caller cannot
see is not described: the call goes on to the tool, which answers as for any unknown uid.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from mcp.server.mcpserver import Context
from mcp.types import (
    CallToolResult,
    ElicitRequest,
    ElicitRequestFormParams,
    InputRequiredResult,
    TextContent,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from access.principal import Principal
from mcp_server.tools.spec import ToolSpec
from mnemosyne.lib import blocking
from mnemosyne.library import selectors
from mnemosyne.library.errors import NotFound
from mnemosyne.library.models import Chunk

# The key of the one input request, in `inputRequests` and the answer's `inputResponses`.
KEY = "confirm_deletion"
FIELD = "delete"


def needs_confirmation(spec: ToolSpec, sent: dict[str, Any]) -> bool:
    return spec.name == "delete_item" and sent.get("dry_run") is False


def can_ask(ctx: Context) -> bool:
    """Whether this request's client can ask its person (2026-07-28, elicitation declared)."""
    if ctx.request_context.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        return False
    capabilities = ctx.client_capabilities
    return capabilities is not None and capabilities.elicitation is not None


async def gate(
    ctx: Context, caller: Principal, spec: ToolSpec, sent: dict[str, Any]
) -> InputRequiredResult | CallToolResult | None:
    """None: go on with the call. Else what to answer instead: the question, or the refusal."""
    if not needs_confirmation(spec, sent) or not can_ask(ctx):
        return None
    item_uid = sent.get("item_uid")
    described = await blocking.run(_describe, item_uid) if isinstance(item_uid, str) else None
    if described is None:
        return None
    state = _fingerprint(caller, spec, sent)
    answer = (ctx.input_responses or {}).get(KEY)
    if answer is None or ctx.request_state != state:
        form = ElicitRequestFormParams(
            message=f"Delete {described}? Its chunks and stored files are removed; this cannot be undone.",
            requested_schema={
                "type": "object",
                "properties": {
                    FIELD: {"type": "boolean", "title": "Delete it", "description": "Yes: delete the item."}
                },
                "required": [FIELD],
            },
        )
        return InputRequiredResult(input_requests={KEY: ElicitRequest(params=form)}, request_state=state)
    if _accepted(answer):
        return None
    text = f"Error executing tool {spec.name}: not deleted: the person did not confirm the deletion"
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def _describe(item_uid: str) -> str | None:
    try:
        item = selectors.get_item(item_uid)
    except NotFound:
        return None
    chunks = Chunk.objects.filter(item=item).count()
    where = f"{item.collection.library.name} › {item.collection.name}"
    return f"«{item.title}» ({chunks} chunks) from {where}"


def _accepted(answer: Any) -> bool:
    found = answer.model_dump() if hasattr(answer, "model_dump") else answer
    if not isinstance(found, dict):
        return False
    content = found.get("content") or {}
    return found.get("action") == "accept" and isinstance(content, dict) and content.get(FIELD) is True


def _fingerprint(caller: Principal, spec: ToolSpec, sent: dict[str, Any]) -> str:
    """This caller, this tool, these arguments: what a confirmation answers for."""
    raw = json.dumps([caller.caller_key, spec.name, sent], sort_keys=True, default=str)
    return hashlib.sha256(raw.encode()).hexdigest()
