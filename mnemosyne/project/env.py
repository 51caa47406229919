"""Typed readers for settings taken from the environment.

Each reader fails loudly: a value that cannot be understood raises
ImproperlyConfigured naming the variable, never a silent default. A variable set to an empty (or
blank) value reads as unset, i.e. as its default: `MCP_REQUIRE_AUTH=` must not switch
authentication off.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def _raw(name: str) -> str | None:
    """The variable's value, None when unset or blank."""
    raw = os.environ.get(name)
    return None if raw is None or not raw.strip() else raw


def envstr(name: str, default: str) -> str:
    raw = _raw(name)
    return default if raw is None else raw


def envbool(name: str, default: bool) -> bool:
    raw = _raw(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be true or false, got {raw!r}")


def envint(name: str, default: int, *, minimum: int | None = None, maximum: int | None = None) -> int:
    raw = _raw(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, got {raw!r}") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ImproperlyConfigured(f"{name} must be at most {maximum}, got {value}")
    return value


def envfloat(
    name: str, default: float, *, minimum: float | None = None, maximum: float | None = None
) -> float:
    raw = _raw(name)
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a number, got {raw!r}") from None
    if (
        value != value
        or (minimum is not None and value < minimum)
        or (maximum is not None and value > maximum)
    ):
        raise ImproperlyConfigured(f"{name} must be between {minimum} and {maximum}, got {raw!r}")
    return value


def envchoice(name: str, default: str, choices: Iterable[str]) -> str:
    """One of `choices`, compared without regard to case."""
    allowed = tuple(choices)
    value = (_raw(name) or default).strip().lower()
    if value not in allowed:
        raise ImproperlyConfigured(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
    return value


def envlist(name: str, default: list[str]) -> list[str]:
    raw = _raw(name)
    if raw is None:
        return default
    return [part.strip() for part in raw.split(",") if part.strip()]


def envcounts(name: str, default: dict[str, int]) -> dict[str, int]:
    """`name=N` pairs, comma-separated (`upsert_item=30,delete_item=10`); N ≥ 0, 0 meaning none."""
    raw = _raw(name)
    if raw is None:
        return dict(default)
    counts: dict[str, int] = {}
    for part in filter(None, (piece.strip() for piece in raw.split(","))):
        key, sep, value = part.partition("=")
        if not sep or not key.strip() or not value.strip().isdigit():
            raise ImproperlyConfigured(f"{name} must be name=N pairs separated by commas, got {part!r}")
        counts[key.strip()] = int(value)
    return counts
