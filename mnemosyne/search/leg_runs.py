"""A search's legs run at once: the first on the calling thread, the others in a small pool.

The first leg (the vector leg, embedding the query, when asked for) runs on the calling thread,
the others meanwhile in threads of their own, each on its own database connection and in the
caller's context (its trace span and request id carry over). Each leg is timed and counted
(LEG_SECONDS, LEG_FAILURES). A leg whose optional dependency fails — the concept graph, a remote
embeddings endpoint — is reported as not run, with why, and the others still answer.
"""

from __future__ import annotations

import contextvars
import logging
import time
from concurrent.futures import ThreadPoolExecutor

from django.db import close_old_connections

from mnemosyne.embedding import EmbeddingError
from mnemosyne.graph import GraphError
from mnemosyne.lib.metrics import LEG_FAILURES, LEG_SECONDS
from mnemosyne.lib.tracing import tracer
from mnemosyne.search import legs

logger = logging.getLogger(__name__)


def run(
    wanted: list[str], leg_query: legs.LegQuery, not_run: dict[str, str]
) -> tuple[dict[str, legs.LegResult], dict[str, float]]:
    """Each wanted leg's result and seconds, in `wanted`'s order; a leg that could not run is left
    out and says why in `not_run`."""
    pending = {
        leg: _LEG_POOL.submit(contextvars.copy_context().run, _in_thread, leg, leg_query)
        for leg in wanted[1:]
    }
    found_by_leg: dict[str, legs.LegResult] = {}
    leg_seconds: dict[str, float] = {}
    for leg in wanted:
        try:
            found_by_leg[leg], leg_seconds[leg] = (
                pending[leg].result() if leg in pending else _timed(leg, leg_query)
            )
        except GraphError as exc:
            # The graph is an optional signal: report it and go on with the other legs (the
            # graph store's watcher logs the outage once).
            not_run[leg] = f"the concept graph is unavailable ({exc})"
        except EmbeddingError as exc:
            # A remote embeddings endpoint failed: the other legs still answer.
            logger.warning("the vector leg did not run: %s", exc)
            not_run[leg] = f"the query could not be embedded: {exc}"
    return found_by_leg, leg_seconds


_LEG_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="search-leg")


def _in_thread(leg: str, query: legs.LegQuery) -> tuple[legs.LegResult, float]:
    # Pool threads keep their own database connection: bracketed as Django brackets a request,
    # so a stale one is replaced first and one past DATABASE_CONN_MAX_AGE closed after.
    close_old_connections()
    try:
        return _timed(leg, query)
    finally:
        close_old_connections()


def _timed(leg: str, query: legs.LegQuery) -> tuple[legs.LegResult, float]:
    """The leg's result and its seconds."""
    started = time.perf_counter()
    try:
        with tracer.start_as_current_span(f"mnemosyne.search.{leg}"):
            found = legs.LEGS[leg](query)
    except Exception:
        LEG_FAILURES.labels(leg).inc()
        raise
    seconds = time.perf_counter() - started
    LEG_SECONDS.labels(leg).observe(seconds)
    return found, seconds
