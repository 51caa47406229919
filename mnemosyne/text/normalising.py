"""One form for every text: documents at ingest and queries at search are normalised the same way.

NFKC (ligatures "ﬁ" → "fi", full-width letters → ASCII, no-break spaces → spaces), soft hyphens
dropped, words hyphenated at a line's end joined again, line breaks unified, control characters
dropped, trailing spaces and runs of blank lines trimmed. A PDF's text layer often keeps "ﬁle" as
one ligature character, which PostgreSQL then indexes as a different word from "file".
"""

from __future__ import annotations

import re
import unicodedata

_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_TRAILING_SPACE = re.compile(r"[^\S\n]+$", re.MULTILINE)
_EXTRA_BLANK_LINES = re.compile(r"\n{3,}")
# "exam-" at a line's end, "ple" on the next: one word ("well-" + "known" loses its hyphen too;
# a text gives no way to tell them apart).
_HYPHENATED = re.compile(r"([^\W\d_])-\n[ \t]*([a-z])")
_WHITESPACE = re.compile(r"\s+")


def normalise_text(raw: str) -> str:
    text = unicodedata.normalize("NFKC", raw.removeprefix("\ufeff")).replace("\u00ad", "")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _CONTROL_CHARS.sub("", text)
    text = _HYPHENATED.sub(r"\1\2", text)
    text = _TRAILING_SPACE.sub("", text)
    text = _EXTRA_BLANK_LINES.sub("\n\n", text)
    return text.strip()


def normalise_query(query: str) -> str:
    """A query as the documents were normalised (NFKC, no soft hyphens), its whitespace collapsed."""
    text = unicodedata.normalize("NFKC", query).replace("\u00ad", "")
    return _WHITESPACE.sub(" ", _CONTROL_CHARS.sub(" ", text)).strip()
