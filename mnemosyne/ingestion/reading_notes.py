"""What is said of how a document was read: pages OCR read, pages where it found no text.

Kept in the item's metadata (ocr_pages, unreadable_pages) and said in the ingest report's line for
the item, so a scanned page that yielded nothing is not silently missing from search.
"""

from __future__ import annotations

from collections.abc import Sequence

from mnemosyne.ingestion.documents import ParsedDocument

# Pages listed by number in a report line; more are counted.
LISTED_PAGES = 10


def as_metadata(parsed: ParsedDocument) -> dict[str, object]:
    notes: dict[str, object] = {}
    if parsed.ocr_pages:
        notes["ocr_pages"] = list(parsed.ocr_pages)
    if parsed.unreadable_pages:
        notes["unreadable_pages"] = list(parsed.unreadable_pages)
    return notes


def in_words(parsed: ParsedDocument) -> tuple[str, ...]:
    notes = []
    if parsed.ocr_pages:
        notes.append(f"OCR read {_pages(parsed.ocr_pages)}")
    if parsed.unreadable_pages:
        notes.append(f"no text found on {_pages(parsed.unreadable_pages)}")
    return tuple(notes)


def _pages(pages: Sequence[int]) -> str:
    if len(pages) == 1:
        return f"page {pages[0]}"
    shown = ", ".join(str(page) for page in pages[:LISTED_PAGES])
    return f"{len(pages)} pages ({shown}{', …' if len(pages) > LISTED_PAGES else ''})"
