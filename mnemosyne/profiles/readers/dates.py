"""Dates as documents print them: "April 3, 2014", "3 April 2014", "Apr. 3, 2014"."""

from __future__ import annotations

import datetime as dt
import re

MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?"
    r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
DATE = rf"({MONTH})\.?\s+(\d{{1,2}}),?\s+(\d{{4}})"
PRINTED_DATE = re.compile(rf"\b{DATE}\b|\b(\d{{1,2}})\s+({MONTH})\.?\s+(\d{{4}})\b", re.IGNORECASE)


def date_of(month: str, day: str, year: str) -> dt.date | None:
    try:
        return dt.date(int(year), MONTHS[month.lower().rstrip(".")], int(day))
    except (KeyError, ValueError):
        return None


def printed(match: re.Match[str]) -> dt.date | None:
    """The date a PRINTED_DATE match reads."""
    if match.group(1):
        return date_of(match.group(1), match.group(2), match.group(3))
    return date_of(match.group(5), match.group(4), match.group(6))
