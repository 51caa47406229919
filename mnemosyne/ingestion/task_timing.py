"""Every background task counted and timed the same way (mnemosyne_background_tasks by outcome,
mnemosyne_background_task_seconds), under its function's name: one decorator, under @task."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from mnemosyne.lib.metrics import BACKGROUND_TASK_SECONDS, BACKGROUND_TASKS

P = ParamSpec("P")
R = TypeVar("R")


def timed(function: Callable[P, R]) -> Callable[P, R]:
    """`function` counted as ok when it returns, failed when it raises, and timed either way."""
    name = function.__name__

    @functools.wraps(function)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        started = time.perf_counter()
        outcome = "failed"
        try:
            result = function(*args, **kwargs)
            outcome = "ok"
            return result
        finally:
            BACKGROUND_TASKS.labels(name, outcome).inc()
            BACKGROUND_TASK_SECONDS.labels(name).observe(time.perf_counter() - started)

    return run
