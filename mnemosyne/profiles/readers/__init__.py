"""Identity readers: what a document is, read from its own pages by fixed rules, one module per kind
of document. A profile names the readers it runs, in order (catalog.py); the first that recognises
the document gives its identity, the general `cover` reader last. Pure: text in, identity out."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from mnemosyne.profiles.identity import MAX_TITLE_CHARS, Identity
from mnemosyne.profiles.readers import covers, manuals, papers, sec_filings
from mnemosyne.profiles.readers.covers import Cover

Reader = Callable[[Cover], Identity | None]

READERS: dict[str, tuple[str, Reader]] = {
    "sec_filing": ("SEC filing covers: form, registrant, trading symbol, fiscal period", sec_filings.filing),
    "earnings_release": (
        "earnings releases: the company and the quarter or year reported",
        sec_filings.release,
    ),
    "paper": ("papers: title, authors, year, DOI", papers.paper),
    "manual": ("manuals and guides: product and version", manuals.manual),
    "cover": ("covers: title, an organisation and a date printed on lines of their own", covers.general),
}


def read(cover: Cover, readers: Sequence[str]) -> Identity:
    """The identity the first reader that recognises the document gives (`cover` always does),
    titled by the document when the reader gave no title."""
    found = Identity()
    for name in readers:
        result = READERS[name][1](cover)
        if result is not None:
            found = result
            break
    title = found.title or covers.document_title(cover)
    return replace(found, title=title[:MAX_TITLE_CHARS])
