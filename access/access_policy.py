"""Which library access policy is in force: a decision recorded in the database, changed only by an
explicit, audited act, never by whichever process happened to start last.

- The record (AccessPolicyState) is the policy. A database that has never chosen has none and is
  under `open`, today's default.
- LIBRARY_ACCESS, when set, is a process's expectation. At a fresh database's first server start it
  is recorded as the first choice; after that a server whose LIBRARY_ACCESS disagrees with the record
  refuses to start (`require_agreement`, one line saying what is recorded and how to change it), and
  other commands (`migrate`, `grant`, …) leave the record alone and follow it, saying so
  (`disagreement`). Unset, a process follows the record.
- `manage.py access_policy grants|open` (policy_switch.py) is the only way to change a record: one
  transaction, an audit row, and — only when asked, only on the switch to grants — reader or
  editor grants seeded from live credentials.

Running servers read the record at most every CACHE_SECONDS, so a switch reaches them without a
restart and a request costs no query.
"""

from __future__ import annotations

import logging
import threading
import time

from django.conf import settings
from django.db import OperationalError, ProgrammingError, transaction

from access.models import AccessPolicyState, MCPAuditEvent

logger = logging.getLogger(__name__)

OPEN, GRANTS = "open", "grants"
POLICIES = (OPEN, GRANTS)
CACHE_SECONDS = 5.0

_cached: tuple[float, str | None] | None = None
_lock = threading.Lock()


class PolicyDisagreement(Exception):
    """This process's LIBRARY_ACCESS is not the policy recorded for its database."""


def expected() -> str:
    """This process's LIBRARY_ACCESS ('' when unset: it follows the record)."""
    return str(settings.LIBRARY_ACCESS or "")


def recorded() -> str | None:
    """The recorded policy (None: never chosen), read afresh."""
    state = AccessPolicyState.objects.order_by("pk").first()
    return state.policy if state is not None else None


def in_force() -> str:
    """The policy every decision of this process applies: the record, or for a database that has
    never chosen, this process's LIBRARY_ACCESS (open when unset)."""
    global _cached
    now = time.monotonic()
    cached = _cached
    if cached is None or now - cached[0] >= CACHE_SECONDS:
        with _lock:
            cached = (now, recorded())
            _cached = cached
    return cached[1] or expected() or OPEN


def forget() -> None:
    """Read the record afresh at the next decision (after a switch in this process; tests)."""
    global _cached
    _cached = None


def disagreement() -> str | None:
    """One line when this process's LIBRARY_ACCESS differs from the record, else None."""
    policy, wanted = recorded(), expected()
    if policy is None or not wanted or wanted == policy:
        return None
    return (
        f"LIBRARY_ACCESS={wanted} here, but this database's recorded access policy is {policy}: "
        f"unset LIBRARY_ACCESS or set it to {policy}, or change the policy with "
        f"`manage.py access_policy {wanted}`"
    )


def require_agreement(door: str) -> None:
    """At a server's start: refuse (PolicyDisagreement, one line) when LIBRARY_ACCESS disagrees with
    the record; on a database that has never chosen, record an explicit LIBRARY_ACCESS as its first
    choice (audited), so a later process with another setting cannot serve beside it.

    A database not migrated yet, or not reachable, has no record to read: the server starts, and
    every decision still reads the record (in_force) once there is one."""
    try:
        _require_agreement(door)
    except (ProgrammingError, OperationalError) as exc:
        logger.warning(
            "%s: the recorded access policy could not be read at start (%s)", door, exc.__class__.__name__
        )


def _require_agreement(door: str) -> None:
    said = disagreement()
    if said is not None:
        raise PolicyDisagreement(f"{door} not started: {said}")
    wanted = expected()
    if wanted and recorded() is None:
        with transaction.atomic():
            if AccessPolicyState.objects.select_for_update().exists():
                pass  # another process recorded it first: checked again below
            else:
                AccessPolicyState.objects.create(policy=wanted, changed_by=door)
                MCPAuditEvent.objects.create(
                    kind=MCPAuditEvent.Kind.POLICY_SWITCHED,
                    actor=door[:150],
                    detail={"from": None, "to": wanted, "granted": [], "how": "first choice"},
                )
        forget()
        said = disagreement()
        if said is not None:
            raise PolicyDisagreement(f"{door} not started: {said}")
