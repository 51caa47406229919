"""The documentation profile's reader: a manual, guide or reference — said so in its title or on a
line of its own on its first page — with the product it documents and the version, beside what its
cover says (covers.general). "GNU libidn2 2.3.4 Reference Manual" is the product "GNU libidn2" at
version 2.3.4; a first-page line "Version 1.0.8" gives the version when the title does not."""

from __future__ import annotations

import re
from dataclasses import replace

from mnemosyne.profiles.identity import Identity
from mnemosyne.profiles.readers.covers import Cover, document_title, general, short_lines

_MANUAL = re.compile(
    r"\b(?:user(?:'s|’s)?\s+(?:manual|guide)|owner(?:'s|’s)?\s+manual|instruction manual"
    r"|operating instructions|quick[\s-]start guide|reference manual|programmer(?:'s|’s)?\s+(?:manual|guide)"
    r"|(?:manual|guide|handbook|documentation|reference)$)",
    re.IGNORECASE,
)
_KIND_WORDS = re.compile(
    r"\s*[-–:,]?\s*\b(?:the\s+)?(?:user(?:'s|’s)?|owner(?:'s|’s)?|reference|programmer(?:'s|’s)?|instruction|"
    r"quick[\s-]start|installation|administrator(?:'s|’s)?)?\s*(?:manual|guide|handbook|documentation|reference)\b.*$",
    re.IGNORECASE,
)
_VERSION = re.compile(r"\b(?:version|release|v\.?)\s*(\d+(?:\.\d+){0,3}[a-z]?)\b", re.IGNORECASE)
_BARE_VERSION = re.compile(r"\s(\d+\.\d+(?:\.\d+){0,2}[a-z]?)\b")
# A product's name is at most this many words.
MAX_PRODUCT_WORDS = 6
LINE_WORDS = 8


def manual(cover: Cover) -> Identity | None:
    title = document_title(cover)
    first_lines = short_lines(cover.first_page()[:2000], LINE_WORDS)
    if not (_MANUAL.search(title) or any(_MANUAL.search(line) for line in first_lines)):
        return None
    version = _VERSION.search(title) or _BARE_VERSION.search(title)
    if version is None:
        version = next((found for line in first_lines if (found := _VERSION.search(line))), None)
    product = _KIND_WORDS.sub("", title)
    product = _VERSION.sub("", product)
    product = _BARE_VERSION.sub("", product).strip(" -–:,")
    if not product or len(product.split()) > MAX_PRODUCT_WORDS:
        product = ""
    return replace(
        general(cover),
        title=title,
        doc_type="manual",
        product=product,
        version=version.group(1) if version else "",
    )
