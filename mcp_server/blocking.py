"""Blocking work (the ORM, the model) run off the event loop, with Django's connection hygiene.

Django closes stale or expired connections around each request (request_started/finished); our
handlers run in worker threads outside any Django request, so every piece of blocking work a
transport starts is bracketed here, once, the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ParamSpec, TypeVar

import anyio.to_thread
from django.db import close_old_connections

P = ParamSpec("P")
T = TypeVar("T")


def bracketed(work: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """Run `work` on this thread between two connection checks (stale replaced, expired closed)."""
    close_old_connections()
    try:
        return work(*args, **kwargs)
    finally:
        close_old_connections()


async def run(work: Callable[..., T], *args: object) -> T:
    """Run `work(*args)` in a worker thread, bracketed; context variables (the caller) go with it."""
    return await anyio.to_thread.run_sync(bracketed, work, *args)
