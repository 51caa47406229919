"""Words that OCR ran together, split again: "Eachelementhas" → "Each element has".

The recogniser reads a line of a scan as one string and inserts spaces where it sees gaps; in
tightly set type (bold headings, justified lines) it misses many, and neither index finds the
words inside "Theimportanceofretailsales". Its own character positions are no help here: they come
from the CTC decoder's time steps, a few pixels apart whether or not a space falls between two
letters. So a run of letters that is not a word is segmented with SymSpell's word segmentation
(symspellpy: a maintained port, with an English frequency dictionary in its wheel, nothing
downloaded) at edit distance 0 — it only adds spaces, never changes a letter — and the split is
kept only when every part is a known word and no part is a lone letter other than "a" and "I"
(so "pharmacokinetics" stays whole rather than becoming "p harm a co kinetics"). Only OCR'd
text goes through here; a text layer's spaces are the document's own.

What is left whole, because in technical text it is a name rather than words run together:
runs shorter than twelve letters ("namespace", "mimetype", "acceptfont": a manual's compound
names are short, two or more words run together are longer), CamelCase ("FreeType",
"VisibleString") and runs joined to digits or underscores ("streebog256"). Measured on scans of
the manuals (docs/benchmarks.md, the `ocr` part): splitting every run of eight letters or more cost
a point of word accuracy at 300 dpi (98.3 % -> 97.3 %); with these bounds it gains at both
resolutions.
"""

from __future__ import annotations

import re
from typing import Any

from mnemosyne.text.english_words import is_word, segmenter

# Runs of letters shorter than this are left alone (most are words, or names).
MIN_LETTERS = 12
# A run of letters standing alone: not part of an identifier with digits or underscores.
_RUN = re.compile(rf"(?<!\w)[A-Za-z]{{{MIN_LETTERS},}}(?!\w)")
# "FreeType", "VisibleString": capitalised parts, each followed by lower case — a name.
_CAMEL_CASE = re.compile(r"[A-Z]?[a-z]+(?:[A-Z][a-z]+)+")
_ONE_LETTER_WORDS = {"a", "A", "I"}


def space_positions(text: str) -> list[int]:
    """Where spaces go in `text` (offsets into it, ascending) to split its run-together words."""
    runs = list(_RUN.finditer(text))
    if not runs:
        return []
    positions: list[int] = []
    for match in runs:
        run = match.group(0)
        if is_word(run) or _CAMEL_CASE.fullmatch(run):
            continue
        parts = _segmented(segmenter(), run)
        if parts is None:
            continue
        offset = match.start()
        for part in parts[:-1]:
            offset += len(part)
            positions.append(offset)
    return positions


def _segmented(segmenter: Any, run: str) -> list[str] | None:
    parts = segmenter.word_segmentation(run, max_edit_distance=0).segmented_string.split()
    if len(parts) < 2 or "".join(parts) != run:
        return None
    for part in parts:
        if len(part) == 1 and part not in _ONE_LETTER_WORDS:
            return None
        if not is_word(part):
            return None
    return parts


def with_spaces(text: str, lefts: list[float], rights: list[float]) -> tuple[str, list[float], list[float]]:
    """The line's text with its run-together words split, and its characters' extents (an inserted
    space sits, without width, where the letter before it ends)."""
    positions = space_positions(text)
    if not positions:
        return text, lefts, rights
    out: list[str] = []
    new_lefts: list[float] = []
    new_rights: list[float] = []
    cursor = 0
    for position in [*positions, len(text)]:
        out.append(text[cursor:position])
        new_lefts += lefts[cursor:position]
        new_rights += rights[cursor:position]
        if position < len(text):
            out.append(" ")
            edge = rights[position - 1]
            new_lefts.append(edge)
            new_rights.append(edge)
        cursor = position
    return "".join(out), new_lefts, new_rights
