"""The filings profile's readers: SEC filings (10-K, 10-Q, 8-K, 20-F, 40-F) and earnings releases,
by what their covers print.

- **SEC filings**: the form from "FORM 10-K" or the report's kind ("ANNUAL REPORT PURSUANT TO
  SECTION 13…"); the registrant from the line above "(Exact name of registrant as specified in its
  charter)", or after the commission file number; its trading symbol from the securities table, or
  "under the symbol"; the period from "For the fiscal year ended …" or "For the quarterly period
  ended …"; for an 8-K the date of report. A 10-Q's quarter of its fiscal year is counted from the
  statements' columns ("Nine Months Ended <its date>" → the third quarter), and the fiscal year is
  the one that quarter's fourth ends in; a 10-K's fiscal year is the year it ends in, or the year
  before when the filing itself calls it so ("fiscal 2020" for a year ended in January 2021).
- **Earnings releases**: "… Reports Fourth Quarter and Fiscal 2019 Results" on the first page.
"""

from __future__ import annotations

import datetime as dt
import re

from mnemosyne.profiles.identity import Identity, period_label, spoken
from mnemosyne.profiles.readers.covers import COVER_PAGES, Cover, readable_name
from mnemosyne.profiles.readers.dates import DATE, date_of

# Pages read for counting a 10-Q's statement columns and the fiscal year's name.
BODY_PAGES = 30
_FORM = re.compile(r"\bFORM\s+(10-?K|10-?Q|8-?K|20-?F|40-?F)\b", re.IGNORECASE)
_KINDS = (
    (re.compile(r"ANNUAL REPORT PURSUANT TO SECTION 13", re.IGNORECASE), "10-K"),
    (re.compile(r"QUARTERLY REPORT PURSUANT TO SECTION 13", re.IGNORECASE), "10-Q"),
    (re.compile(r"CURRENT REPORT PURSUANT TO SECTION 13", re.IGNORECASE), "8-K"),
)
_YEAR_ENDED = re.compile(rf"for the fiscal year ended:?\s+{DATE}", re.IGNORECASE)
_QUARTER_ENDED = re.compile(rf"for the (?:quarterly period|quarter) ended:?\s+{DATE}", re.IGNORECASE)
_REPORT_DATE = re.compile(rf"date of report\s*\([^)]*\)\s*:?\s*{DATE}", re.IGNORECASE)
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


def filing(document: Cover) -> Identity | None:
    """An SEC filing (10-K, 10-Q, 8-K, 20-F, 40-F) by its cover, or None."""
    cover = document.pages(COVER_PAGES)
    form = _FORM.search(cover)
    doc_type = form.group(1).upper().replace("-", "") if form else ""
    doc_type = {"10K": "10-K", "10Q": "10-Q", "8K": "8-K", "20F": "20-F", "40F": "40-F"}.get(doc_type, "")
    if not doc_type:
        doc_type = next((kind for pattern, kind in _KINDS if pattern.search(cover)), "")
    if not doc_type:
        return None
    organisation = _registrant(cover)
    ticker_match = _TICKER.search(cover) or _SYMBOL.search(document.text)
    ticker = ticker_match.group(1) if ticker_match else ""
    if doc_type in ("10-K", "20-F", "40-F"):
        ended = _YEAR_ENDED.search(cover)
        end = date_of(*ended.groups()) if ended else None
        year = _fiscal_year(cover + document.pages(BODY_PAGES), end) if end else None
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
        end = date_of(*ended.groups()) if ended else None
        quarter = _fiscal_quarter(document.pages(BODY_PAGES), end) if end else None
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
    date = date_of(*reported.groups()) if reported else None
    release = _release_in(document.pages(COVER_PAGES + 2))
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
            return readable_name(name)
    number = _FILE_NUMBER.search(cover)
    if number is not None:
        after = cover[number.end() :].lstrip().splitlines()
        name = re.split(r"_{3,}|—{3,}", after[0])[-1].strip(" ,:;-") if after else ""
        if name and len(name.split()) <= 8 and _COMPANY.search(name):
            return readable_name(name)
    return ""


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


def release(document: Cover) -> Identity | None:
    """An earnings release ("… Reports Fourth Quarter and Fiscal 2019 Results" on a first page), or None."""
    return _release_in(document.pages(COVER_PAGES))


def _release_in(cover: str) -> Identity | None:
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
    return readable_name(name)
