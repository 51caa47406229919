"""How a figure is written in the report's tables."""

from __future__ import annotations

import math


def number(value: float, digits: int = 1) -> str:
    return "—" if math.isnan(value) else f"{value:,.{digits}f}"


def mib(value: float) -> str:
    return "—" if math.isnan(value) else f"{value / 2**20:,.0f} MiB"


def verdict(met: bool) -> str:
    return "met" if met else "**missed**"
