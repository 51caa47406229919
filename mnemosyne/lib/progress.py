"""Where a long piece of work is, in words, for whoever follows it (a queued upload's job, which an
MCP task and the console show): work deep in the pipeline says `report("embedded 128 of 812
chunks")`, and it reaches the reporter of the work it is doing, or no one. The reporter rides in a
context variable, as the cancellation token does (cancellation.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

Reporter = Callable[[str], None]

_current: ContextVar[Reporter | None] = ContextVar("mnemosyne_progress", default=None)


def listening() -> bool:
    """Whether anyone follows the current work (long work may then do it in steps to report)."""
    return _current.get() is not None


def report(text: str) -> None:
    reporter = _current.get()
    if reporter is not None:
        reporter(text)


@contextmanager
def to(reporter: Reporter) -> Iterator[None]:
    """Inside the block (and the threads that carry its context), `report` reaches `reporter`."""
    reset = _current.set(reporter)
    try:
        yield
    finally:
        _current.reset(reset)
