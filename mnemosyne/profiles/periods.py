"""The period rules of a profile whose documents are versions over time (the filings profile):
periods a question names and whether a document covers them, by the calendar or its fiscal year;
whether it asks for the latest version; and fiscal periods written out in the index.

"Q3 2023", "2023 Q3", "the third quarter of 2023", "Q3 FY23", "FY2019", "fiscal 2019", "2019":
each is a (quarter or None, year). A quarterly report covers two readings of its quarter — the
quarter of its own fiscal year (Apple's quarter ended July 1, 2023 is its third of fiscal 2023) and
the calendar quarter most of it falls in (the second of 2023) — because people name it both ways;
an annual report covers its fiscal year; another document the year of its date. Matching on the
pair, not on the words, keeps "Q3 2023" from matching a report of Q1 2023 that mentions 2023.

Under any other profile none of this runs: a year in a question is a word like another, and names
no document. Pure.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

Period = tuple[int | None, int]  # (quarter or None, year)

_ORDINAL = {"first": 1, "second": 2, "third": 3, "fourth": 4, "1st": 1, "2nd": 2, "3rd": 3, "4th": 4}
_YEAR = r"(?:FY\s?)?'?(\d{4}|\d{2}(?!\d))"
_QUARTERS = (
    re.compile(rf"\bQ([1-4])\s*(?:of\s+)?(?:fiscal\s+(?:year\s+)?)?{_YEAR}", re.IGNORECASE),
    re.compile(rf"\b{_YEAR}\s*Q([1-4])\b", re.IGNORECASE),
    re.compile(rf"\b([1-4])Q\s*{_YEAR}", re.IGNORECASE),
    re.compile(
        rf"\b(first|second|third|fourth|1st|2nd|3rd|4th)\s+(?:fiscal\s+)?quarter\s+(?:of\s+)?"
        rf"(?:fiscal\s+(?:year\s+)?)?(?:the\s+year\s+)?{_YEAR}",
        re.IGNORECASE,
    ),
    re.compile(
        rf"\b(?:fiscal\s+(?:year\s+)?)?{_YEAR}\s+(first|second|third|fourth)\s+quarter", re.IGNORECASE
    ),
)
_YEARS = (re.compile(r"\bFY\s?'?(\d{4}|\d{2})\b", re.IGNORECASE), re.compile(r"\b((?:19|20)\d{2})\b"))
# A quarter matched by its calendar reading only: the fiscal one, the document's own, wins a tie.
CALENDAR_ONLY = 0.8
# A period matched only by its year (the question names a quarter the document does not cover).
YEAR_ONLY = 0.5


_LABEL = re.compile(r"^(?:Q([1-4])\s+)?(?:FY\s?)?(\d{4})$", re.IGNORECASE)


def parse_label(text: str) -> Period | None:
    """(quarter or None, fiscal year) of a period label: "FY2019", "Q3 FY2023", "2019"."""
    found = _LABEL.match(text.strip())
    if found is None:
        return None
    return (int(found.group(1)) if found.group(1) else None, int(found.group(2)))


def _year(text: str) -> int:
    year = int(text)
    return year if year >= 100 else (2000 + year if year < 70 else 1900 + year)


def _quarter(text: str) -> int:
    return int(text) if text.isdigit() else _ORDINAL[text.lower()]


def named_periods(question: str) -> list[Period]:
    """The periods a question names, quarters first, each once."""
    found: list[Period] = []
    taken: list[tuple[int, int]] = []
    for index, pattern in enumerate(_QUARTERS):
        for match in pattern.finditer(question):
            first, second = match.group(1), match.group(2)
            quarter, year = (second, first) if index in (1, 4) else (first, second)
            found.append((_quarter(quarter), _year(year)))
            taken.append(match.span())
    for pattern in _YEARS:
        for match in pattern.finditer(question):
            if any(start <= match.start() < end for start, end in taken):
                continue
            found.append((None, _year(match.group(1))))
            taken.append(match.span())
    return list(dict.fromkeys(found))


@dataclass(frozen=True)
class Covered:
    """The periods a document covers."""

    quarters: frozenset[tuple[int, int]]
    years: frozenset[int]
    # The calendar quarter most of a quarterly report falls in, when not its fiscal one.
    calendar: tuple[int, int] | None = None


# The kinds of document that each cover one quarter of a fiscal year.
QUARTERLY_KINDS = frozenset({"10-Q"})


def is_quarterly(doc_type: str) -> bool:
    return doc_type in QUARTERLY_KINDS


def covered(
    *, fiscal_year: int | None, fiscal_quarter: int | None, date: dt.date | None, quarterly: bool
) -> Covered:
    """A document's periods: its fiscal quarter and the calendar quarter most of it falls in (a
    quarterly report), or its fiscal year (an annual one), or its date's year (any other)."""
    quarters: set[tuple[int, int]] = set()
    years: set[int] = set()
    calendar: tuple[int, int] | None = None
    if fiscal_year is not None:
        years.add(fiscal_year)
        if fiscal_quarter:
            quarters.add((fiscal_quarter, fiscal_year))
    if date is not None:
        if quarterly or fiscal_quarter:
            middle = date - dt.timedelta(days=45)
            calendar = ((middle.month - 1) // 3 + 1, middle.year)
            years.add(middle.year)
        elif fiscal_year is None:
            years.add(date.year)
    return Covered(frozenset(quarters), frozenset(years), calendar if calendar not in quarters else None)


def match(named: list[Period], document: Covered) -> float:
    """1 when the document covers a period the question names, CALENDAR_ONLY when it is the
    calendar reading of its quarter, YEAR_ONLY when it covers only the year of a quarter named,
    else 0."""
    best = 0.0
    for quarter, year in named:
        if quarter is None:
            if year in document.years:
                return 1.0
        elif (quarter, year) in document.quarters:
            return 1.0
        elif (quarter, year) == document.calendar:
            best = max(best, CALENDAR_ONLY)
        elif year in document.years or any(year == covered_year for _, covered_year in document.quarters):
            best = max(best, YEAR_ONLY)
    return best


_LATEST = re.compile(
    r"\b(?:latest|most\s+recent|newest|most\s+current)\b"
    r"|\b(?:last|current)\s+(?:10-?[kq]|filing|report|quarter|quarterly\s+report|annual\s+report|fiscal\s+year)\b",
    re.IGNORECASE,
)
_NAMED_PERIOD = re.compile(
    r"\b(?:19|20)\d{2}\b|\bFY\s?'?\d{2,4}\b|\bQ[1-4]\b|\b[1-4]Q\b|\b(?:first|second|third|fourth)\s+quarter\b",
    re.IGNORECASE,
)


def wants_latest(question: str) -> bool:
    """The question asks for the newest version of a document and names no period of its own."""
    return bool(_LATEST.search(question)) and not _NAMED_PERIOD.search(question)


_PERIOD_WORD = re.compile(r"^(?:\d{4}|q[1-4]|fy\d{2,4}|fiscal|quarter|first|second|third|fourth|year)$")


def is_period_word(lexeme: str) -> bool:
    """Words that name a period ("2019", "q3", "fy2019", "fiscal", "quarter", "third"): a period
    is matched as a whole (named_periods), not word by word."""
    return bool(_PERIOD_WORD.match(lexeme))


_FISCAL = re.compile(r"\bFY\s?'?(\d{4}|\d{2})\b", re.IGNORECASE)
_QUARTER = re.compile(r"\b(?:Q([1-4])|([1-4])Q)\b", re.IGNORECASE)
_QUARTER_WORDS = ("first", "second", "third", "fourth")


def written_out(text: str) -> str:
    """Fiscal periods also written out, for the index and its queries alike: "FY2019" and "FY19"
    add "fiscal 2019", "Q3" adds "third quarter", so each finds the other."""

    def fiscal(match: re.Match[str]) -> str:
        year = match.group(1)
        if len(year) == 2:
            year = f"20{year}" if int(year) < 70 else f"19{year}"
        return f"{match.group(0)} fiscal {year}"

    def quarter(match: re.Match[str]) -> str:
        number = int(match.group(1) or match.group(2))
        return f"{match.group(0)} {_QUARTER_WORDS[number - 1]} quarter"

    return _QUARTER.sub(quarter, _FISCAL.sub(fiscal, text))
