"""What a document is, read from the document itself with fixed rules: title, organisation, type,
date and the period it covers.

Long reports come in many versions (a company's 10-K of every year, its four 10-Qs of a year),
whose passages look alike; what tells them apart is on the cover. The rules here read it:

- **SEC filings** (10-K, 10-Q, 8-K, 20-F, 40-F): the form from "FORM 10-K" or the report's
  kind ("ANNUAL REPORT PURSUANT TO SECTION 13…"); the registrant from the line above "(Exact name
  of registrant as specified in its charter)"; its trading symbol from the securities table; the
  period from "For the fiscal year ended …" or "For the quarterly period ended …"; for an 8-K the
  date of report. A 10-Q's quarter of its fiscal year is counted from the statements' columns
  ("Nine Months Ended" → the third quarter), and the fiscal year is the one that quarter's year
  ends in; a 10-K's fiscal year is the year it ends in, or the year before when the filing itself
  calls it so ("fiscal 2020" for a year ended in January 2021).
- **Earnings releases**: "… Reports Fourth Quarter and Fiscal 2019 Results" on the first page.
- **Other documents**: a paper (an abstract and references), a manual or user guide (said on its
  first page or in its title); the organisation from a copyright line; the date printed on the
  first page.

What the rules cannot read stays empty: a document whose cover has no date or organisation gets
none, never a guess. Values given by a person (`--meta`, `upsert_item`, a source, the admin) win
over what is read. Pure: text in, identity out.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from mnemosyne.ingestion.documents import ParsedDocument, names_a_file
from mnemosyne.library.english_words import is_word

# The keys a person may set, and the types they are read as (see parse_given).
IDENTITY_KEYS = ("title", "organisation", "doc_type", "date", "period")
# Pages read for the cover's facts, and for counting a 10-Q's statement columns.
COVER_PAGES = 3
BODY_PAGES = 30
MAX_TITLE_CHARS = 300

_MONTHS = {
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
_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?"
    r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_DATE = rf"({_MONTH})\.?\s+(\d{{1,2}}),?\s+(\d{{4}})"
_FORM = re.compile(r"\bFORM\s+(10-?K|10-?Q|8-?K|20-?F|40-?F)\b", re.IGNORECASE)
_KINDS = (
    (re.compile(r"ANNUAL REPORT PURSUANT TO SECTION 13", re.IGNORECASE), "10-K"),
    (re.compile(r"QUARTERLY REPORT PURSUANT TO SECTION 13", re.IGNORECASE), "10-Q"),
    (re.compile(r"CURRENT REPORT PURSUANT TO SECTION 13", re.IGNORECASE), "8-K"),
)
_YEAR_ENDED = re.compile(rf"for the fiscal year ended:?\s+{_DATE}", re.IGNORECASE)
_QUARTER_ENDED = re.compile(rf"for the (?:quarterly period|quarter) ended:?\s+{_DATE}", re.IGNORECASE)
_REPORT_DATE = re.compile(rf"date of report\s*\([^)]*\)\s*:?\s*{_DATE}", re.IGNORECASE)
_REGISTRANT = re.compile(r"\(\s*exact name of (?:the )?registrant", re.IGNORECASE)
_TICKER = re.compile(
    r"\b([A-Z]{1,5}(?:\.[A-Z])?)\s+(?:The\s+)?(?:Nasdaq|New York Stock Exchange|NYSE|NASDAQ)", re.UNICODE
)
_FISCAL_YEAR = re.compile(r"\bfiscal(?:\s+year)?\s+(\d{4})\b", re.IGNORECASE)
_FILE_NUMBER = re.compile(r"commission file (?:number|no\.?)\s*:?\s*[\d-]+", re.IGNORECASE)
_COMPANY = re.compile(
    r"\b(?:inc|incorporated|corp|corporation|company|co|ltd|limited|llc|plc|lp|l\.p|n\.v|s\.a|ag|se|group|holdings)\.?$",
    re.IGNORECASE,
)
_SYMBOL = re.compile(
    r"\b(?:under|trades? under|listed under) the (?:ticker |trading )?symbols?\s+[\"“']?([A-Z]{1,5})\b"
)
_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4}
_RELEASE = re.compile(
    r"\b(?:reports?|announces?|reported|posts?)\b[^.\n]{0,80}?"
    r"\b(first|second|third|fourth)[\s-]+quarter\b[^.\n]{0,40}?\b(?:fiscal\s+(?:year\s+)?)?(\d{4})\b"
    r"[^.\n]{0,40}?\bresults\b",
    re.IGNORECASE,
)
_RELEASE_YEAR = re.compile(
    r"\b(?:reports?|announces?|reported|posts?)\b[^.\n]{0,60}?\b(?:full[\s-]year|fiscal(?:\s+year)?|annual)\s+(\d{4})"
    r"[^.\n]{0,30}?\bresults\b",
    re.IGNORECASE,
)
_COPYRIGHT = re.compile(
    r"(?:©|\(c\)|copyright)\s*(?:©\s*)?(?:\d{4}(?:\s*[-–]\s*\d{4})?,?\s+)?"
    r"([A-Z][\w&.,'’ -]{2,80}?)(?:\.\s|\.$|,?\s+all rights reserved|\n|$)",
    re.IGNORECASE,
)
_PAPER = re.compile(r"^\s*abstract\b", re.IGNORECASE | re.MULTILINE)
_REFERENCES = re.compile(r"^\s*(?:references|bibliography)\s*$", re.IGNORECASE | re.MULTILINE)
_MANUAL = re.compile(
    r"\b(?:user(?:'s|’s)?\s+(?:manual|guide)|owner(?:'s|’s)?\s+manual|instruction manual"
    r"|operating instructions|quick[\s-]start guide)\b",
    re.IGNORECASE,
)
_PRINTED_DATE = re.compile(rf"\b{_DATE}\b|\b(\d{{1,2}})\s+({_MONTH})\.?\s+(\d{{4}})\b", re.IGNORECASE)
_DOC_TYPE_WORDS = {
    "10-K": "Form 10-K annual report",
    "10-Q": "Form 10-Q quarterly report",
    "8-K": "Form 8-K current report",
    "20-F": "Form 20-F annual report",
    "40-F": "Form 40-F annual report",
}
DOC_TYPES = (*_DOC_TYPE_WORDS, "earnings release", "paper", "manual")


@dataclass(frozen=True)
class Identity:
    title: str = ""
    organisation: str = ""
    ticker: str = ""
    doc_type: str = ""
    # The date the document speaks for: a filing's period end, an 8-K's date of report, a cover date.
    date: dt.date | None = None
    # "FY2019", "Q3 FY2023": the fiscal period covered, when the document says.
    period: str = ""
    fiscal_year: int | None = None
    fiscal_quarter: int | None = None
    # Keys a person set (they win over what the rules read, at every re-ingest).
    given: tuple[str, ...] = field(default_factory=tuple)

    def as_metadata(self) -> dict[str, object]:
        """What the item keeps beyond its columns: how the period reads, and what was given."""
        found: dict[str, object] = {}
        if self.ticker:
            found["ticker"] = self.ticker
        if self.fiscal_year is not None:
            found["fiscal_year"] = self.fiscal_year
        if self.fiscal_quarter is not None:
            found["fiscal_quarter"] = self.fiscal_quarter
        if self.given:
            found["given"] = list(self.given)
        return found


class InvalidIdentity(ValueError):
    """A given metadata value that cannot be used; the message says which and why."""


def parse_given(values: Mapping[str, object]) -> dict[str, object]:
    """Metadata a person gives (`--meta key=value`, upsert_item, a source), checked: known keys,
    an ISO date, a period like FY2019 or Q3 FY2023."""
    checked: dict[str, object] = {}
    for key, value in values.items():
        if key not in IDENTITY_KEYS:
            raise InvalidIdentity(f"unknown metadata key {key!r}; expected one of {', '.join(IDENTITY_KEYS)}")
        if not isinstance(value, str):
            raise InvalidIdentity(f"metadata {key} must be a string")
        text = " ".join(value.split())
        if len(text) > MAX_TITLE_CHARS:
            raise InvalidIdentity(f"metadata {key} is longer than {MAX_TITLE_CHARS} characters")
        if key == "date" and text:
            try:
                checked[key] = dt.date.fromisoformat(text)
            except ValueError as exc:
                raise InvalidIdentity(f"metadata date must be YYYY-MM-DD, got {value!r}") from exc
            continue
        if key == "period" and text:
            found = parse_period(text)
            if found is None:
                raise InvalidIdentity(
                    f"metadata period must look like FY2019, Q3 FY2023 or 2019, got {value!r}"
                )
            text = period_label(*found)
        checked[key] = text
    return checked


def given_metadata(pairs: Sequence[str]) -> dict[str, object]:
    """`KEY=VALUE` arguments (a command's --meta) as checked given values; a management command
    turns the InvalidIdentity into its one-line error."""
    values: dict[str, object] = {}
    for pair in pairs:
        key, separator, value = pair.partition("=")
        if not separator:
            raise InvalidIdentity(f"--meta {pair!r}: expected KEY=VALUE")
        values[key.strip()] = value.strip()
    return parse_given(values)


def given_as_text(given: Mapping[str, object]) -> dict[str, str]:
    """Given values as the strings parse_given reads (for a queued task's arguments, a JSON field)."""
    return {
        key: value.isoformat() if isinstance(value, dt.date) else str(value) for key, value in given.items()
    }


_PERIOD = re.compile(r"^(?:Q([1-4])\s+)?(?:FY\s?)?(\d{4})$", re.IGNORECASE)


def parse_period(text: str) -> tuple[int | None, int] | None:
    """(quarter or None, fiscal year) of a period label: "FY2019", "Q3 FY2023", "2019"."""
    match = _PERIOD.match(text.strip())
    if match is None:
        return None
    return (int(match.group(1)) if match.group(1) else None, int(match.group(2)))


def period_label(quarter: int | None, year: int | None) -> str:
    if year is None:
        return ""
    return f"Q{quarter} FY{year}" if quarter else f"FY{year}"


def identify(parsed: ParsedDocument, *, given: Mapping[str, object] | None = None) -> Identity:
    """The document's identity from its own text, with what a person gave put over it."""
    cover = _pages(parsed, COVER_PAGES)
    found = _filing(parsed, cover) or _release(cover) or _other(parsed, cover)
    title = found.title or _document_title(parsed)
    found = replace(found, title=title[:MAX_TITLE_CHARS])
    return with_given(found, given or {})


def with_given(found: Identity, given: Mapping[str, object]) -> Identity:
    """The identity read from the document, with the values a person gave in their place."""
    if not given:
        return found
    changes: dict[str, object] = {"given": tuple(key for key in IDENTITY_KEYS if key in given)}
    for key in ("title", "organisation", "doc_type", "date"):
        if key in given:
            changes[key] = given[key] or (None if key == "date" else "")
    if "period" in given:
        period = str(given["period"])
        parsed_period = parse_period(period) if period else None
        quarter, year = parsed_period if parsed_period else (None, None)
        changes |= {"period": period_label(quarter, year), "fiscal_year": year, "fiscal_quarter": quarter}
    return replace(found, **changes)  # type: ignore[arg-type]


def _pages(parsed: ParsedDocument, count: int) -> str:
    if not parsed.page_starts or len(parsed.page_starts) <= count:
        return parsed.text[:20_000] if not parsed.page_starts else parsed.text
    return parsed.text[: parsed.page_starts[count]]


def _date(month: str, day: str, year: str) -> dt.date | None:
    try:
        return dt.date(int(year), _MONTHS[month.lower().rstrip(".")], int(day))
    except (KeyError, ValueError):
        return None


def _filing(parsed: ParsedDocument, cover: str) -> Identity | None:
    form = _FORM.search(cover)
    doc_type = form.group(1).upper().replace("-", "") if form else ""
    doc_type = {"10K": "10-K", "10Q": "10-Q", "8K": "8-K", "20F": "20-F", "40F": "40-F"}.get(doc_type, "")
    if not doc_type:
        doc_type = next((kind for pattern, kind in _KINDS if pattern.search(cover)), "")
    if not doc_type:
        return None
    organisation = _registrant(cover)
    ticker_match = _TICKER.search(cover) or _SYMBOL.search(parsed.text)
    ticker = ticker_match.group(1) if ticker_match else ""
    if doc_type in ("10-K", "20-F", "40-F"):
        ended = _YEAR_ENDED.search(cover)
        end = _date(*ended.groups()) if ended else None
        year = _fiscal_year(cover + _pages(parsed, BODY_PAGES), end) if end else None
        title = f"{organisation or 'Annual report'} Form {doc_type}"
        title += f" for the fiscal year ended {_spoken(end)}" if end else ""
        return Identity(
            title=title,
            organisation=organisation,
            ticker=ticker,
            doc_type=doc_type,
            date=end,
            period=period_label(None, year),
            fiscal_year=year,
        )
    if doc_type == "10-Q":
        ended = _QUARTER_ENDED.search(cover)
        end = _date(*ended.groups()) if ended else None
        quarter = _fiscal_quarter(_pages(parsed, BODY_PAGES), end) if end else None
        year = _year_of_quarter(end, quarter) if end and quarter else None
        title = f"{organisation or 'Quarterly report'} Form 10-Q"
        title += f" for the quarter ended {_spoken(end)}" if end else ""
        return Identity(
            title=title,
            organisation=organisation,
            ticker=ticker,
            doc_type=doc_type,
            date=end,
            period=period_label(quarter, year),
            fiscal_year=year,
            fiscal_quarter=quarter,
        )
    reported = _REPORT_DATE.search(cover)
    date = _date(*reported.groups()) if reported else None
    release = _release(_pages(parsed, COVER_PAGES + 2))
    title = f"{organisation or 'Current report'} Form {doc_type}"
    title += f" of {_spoken(date)}" if date else ""
    if release is not None and release.period:
        title += f" ({release.period} results)"
    return Identity(
        title=title,
        organisation=organisation,
        ticker=ticker,
        doc_type=doc_type,
        date=date,
        period=release.period if release else "",
        fiscal_year=release.fiscal_year if release else None,
        fiscal_quarter=release.fiscal_quarter if release else None,
    )


def _registrant(cover: str) -> str:
    """The name printed just above "(Exact name of registrant as specified in its charter)", or
    else the company name printed just after the commission file number."""
    match = _REGISTRANT.search(cover)
    if match is not None:
        before = cover[: match.start()].rstrip().splitlines()
        lines = [line for line in before[-3:] if line.strip()]
        name = re.split(r"_{3,}|—{3,}", lines[-1])[-1].strip(" ,:;-") if lines else ""
        if name and len(name) <= 120 and any(char.isalpha() for char in name):
            return _readable_name(name)
    number = _FILE_NUMBER.search(cover)
    if number is not None:
        after = cover[number.end() :].lstrip().splitlines()
        name = re.split(r"_{3,}|—{3,}", after[0])[-1].strip(" ,:;-") if after else ""
        if name and len(name.split()) <= 8 and _COMPANY.search(name):
            return _readable_name(name)
    return ""


def _readable_name(name: str) -> str:
    """A name printed in capitals, in the case it is written in ("AMAZON.COM, INC." → "Amazon.com, Inc.")."""
    if name != name.upper():
        return name
    words: list[str] = []
    for word in name.split():
        lowered = word.lower()
        words.append(lowered if lowered in ("of", "and", "the", "&") and words else word.capitalize())
    return re.sub(r"\.Com\b", ".com", " ".join(words))


def _spoken(date: dt.date | None) -> str:
    return f"{date:%B} {date.day}, {date.year}" if date else ""


def _fiscal_year(text: str, end: dt.date) -> int:
    """The fiscal year a year ended on `end` is called: its end's year, or the year before when
    the filing names that one ("fiscal 2020" for a year ended January 30, 2021)."""
    counts = {end.year: 0, end.year - 1: 0}
    for match in _FISCAL_YEAR.finditer(text):
        year = int(match.group(1))
        if year in counts:
            counts[year] += 1
    if end.month <= 2 and counts[end.year - 1] > 2 * counts[end.year]:
        return end.year - 1
    return end.year


def _fiscal_quarter(text: str, end: dt.date) -> int | None:
    """Which quarter of its fiscal year a 10-Q covers, from its statements' columns: a third
    quarter's report shows the nine months to its period's end, a second quarter's six, a first
    quarter's only three."""
    month = rf"{end:%B}\.?\s+{end.day}\b|{end:%b}\.?\s+{end.day}\b"
    for months, quarter in (("nine", 3), ("six", 2), ("three", 1)):
        if re.search(rf"\b{months} months ended\W{{1,3}}(?:{month})", text, re.IGNORECASE):
            return quarter
    return None


def _year_of_quarter(end: dt.date, quarter: int) -> int:
    """The fiscal year a quarter ending on `end` belongs to: the year its fourth quarter ends in."""
    months = end.month + 3 * (4 - quarter) - (1 if end.day <= 7 else 0)
    return end.year + (months - 1) // 12


def _release(cover: str) -> Identity | None:
    quarter = _RELEASE.search(cover)
    if quarter is not None:
        number, year = _ORDINALS[quarter.group(1).lower()], int(quarter.group(2))
        return Identity(
            doc_type="earnings release",
            period=period_label(number, year),
            fiscal_year=year,
            fiscal_quarter=number,
            organisation=_announcer(cover, quarter.start()),
        )
    annual = _RELEASE_YEAR.search(cover)
    if annual is not None:
        year = int(annual.group(1))
        return Identity(
            doc_type="earnings release",
            period=period_label(None, year),
            fiscal_year=year,
            organisation=_announcer(cover, annual.start()),
        )
    return None


def _announcer(text: str, at: int) -> str:
    """The organisation that reports: the words before "Reports…" on its line."""
    line_start = text.rfind("\n", 0, at) + 1
    name = text[line_start:at].strip(" ,:;-")
    if not name or len(name) > 80 or not name[:1].isupper():
        return ""
    return _readable_name(name)


def _other(parsed: ParsedDocument, cover: str) -> Identity:
    first_page = cover if not parsed.page_starts else parsed.text[: _page_end(parsed, 1)]
    doc_type = ""
    if _PAPER.search(first_page) and _REFERENCES.search(parsed.text):
        doc_type = "paper"
    elif _MANUAL.search(parsed.title) or _MANUAL.search(first_page[:2000]):
        doc_type = "manual"
    copyright = _COPYRIGHT.search(cover)
    organisation = ""
    if copyright is not None:
        name = copyright.group(1).strip(" ,.")
        if len(name.split()) <= 8 and not re.match(r"^(?:by|the author|\d)", name, re.IGNORECASE):
            organisation = name
    return Identity(organisation=organisation, doc_type=doc_type, date=_printed_date(first_page[:3000]))


def _page_end(parsed: ParsedDocument, page: int) -> int:
    return parsed.page_starts[page] if len(parsed.page_starts) > page else len(parsed.text)


def _printed_date(text: str) -> dt.date | None:
    """The first full date printed on the first page ("April 3, 2014", "3 April 2014")."""
    match = _PRINTED_DATE.search(text)
    if match is None:
        return None
    if match.group(1):
        return _date(match.group(1), match.group(2), match.group(3))
    return _date(match.group(5), match.group(4), match.group(6))


def _document_title(parsed: ParsedDocument) -> str:
    """The parser's title, unless it names a file rather than the document: then the first
    heading of the first page, or the document's first short line."""
    title = " ".join(parsed.title.split())
    if title and not names_a_file(title):
        return title
    first_page_end = _page_end(parsed, 1) if parsed.page_starts else min(len(parsed.text), 3000)
    for heading in parsed.headings:
        if heading.offset >= first_page_end:
            break
        if sum(char.isalpha() for char in heading.title) >= 4:
            return heading.title
    for line in parsed.text[:first_page_end].splitlines():
        line = line.strip()
        if 8 <= len(line) <= 120 and not line.startswith("|") and sum(char.isalpha() for char in line) >= 4:
            return line
    return title


def document_line(identity: Identity) -> str:
    """The document's identity in a line, for the context of every chunk: title, organisation and
    symbol, kind, and period — each only when the title does not already say it."""
    parts = [identity.title] if identity.title else []
    said = identity.title.lower()
    if identity.organisation and identity.organisation.lower() not in said:
        parts.append(identity.organisation)
    if identity.ticker and identity.ticker.lower() not in said.split():
        parts.append(identity.ticker)
    kind = _DOC_TYPE_WORDS.get(identity.doc_type, identity.doc_type)
    if kind and kind.lower() not in said:
        parts.append(kind)
    if identity.fiscal_year is not None:
        period = f"fiscal year {identity.fiscal_year} (FY{identity.fiscal_year})"
        if identity.fiscal_quarter:
            ordinal = ("first", "second", "third", "fourth")[identity.fiscal_quarter - 1]
            label = f"Q{identity.fiscal_quarter} FY{identity.fiscal_year}"
            period = f"{ordinal} quarter of fiscal {identity.fiscal_year} ({label})"
        parts.append(period)
    if identity.date is not None and _spoken(identity.date).lower() not in said:
        parts.append(_spoken(identity.date))
    return " · ".join(parts)


def identity_words(identity: Identity) -> str:
    """The words a query may name the document by, beyond its title: organisation, symbol,
    kind, period and date (the item's identity_vector)."""
    # "Amazon.com, Inc." is also "Amazon com Inc": the parser reads the first as one host name.
    spelled = re.sub(r"[^\w\s&]", " ", identity.organisation)
    parts = [
        identity.organisation,
        spelled if spelled.split() != identity.organisation.split() else "",
        # A symbol that is also a word (COST, KO is not, CAT is) would match every question using
        # the word: it names the document only in capitals, which the index does not keep.
        "" if is_word(identity.ticker) else identity.ticker,
        _DOC_TYPE_WORDS.get(identity.doc_type, identity.doc_type),
    ]
    if identity.fiscal_year is not None:
        parts.append(f"fiscal {identity.fiscal_year} FY{identity.fiscal_year}")
    if identity.fiscal_quarter:
        ordinal = ("first", "second", "third", "fourth")[identity.fiscal_quarter - 1]
        parts.append(f"{ordinal} quarter Q{identity.fiscal_quarter}")
    if identity.date is not None and str(identity.date.year) not in " ".join(parts):
        # The year only: a question's "as of March 31" says nothing of which document it means.
        parts.append(str(identity.date.year))
    return " ".join(part for part in parts if part)
