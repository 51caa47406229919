"""The general reader: what any document's cover says on lines of its own — its title, the
organisation of a copyright line ("© 2020 Acme Corp. All rights reserved."), the date printed on
the first page ("Published: 3 April 2014"). What a sentence says in passing (an abstract's closing
"Copyright © 2012 John Wiley & Sons, Ltd.", "patients seen from 1 April 2002 to …") is what the
text is about or who published it, not what the document is. What cannot be read stays empty,
never a guess.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field

from mnemosyne.profiles.identity import Identity
from mnemosyne.profiles.readers.dates import PRINTED_DATE, printed

# Pages read for the cover's facts.
COVER_PAGES = 3
# A cover's date stands on a line of at most this many words.
DATE_LINE_WORDS = 8
# A copyright line of its own: at most this many words ("Copyright © 2020-2023 Acme Holdings
# International, Inc. and its subsidiaries. All rights reserved." is 13).
COPYRIGHT_LINE_WORDS = 16
# "© 2020 Acme Corp.", "Copyright Acme Corp", "(c) 2020 Acme Corp" — but "(c)" only before a year:
# without one it is the third item of a list ("(a) …, (b) …, (c) promoter activity"). The holder's
# name starts with a capital letter.
_COPYRIGHT = re.compile(
    r"(?:(?:©|copyright)\s*(?:©\s*)?(?:\d{4}(?:\s*[-–]\s*\d{4})?,?\s+)?|\(c\)\s*\d{4}(?:\s*[-–]\s*\d{4})?,?\s+)"
    r"((?-i:[A-Z])[\w&.,'’ -]{2,80}?)(?:\.\s|\.$|,?\s+all rights reserved|\n|$)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Cover:
    """What readers are given of a document: its normalised text, where its pages start, the
    parser's title and its headings (offset, title)."""

    text: str
    page_starts: list[int] = field(default_factory=list)
    title: str = ""
    headings: list[tuple[int, str]] = field(default_factory=list)
    # The parser's title names a file rather than the document (an accession number, a hash,
    # "Microsoft Word - x.docx"): kept only when nothing better is found.
    title_names_a_file: bool = False

    def pages(self, count: int) -> str:
        """The first `count` pages (20,000 characters of a text without pages)."""
        if not self.page_starts:
            return self.text[:20_000]
        if len(self.page_starts) <= count:
            return self.text
        return self.text[: self.page_starts[count]]

    def page_end(self, page: int) -> int:
        return self.page_starts[page] if len(self.page_starts) > page else len(self.text)

    def first_page(self) -> str:
        return self.pages(COVER_PAGES) if not self.page_starts else self.text[: self.page_end(1)]


def general(cover: Cover) -> Identity:
    """Organisation and date: each from a line of its own on the cover, or nothing."""
    text = cover.pages(COVER_PAGES)
    copyright = next(
        (
            match
            for line in short_lines(text, COPYRIGHT_LINE_WORDS)
            if (match := _COPYRIGHT.search(line)) is not None
        ),
        None,
    )
    organisation = ""
    if copyright is not None:
        name = copyright.group(1).strip(" ,.")
        if len(name.split()) <= 8 and not re.match(r"^(?:by|the author|\d)", name, re.IGNORECASE):
            organisation = name
    return Identity(organisation=organisation, date=printed_date(cover.first_page()[:3000]))


def short_lines(text: str, words: int) -> list[str]:
    """The lines of `text` of at most `words` words: what a cover says on a line of its own."""
    return [line for line in text.splitlines() if 0 < len(line.split()) <= words]


def printed_date(text: str) -> dt.date | None:
    """The first full date printed on a line of its own, as a cover prints it."""
    for line in text.splitlines():
        if len(line.split()) > DATE_LINE_WORDS:
            continue
        match = PRINTED_DATE.search(line)
        if match is not None:
            return printed(match)
    return None


def readable_name(name: str) -> str:
    """A name printed in capitals, in the case it is written in ("AMAZON.COM, INC." → "Amazon.com, Inc.")."""
    if name != name.upper():
        return name
    words: list[str] = []
    for word in name.split():
        lowered = word.lower()
        words.append(lowered if lowered in ("of", "and", "the", "&") and words else word.capitalize())
    return re.sub(r"\.Com\b", ".com", " ".join(words))


def document_title(cover: Cover) -> str:
    """The parser's title, unless it names a file rather than the document: then the first
    heading of the first page, or the document's first short line."""
    title = " ".join(cover.title.split())
    if title and not cover.title_names_a_file:
        return title
    first_page_end = cover.page_end(1) if cover.page_starts else min(len(cover.text), 3000)
    for offset, heading in cover.headings:
        if offset >= first_page_end:
            break
        if sum(char.isalpha() for char in heading) >= 4:
            return heading
    for line in cover.text[:first_page_end].splitlines():
        line = line.strip()
        if 8 <= len(line) <= 120 and not line.startswith("|") and sum(char.isalpha() for char in line) >= 4:
            return line
    return title
