"""Python 3.11 support for Django 6.1.

Django 6.1 declares Python >= 3.12, and the only 3.12 feature it relies on is
inspect.markcoroutinefunction (with inspect.iscoroutinefunction honouring the
mark). The machines' CPU build of torch is for 3.11, so on 3.11 we provide
both, the same way asgiref does. On 3.12+ this does nothing.
"""

from __future__ import annotations

import asyncio.coroutines
import inspect
import sys
from collections.abc import Callable
from typing import Any, TypeVar

_F = TypeVar("_F", bound=Callable[..., Any])


def install() -> None:
    if sys.version_info >= (3, 12) or hasattr(inspect, "markcoroutinefunction"):
        return
    original = inspect.iscoroutinefunction
    marker = asyncio.coroutines._is_coroutine  # type: ignore[attr-defined]

    def markcoroutinefunction(func: _F) -> _F:
        if inspect.ismethod(func):
            func = func.__func__  # type: ignore[assignment]
        func._is_coroutine = marker  # type: ignore[attr-defined]
        return func

    def iscoroutinefunction(obj: object) -> bool:
        while inspect.ismethod(obj):
            obj = obj.__func__
        return original(obj) or getattr(obj, "_is_coroutine", None) is marker

    inspect.markcoroutinefunction = markcoroutinefunction  # type: ignore[attr-defined]
    inspect.iscoroutinefunction = iscoroutinefunction  # type: ignore[assignment]
