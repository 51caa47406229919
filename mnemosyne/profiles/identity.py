"""What a document is — title, organisation, kind, date, the period it covers, a paper's authors and
DOI, a manual's product and version — and what is done with it: values a person gives (checked),
the identity line heading every chunk's context, and the words the document may be named by. How
it is read from a document: the profile's readers (readers/). Pure.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from mnemosyne.text.english_words import is_word

# The keys a person may set, and the types they are read as (see parse_given).
IDENTITY_KEYS = ("title", "organisation", "doc_type", "date", "period")
MAX_TITLE_CHARS = 300
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
    # A paper's (research profile): its authors ("A. Smith, B. Jones"), DOI and year.
    authors: str = ""
    doi: str = ""
    year: int | None = None
    # A manual's (documentation profile): the product it documents and the version.
    product: str = ""
    version: str = ""
    # Keys a person set (they win over what the rules read, at every re-ingest).
    given: tuple[str, ...] = field(default_factory=tuple)

    def as_metadata(self) -> dict[str, object]:
        """What the item keeps beyond its columns: how the period reads, what a profile's reader
        found, and what was given."""
        found: dict[str, object] = {}
        if self.ticker:
            found["ticker"] = self.ticker
        if self.fiscal_year is not None:
            found["fiscal_year"] = self.fiscal_year
        if self.fiscal_quarter is not None:
            found["fiscal_quarter"] = self.fiscal_quarter
        for key in ("authors", "doi", "product", "version"):
            if getattr(self, key):
                found[key] = getattr(self, key)
        if self.year is not None:
            found["year"] = self.year
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


def spoken(date: dt.date | None) -> str:
    """A date as a filing prints it: "July 1, 2023"."""
    return f"{date:%B} {date.day}, {date.year}" if date else ""


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
    if identity.product and identity.product.lower() not in said:
        parts.append(identity.product)
    if identity.version and identity.version.lower() not in said:
        parts.append(f"version {identity.version}")
    if identity.fiscal_year is not None:
        period = f"fiscal year {identity.fiscal_year} (FY{identity.fiscal_year})"
        if identity.fiscal_quarter:
            ordinal = ("first", "second", "third", "fourth")[identity.fiscal_quarter - 1]
            label = f"Q{identity.fiscal_quarter} FY{identity.fiscal_year}"
            period = f"{ordinal} quarter of fiscal {identity.fiscal_year} ({label})"
        parts.append(period)
    if identity.date is not None and spoken(identity.date).lower() not in said:
        parts.append(spoken(identity.date))
    elif identity.date is None and identity.year is not None and str(identity.year) not in said:
        parts.append(str(identity.year))
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
        identity.product,
        identity.version,
        # Authors by their names ("Smith et al."): initials are too common to name anything.
        " ".join(word for word in re.split(r"[\s,]+", identity.authors) if len(word.rstrip(".")) > 2),
    ]
    if identity.fiscal_year is not None:
        parts.append(f"fiscal {identity.fiscal_year} FY{identity.fiscal_year}")
    if identity.fiscal_quarter:
        ordinal = ("first", "second", "third", "fourth")[identity.fiscal_quarter - 1]
        parts.append(f"{ordinal} quarter Q{identity.fiscal_quarter}")
    year = identity.date.year if identity.date is not None else identity.year
    if year is not None and str(year) not in " ".join(parts):
        # The year only: a question's "as of March 31" says nothing of which document it means.
        parts.append(str(year))
    return " ".join(part for part in parts if part)
