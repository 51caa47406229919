"""The research profile's reader: a paper — an abstract on its first page and references at its end —
with its title, authors (the lines between the title and the abstract that read as names), its DOI
and year, beside what its cover says (covers.general)."""

from __future__ import annotations

import re
from dataclasses import replace

from mnemosyne.profiles.identity import Identity
from mnemosyne.profiles.readers.covers import Cover, document_title, general

_ABSTRACT = re.compile(r"^\s*abstract\b", re.IGNORECASE | re.MULTILINE)
_REFERENCES = re.compile(r"^\s*(?:references|bibliography|works cited)\s*$", re.IGNORECASE | re.MULTILINE)
_DOI = re.compile(r"\b(10\.\d{4,9}/[^\s\"<>]+)", re.IGNORECASE)
_YEAR = re.compile(
    r"(?:©|\(c\)|copyright|published|received|accepted)\D{0,20}((?:19|20)\d{2})\b", re.IGNORECASE
)
# A name: capitalised words (initials allowed), with markers of affiliation stripped.
_NAME = re.compile(r"^(?:[A-Z][\w'’.-]*\.?\s+){1,3}[A-Z][\w'’-]+$")
_MARKERS = re.compile(r"[\d*†‡§¶,]+$")
MAX_AUTHORS = 12


def paper(cover: Cover) -> Identity | None:
    first = cover.first_page()
    abstract = _ABSTRACT.search(first)
    if abstract is None or not _REFERENCES.search(cover.text):
        return None
    found = general(cover)
    title = document_title(cover)
    doi = _DOI.search(first)
    year = _YEAR.search(first)
    return replace(
        found,
        title=title,
        doc_type="paper",
        authors=", ".join(_authors(first[: abstract.start()], title)),
        doi=doi.group(1).rstrip(".,;)") if doi else "",
        year=found.date.year if found.date else (int(year.group(1)) if year else None),
    )


def _authors(front: str, title: str) -> list[str]:
    """The names on the lines after the title and before the abstract."""
    lines = [line.strip() for line in front.splitlines() if line.strip()]
    if title and title in lines:
        lines = lines[lines.index(title) + 1 :]
    names: list[str] = []
    for line in lines[:8]:
        parts = re.split(r",\s*|\s+and\s+|\s*;\s*|\s*&\s*", line)
        cleaned = [_MARKERS.sub("", part).strip() for part in parts if part.strip()]
        if cleaned and all(_NAME.match(part) for part in cleaned):
            names.extend(cleaned)
        elif names:
            break
    return list(dict.fromkeys(names))[:MAX_AUTHORS]
