"""Dependencies that go away: what callers are told, and a log that says it once per outage.

When PostgreSQL restarts under load, every request fails for as long as it is down; logging each
failure with its traceback buried the one line that mattered (1,953 tracebacks in 26 s). Here
the first failure of an outage is logged as one warning line (the error's type and first line,
no traceback), further failures are counted and summarised at most once every REPEAT_SECONDS,
and the first success afterwards logs how long the outage lasted. Per process.

Callers are told which dependency is unavailable and when to try again (`message`,
RETRY_AFTER_SECONDS, sent as HTTP Retry-After where there is HTTP).
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from enum import Enum

from mnemosyne.lib.metrics import DEPENDENCY_FAILURES

logger = logging.getLogger(__name__)

# The Retry-After given to callers while a dependency is down.
RETRY_AFTER_SECONDS = 5
# An outage's ongoing failures are summarised at most this often.
REPEAT_SECONDS = 60.0


class Dependency(Enum):
    DATABASE = "the database"
    CHUNK_STORE = "the chunk store"
    GRAPH = "the concept graph"
    RERANKER = "the reranker"
    EMBEDDER = "the embedding model"


@dataclass
class _Outage:
    started: float
    failures: int = 1
    reported_at: float = 0.0
    reported_failures: int = 1


_outages: dict[Dependency, _Outage] = {}
_lock = threading.Lock()


def message(dependency: Dependency) -> str:
    return f"{dependency.value} is unavailable right now; try again in a few seconds"


def failed(dependency: Dependency, exc: BaseException) -> str:
    """Record a failure of `dependency`; the message for the caller."""
    now = time.monotonic()
    with _lock:
        outage = _outages.get(dependency)
        if outage is None:
            _outages[dependency] = _Outage(started=now, reported_at=now)
            first = True
        else:
            outage.failures += 1
            first = False
            due = now - outage.reported_at >= REPEAT_SECONDS
            if due:
                since = outage.failures - outage.reported_failures
                outage.reported_at, outage.reported_failures = now, outage.failures
    DEPENDENCY_FAILURES.labels(dependency.name.lower()).inc()
    if first:
        logger.warning("%s is unavailable: %s", dependency.value, summary(exc))
    elif due:
        logger.warning("%s is still unavailable: %d more failed requests", dependency.value, since)
    return message(dependency)


def succeeded(dependency: Dependency, began: float) -> None:
    """Record that `dependency` answered work begun at `began` (time.monotonic()); ends its outage,
    if any, with one line. Work begun before the outage started proves nothing of it: under load a
    request that read the database just before it went away can finish after the first failure."""
    if dependency not in _outages:  # the common case, without the lock
        return
    with _lock:
        outage = _outages.get(dependency)
        if outage is None or began < outage.started:
            return
        del _outages[dependency]
    if outage is not None:
        logger.warning(
            "%s is available again after %.1f s (%d failed requests)",
            dependency.value,
            time.monotonic() - outage.started,
            outage.failures,
        )


def summary(exc: BaseException) -> str:
    """The error's type and the first line of its message, cut short."""
    lines = str(exc).strip().splitlines()
    first = lines[0] if lines else ""
    return f"{type(exc).__name__}: {first[:200]}" if first else type(exc).__name__


def is_database_outage(exc: BaseException) -> bool:
    """Whether `exc` says the database cannot be reached (down, restarting, connection lost)."""
    from django.db import InterfaceError, OperationalError

    return isinstance(exc, OperationalError | InterfaceError)


class Watched:
    """A store whose every call reports to the outage log: a failure (one of `errors`) as failed,
    an answer as succeeded. Everything else about the store is as it is."""

    def __init__(
        self, inner: object, dependency: Dependency, errors: tuple[type[BaseException], ...]
    ) -> None:
        self._inner = inner
        self._dependency = dependency
        self._errors = errors

    @property
    def inner(self) -> object:
        """The store itself."""
        return self._inner

    def __getattr__(self, name: str) -> object:
        attribute = getattr(self._inner, name)
        if not callable(attribute):
            return attribute

        def watched(*args: object, **kwargs: object) -> object:
            began = time.monotonic()
            try:
                result = attribute(*args, **kwargs)
            except self._errors as exc:
                failed(self._dependency, exc)
                raise
            succeeded(self._dependency, began)
            return result

        return watched
