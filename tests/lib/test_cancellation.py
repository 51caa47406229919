"""A call's cancellation reaching the thread doing its work (cancellation.py, blocking.run_cancellable)."""

from __future__ import annotations

import threading

import anyio
import pytest

from mnemosyne.lib import blocking, cancellation


def test_cancelling_the_caller_cancels_the_token_its_thread_sees_and_waits_for_the_thread() -> None:
    started, seen, finished = threading.Event(), threading.Event(), threading.Event()

    def work() -> str:
        token = cancellation.current()
        assert token is not None
        started.set()
        token.on_cancel(seen.set)
        seen.wait(5)
        finished.set()
        return "late"

    async def scenario() -> bool:
        with anyio.CancelScope() as scope:

            async def cancel_when_started() -> None:
                await anyio.to_thread.run_sync(started.wait, 5)
                scope.cancel()

            async with anyio.create_task_group() as tasks:
                tasks.start_soon(cancel_when_started)
                await blocking.run_cancellable(work)
                pytest.fail("a cancelled call has no result")
        return scope.cancelled_caught

    assert anyio.run(scenario)
    assert seen.is_set(), "the thread was told"
    assert finished.is_set(), "the cancellation went on only once the thread was done"


def test_an_uncancelled_call_returns_its_result_and_raises_its_own_error() -> None:
    def fails() -> None:
        raise LookupError("no such thing")

    async def scenario() -> tuple[int, cancellation.Token | None]:
        answer = await blocking.run_cancellable(lambda: 6 * 7)
        with pytest.raises(LookupError, match="no such thing"):
            await blocking.run_cancellable(fails)
        return answer, cancellation.current()

    assert anyio.run(scenario) == (42, None), "the token stays with the call"


def test_a_callback_registered_after_the_cancel_runs_at_once_and_one_forgotten_never() -> None:
    token, calls = cancellation.Token(), []
    forget = token.on_cancel(lambda: calls.append("forgotten"))
    forget()
    token.cancel()
    token.cancel()
    token.on_cancel(lambda: calls.append("late"))
    assert token.cancelled and calls == ["late"]
