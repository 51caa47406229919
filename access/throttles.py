"""Abuse limits beyond a token's own per-minute limit, counted in PostgreSQL (shared by every
worker and host, services.take_throttle_slot):

- **per tool** (`MCP_TOOL_RATE_LIMITS`, e.g. `upsert_item=30`): calls of one tool by one caller in
  a minute; the local operator is not limited;
- **changes through the console** (`CONSOLE_CHANGES_PER_MINUTE`): uploads, deletions and re-reads
  by one person in a minute — the console's own door, so a person's uploads never spend the
  `upsert_item` budget of their tokens, nor the other way round;
- **failed authentications per client address** (`MCP_AUTH_FAILURES_PER_MINUTE`): once an address
  is over it, every request it sends with a credential gets 429 until the minute ends — the right
  token too, so guessing is slowed however it is spread;
- **failed admin logins per client address** (`ADMIN_LOGIN_FAILURES_PER_MINUTE`): the same for
  the admin's login form (login_throttle.py).

A process remembers the addresses it saw go over their limit until their window ends, so a
blocked address costs no query; another worker learns it at the address's next failure there.
"""

from __future__ import annotations

import threading
import time

from django.conf import settings

from access import services
from access.principal import Kind, Principal

AUTH = "auth"
LOGIN = "login"

_blocked: dict[tuple[str, str], float] = {}
_lock = threading.Lock()


def tool_wait(principal: Principal, tool: str) -> int | None:
    """Count a call of `tool` by this caller; seconds to wait when it is over the tool's limit."""
    return _caller_wait(principal, f"tool:{tool}", settings.MCP_TOOL_RATE_LIMITS.get(tool))


def change_wait(principal: Principal, door: str) -> int | None:
    """Count a change made through `door` without a tool call; seconds to wait when this caller is
    over the door's limit. The console is the one such door."""
    limit = settings.CONSOLE_CHANGES_PER_MINUTE if door == "console" else 0
    return _caller_wait(principal, f"changes:{door}", limit)


def _caller_wait(principal: Principal, counted: str, limit: int | None) -> int | None:
    """One more of what `counted` names for this caller (the local operator is not limited)."""
    if not limit or principal.kind == Kind.LOCAL:
        return None
    return services.take_throttle_slot(f"{counted}:{caller_key(principal)}", limit)


def caller_key(principal: Principal) -> str:
    if principal.token is not None:
        return f"token:{principal.token.pk}"
    return principal.subject or principal.actor


def blocked(kind: str, address: str) -> int | None:
    """Seconds left while `address` is over its limit of failures of this kind, else None."""
    with _lock:
        until = _blocked.get((kind, address))
        if until is None:
            return None
        left = until - time.monotonic()
        if left <= 0:
            del _blocked[(kind, address)]
            return None
    return max(1, round(left))


def failed(kind: str, address: str) -> int | None:
    """Count a failure from `address`; seconds to wait once it is over the limit (then remembered)."""
    limit = (
        settings.MCP_AUTH_FAILURES_PER_MINUTE if kind == AUTH else settings.ADMIN_LOGIN_FAILURES_PER_MINUTE
    )
    if not limit or not address:
        return None
    wait = services.take_throttle_slot(f"{kind}:{address}", limit)
    if wait is not None:
        with _lock:
            _blocked[(kind, address)] = time.monotonic() + wait
    return wait
