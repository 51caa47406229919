"""Where an item's objects live in the ChunkStore: every key is built here.

    items/<item_uid>/<version>/<ordinal>.txt       a chunk's full text
    items/<item_uid>/<version>/<ordinal>.<ext>     an image chunk's bytes
    items/<item_uid>/<version>/page-<number>.txt   a page's full text (paged documents)
    items/<item_uid>/<version>/original            the document's bytes as read (the console's
                                                   page images and downloads)

The version names the content and the configuration that chunked it, so a re-ingest under another
configuration never overwrites the objects the current chunks point at.
"""

from __future__ import annotations


def item_prefix(item_uid: str) -> str:
    """Every object of an item, whatever its version (deleting an item deletes this)."""
    return f"items/{item_uid}"


def version_prefix(item_uid: str, version: str) -> str:
    return f"{item_prefix(item_uid)}/{version}"


def text_key(prefix: str, ordinal: int) -> str:
    return f"{prefix}/{ordinal}.txt"


def image_key(prefix: str, ordinal: int, extension: str) -> str:
    return f"{prefix}/{ordinal}.{extension}"


def page_key(prefix: str, number: int) -> str:
    return f"{prefix}/page-{number}.txt"


def original_key(prefix: str) -> str:
    return f"{prefix}/original"


def prefix_of(key: str) -> str:
    """The version prefix a chunk's key lies under."""
    return key.rsplit("/", 1)[0]
