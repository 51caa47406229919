"""Checks a decided tool call passes before its handler runs: an approval when the tool needs one,
and, for a signed request, a fresh and unused nonce; and the signature of its result."""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from access import services, tokens
from access.credentials import AuthFailure
from access.metrics import AUTH_FAILURES
from access.principal import Principal


class CallFailed(Exception):
    """A call refused before it ran (approval, nonce): a tool error with this message."""


@dataclass(frozen=True)
class Signing:
    """What a signed result needs from the request: the arguments as sent, nonce and timestamp."""

    arguments: dict[str, Any]
    nonce: str | None = None
    timestamp: str | None = None


def check_approval(tool: str, caller: Principal, arguments: dict[str, Any], approval_id: str | None) -> None:
    """A tool in MCP_APPROVAL_REQUIRED_TOOLS runs only on an approved request for this very call, once.

    The approval belongs to the caller who asked: the same token, or the same JWT subject.
    """
    if tool not in settings.MCP_APPROVAL_REQUIRED_TOOLS:
        return
    if approval_id and services.use_approval(
        uid=approval_id, token=caller.token, subject=caller.subject, tool=tool, arguments=arguments
    ):
        return
    AUTH_FAILURES.labels(reason=AuthFailure.APPROVAL_PENDING.value).inc()
    if approval_id:
        raise CallFailed(
            f"approval {approval_id[:100]!r} is not an approved, unused approval of this call "
            "(same token, tool and arguments); call without it to ask again"
        )
    request = services.request_approval(
        token=caller.token, subject=caller.subject, tool=tool, arguments=arguments
    )
    raise CallFailed(
        f"{tool} needs an administrator's approval: request {request.uid} is pending. Once it is "
        f"approved, call again with the same arguments and the HTTP header Mcp-Approval-Id: "
        f"{request.uid} (it works once)."
    )


def check_nonce(caller: Principal, signing: Signing) -> tuple[str, int]:
    """The nonce and timestamp a signed result carries: the request's (checked), else fresh ones."""
    now = int(time.time())
    token = caller.token
    if token is None or not token.sign_results or not signing.nonce:
        return secrets.token_hex(16), now
    try:
        timestamp = int(signing.timestamp or "")
    except ValueError:
        raise CallFailed(
            "Mcp-Request-Timestamp must be Unix seconds when Mcp-Request-Nonce is sent"
        ) from None
    if not tokens.timestamp_is_fresh(timestamp, now):
        raise CallFailed("the request timestamp is more than five minutes off the server's clock")
    if len(signing.nonce) > 128 or not services.remember_nonce(token=token, nonce=signing.nonce):
        raise CallFailed("this nonce was already used in the last five minutes (or is over 128 characters)")
    return signing.nonce, timestamp


def signature(
    caller: Principal, tool: str, signing: Signing, result: dict[str, Any], *, nonce: str, timestamp: int
) -> dict[str, Any]:
    """The `_meta` of a result: its signature when the caller's token signs results, else nothing."""
    token = caller.token
    if token is None or not token.sign_results:
        return {}
    block = tokens.signature_block(
        key=token.digest,
        tool=tool,
        arguments=signing.arguments,
        result=result,
        nonce=nonce,
        timestamp=timestamp,
    )
    return {tokens.SIGNATURE_META_KEY: block}
