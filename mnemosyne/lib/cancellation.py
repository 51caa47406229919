"""A call's cancellation, as the worker thread doing its work sees it.

A call's blocking work runs in a thread (lib/blocking.py), which cannot be interrupted; when the
caller cancels (MCP `notifications/cancelled`, or a 2026-07-28 client closing its request), the
call's Token is cancelled instead, and the work that waits on shared resources withdraws from them:
a query waiting for the next forward pass leaves the batch (embedding/query_batches.py) rather than
being embedded for no one. The token rides in a context variable, which worker threads inherit.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar


class Cancelled(Exception):
    """The caller cancelled the call; its work stopped where it could."""

    def __init__(self) -> None:
        super().__init__("the call was cancelled")


class Token:
    """Cancelled at most once; callbacks registered before run then, those after at once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cancelled = False
        self._callbacks: list[Callable[[], None]] = []

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def cancel(self) -> None:
        with self._lock:
            if self._cancelled:
                return
            self._cancelled = True
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()

    def on_cancel(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Run `callback` when the token is cancelled (now, if it is); returns what unregisters it."""
        with self._lock:
            if not self._cancelled:
                self._callbacks.append(callback)
                return lambda: self._forget(callback)
        callback()
        return lambda: None

    def _forget(self, callback: Callable[[], None]) -> None:
        with self._lock:
            if callback in self._callbacks:
                self._callbacks.remove(callback)


_current: ContextVar[Token | None] = ContextVar("mnemosyne_cancellation", default=None)


def current() -> Token | None:
    """The token of the call this thread works for, if it can be cancelled."""
    return _current.get()


@contextmanager
def of(token: Token) -> Iterator[None]:
    """`token` is the current one inside the block (and in the threads started from it)."""
    reset = _current.set(token)
    try:
        yield
    finally:
        _current.reset(reset)


def check() -> None:
    """Raise Cancelled when the current call has been cancelled: long work asks between steps."""
    token = _current.get()
    if token is not None and token.cancelled:
        raise Cancelled()
