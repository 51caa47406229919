"""What a document is, read from the document itself with fixed rules: title, organisation, type,
date and the period it covers.

Long reports come in many versions (a company's 10-K of every year, its four 10-Qs of a year),
whose passages look alike; what tells them apart is on the cover. The rules here read it:

- **SEC filings** (10-K, 10-Q, 8-K, 20-F, 40-F): the form from "FORM 10-K" or the report's
  kind ("ANNUAL REPORT PURSUANT TO SECTION 13…"); the registrant from the line above "(Exact name
  of registrant as specified in its charter)", or after the commission file number; its trading
  symbol from the securities table, or "under the symbol"; the period from "For the fiscal year
  ended …" or "For the quarterly period ended …"; for an 8-K the date of report. A 10-Q's quarter
  of its fiscal year is counted from the statements' columns ("Nine Months Ended <its date>" → the
  third quarter), and the fiscal year is the one that quarter's fourth ends in; a 10-K's fiscal
  year is the year it ends in, or the year before when the filing itself calls it so ("fiscal
  2020" for a year ended in January 2021).
- **Earnings releases**: "… Reports Fourth Quarter and Fiscal 2019 Results" on the first page.
- **Other documents**: a paper (an abstract and references), a manual or user guide (said in its
  title or on a line of its own on its first page); the organisation from a copyright line of its
  own ("© 2020 Acme Corp. All rights reserved."); the date printed on a line of its own on the
  first page. What a sentence says in passing ("… see the user's guide", an abstract's closing
  "Copyright © 2012 John Wiley & Sons, Ltd.") is what the text is about or who published it, not
  what the document is.

What the rules cannot read stays empty: a document whose cover has no date or organisation gets
none, never a guess. Values given by a person (`--meta`, `upsert_item`, a source, the admin) win
over what is read (identity.with_given). Pure: text in, identity out.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import replace

from mnemosyne.ingestion.documents import ParsedDocument, names_a_file
from mnemosyne.ingestion.identity import MAX_TITLE_CHARS, Identity, period_label, spoken, with_given

# Pages read for the cover's facts, and for counting a 10-Q's statement columns.
COVER_PAGES = 3
BODY_PAGES = 30
# A cover's date, and its "User's Guide", stand on a line of at most this many words.
DATE_LINE_WORDS = 8
# A copyright line of its own: at most this many words ("Copyright © 2020-2023 Acme Holdings
# International, Inc. and its subsidiaries. All rights reserved." is 13).
COPYRIGHT_LINE_WORDS = 16

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
# "© 2020 Acme Corp.", "Copyright Acme Corp", "(c) 2020 Acme Corp" — but "(c)" only before a year:
# without one it is the third item of a list ("(a) …, (b) …, (c) promoter activity"). The holder's
# name starts with a capital letter.
_COPYRIGHT = re.compile(
    r"(?:(?:©|copyright)\s*(?:©\s*)?(?:\d{4}(?:\s*[-–]\s*\d{4})?,?\s+)?|\(c\)\s*\d{4}(?:\s*[-–]\s*\d{4})?,?\s+)"
    r"((?-i:[A-Z])[\w&.,'’ -]{2,80}?)(?:\.\s|\.$|,?\s+all rights reserved|\n|$)",
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


def identify(parsed: ParsedDocument, *, given: Mapping[str, object] | None = None) -> Identity:
    """The document's identity from its own text, with what a person gave put over it."""
    cover = _pages(parsed, COVER_PAGES)
    found = _filing(parsed, cover) or _release(cover) or _other(parsed, cover)
    title = found.title or _document_title(parsed)
    found = replace(found, title=title[:MAX_TITLE_CHARS])
    return with_given(found, given or {})


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
        title += f" for the fiscal year ended {spoken(end)}" if end else ""
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
        title += f" for the quarter ended {spoken(end)}" if end else ""
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
    title += f" of {spoken(date)}" if date else ""
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
    elif _MANUAL.search(parsed.title) or any(
        _MANUAL.search(line) for line in _short_lines(first_page[:2000], DATE_LINE_WORDS)
    ):
        doc_type = "manual"
    copyright = next(
        (
            match
            for line in _short_lines(cover, COPYRIGHT_LINE_WORDS)
            if (match := _COPYRIGHT.search(line)) is not None
        ),
        None,
    )
    organisation = ""
    if copyright is not None:
        name = copyright.group(1).strip(" ,.")
        if len(name.split()) <= 8 and not re.match(r"^(?:by|the author|\d)", name, re.IGNORECASE):
            organisation = name
    return Identity(organisation=organisation, doc_type=doc_type, date=_printed_date(first_page[:3000]))


def _short_lines(text: str, words: int) -> list[str]:
    """The lines of `text` of at most `words` words: what a cover says on a line of its own."""
    return [line for line in text.splitlines() if 0 < len(line.split()) <= words]


def _page_end(parsed: ParsedDocument, page: int) -> int:
    return parsed.page_starts[page] if len(parsed.page_starts) > page else len(parsed.text)


def _printed_date(text: str) -> dt.date | None:
    """The first full date printed on the first page ("April 3, 2014", "3 April 2014") on a
    line of its own, as a cover prints it ("Published: 3 April 2014"): a date inside a sentence
    ("patients seen from 1 April 2002 to …") is what the text is about, not when it was written."""
    for line in text.splitlines():
        if len(line.split()) > DATE_LINE_WORDS:
            continue
        match = _PRINTED_DATE.search(line)
        if match is None:
            continue
        if match.group(1):
            return _date(match.group(1), match.group(2), match.group(3))
        return _date(match.group(5), match.group(4), match.group(6))
    return None


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
