"""How deep a page's elements nest, read before any HTML parser builds its tree: a page nested
hundreds of thousands deep costs the parsers time out of all proportion to its size, so one deeper
than INGEST_MAX_NESTING is refused at once. Elements HTML closes by itself (an open <p> before the
next, <li>, <td>, void elements such as <br>) are not counted, so careless pages pass."""

from __future__ import annotations

import re

from django.conf import settings

from mnemosyne.ingestion.documents import UnreadableFile

_TAG = re.compile(rb"<(/?)([a-zA-Z][a-zA-Z0-9:-]*)[^>]*?(/?)>")
_SELF_CLOSING = frozenset(
    b"area base br col embed hr img input link meta param source track wbr "
    b"p li dt dd tr td th thead tbody tfoot option optgroup rt rp colgroup caption".split()
)


def check_nesting(data: bytes) -> None:
    """UnreadableFile when the page's elements nest deeper than INGEST_MAX_NESTING."""
    limit = settings.INGEST_MAX_NESTING
    depth = deepest = 0
    for match in _TAG.finditer(data):
        name = match.group(2).lower()
        if name in _SELF_CLOSING or match.group(3):
            continue
        if match.group(1):
            depth = max(0, depth - 1)
            continue
        depth += 1
        if depth > deepest:
            deepest = depth
            if deepest > limit:
                raise UnreadableFile(f"the page's elements nest more than {limit} deep (INGEST_MAX_NESTING)")
