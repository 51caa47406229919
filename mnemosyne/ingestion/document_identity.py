"""What a document is, read from its own pages by the readers its library's profile names
(mnemosyne/profiles/readers/: SEC covers and earnings releases for filings, papers for research,
manuals for documentation, covers for every profile), with what a person gave put over it."""

from __future__ import annotations

from collections.abc import Mapping

from mnemosyne.ingestion.documents import ParsedDocument, names_a_file
from mnemosyne.profiles import readers
from mnemosyne.profiles.catalog import GENERAL, Profile
from mnemosyne.profiles.identity import Identity, with_given
from mnemosyne.profiles.readers.covers import Cover


def identify(
    parsed: ParsedDocument, *, profile: Profile = GENERAL, given: Mapping[str, object] | None = None
) -> Identity:
    """The document's identity as its profile's readers read it, with what a person gave over it."""
    cover = Cover(
        text=parsed.text,
        page_starts=list(parsed.page_starts),
        title=parsed.title,
        headings=[(heading.offset, heading.title) for heading in parsed.headings],
        title_names_a_file=names_a_file(" ".join(parsed.title.split())),
    )
    return with_given(readers.read(cover, profile.readers), given or {})
