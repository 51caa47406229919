"""An item's identity as stored (its columns and metadata["identity"]), and its chunks' context.

Re-indexing and re-embedding rebuild a stored chunk's context from these, as ingest wrote it.
"""

from __future__ import annotations

from mnemosyne.ingestion.planning import header_text
from mnemosyne.library.models import Chunk, Item
from mnemosyne.profiles.identity import IDENTITY_KEYS, Identity, document_line
from mnemosyne.storage import ChunkNotFound, get_chunk_store, keys

# The fields of a chunk's item its context is made of (for a query's `only`).
CONTEXT_FIELDS = (
    "item__title",
    "item__organisation",
    "item__document_type",
    "item__document_date",
    "item__period",
    "item__metadata",
)


def identity_of(item: Item) -> Identity:
    """The identity an item was ingested with (its columns and metadata["identity"])."""
    extra = item.metadata.get("identity") if isinstance(item.metadata, dict) else None
    extra = extra if isinstance(extra, dict) else {}
    year, quarter, printed = extra.get("fiscal_year"), extra.get("fiscal_quarter"), extra.get("year")
    return Identity(
        title=item.title,
        organisation=item.organisation,
        ticker=str(extra.get("ticker", "")),
        doc_type=item.document_type,
        date=item.document_date,
        period=item.period,
        fiscal_year=year if isinstance(year, int) else None,
        fiscal_quarter=quarter if isinstance(quarter, int) else None,
        authors=str(extra.get("authors", "")),
        doi=str(extra.get("doi", "")),
        year=printed if isinstance(printed, int) else None,
        product=str(extra.get("product", "")),
        version=str(extra.get("version", "")),
        given=tuple(str(key) for key in extra.get("given", []) if key in IDENTITY_KEYS),
    )


def given_by_item(item: Item) -> dict[str, object]:
    """The values a person gave an item before (kept by every re-ingest)."""
    identity = identity_of(item)
    values: dict[str, object] = {
        "title": identity.title,
        "organisation": identity.organisation,
        "doc_type": identity.doc_type,
        "date": identity.date,
        "period": identity.period,
    }
    return {key: values[key] for key in identity.given}


def chunk_header(item: Item, section_path: str) -> str:
    """A stored chunk's context, as ingest wrote it."""
    return header_text(item.title, section_path, document_line(identity_of(item)))


def stored_pages(item: Item, line: str) -> list[tuple[int, str]]:
    """The item's stored pages, each under the new identity line (the stored text's first line is
    the line it was written under)."""
    store = get_chunk_store()
    prefixes = {
        keys.prefix_of(key) for key in Chunk.objects.filter(item=item).values_list("storage_key", flat=True)
    }
    numbers = item.pages.values_list("number", flat=True)
    pages = []
    for number in numbers:
        for prefix in prefixes:
            try:
                text = store.get(keys.page_key(prefix, number)).decode("utf-8")
            except ChunkNotFound:
                continue
            pages.append((number, f"{line}\n{text.partition(chr(10))[2]}"))
            break
    return pages
