"""A line of text on a page, with where it is and how it is set: what layout analysis works on."""

from __future__ import annotations

import unicodedata
from array import array
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Line:
    page: int  # 1-based
    text: str  # NFKC-normalised, one line, no line break
    # Bounding box in PDF points, origin at the page's bottom left (x0 < x1, y0 < y1).
    x0: float
    y0: float
    x1: float
    y1: float
    size: float = 10.0  # font size in points (OCR: the line's height)
    bold: bool = False
    mono: bool = False
    # len(text) + 1 horizontal boundaries: edges[i] is where text[i] starts, edges[-1] where it ends.
    edges: array[float] = field(default_factory=lambda: array("f"), compare=False, repr=False)
    # OCR: the recogniser's confidence in this line (0-1); None for a text layer.
    confidence: float | None = None

    @property
    def height(self) -> float:
        return self.y1 - self.y0

    @property
    def width(self) -> float:
        return self.x1 - self.x0

    def edge(self, index: int) -> float:
        """Where text[index] starts (index == len(text): where the line ends)."""
        if len(self.edges) == len(self.text) + 1:
            return float(self.edges[max(0, min(index, len(self.text)))])
        # Without recorded edges, characters are taken as equally wide.
        share = max(0, min(index, len(self.text))) / max(1, len(self.text))
        return self.x0 + share * self.width


_SOFT_HYPHENS = ("\u00ad", "\ufffe")


def normalise_chars(chars: str, lefts: list[float], rights: list[float]) -> tuple[str, array[float]]:
    """NFKC, character by character, keeping where each output character sits on the line.

    A ligature "ﬁ" becomes "fi" (the glyph's width shared between its letters), a full-width letter
    its ASCII form, a soft hyphen nothing; control characters go. Returns the text and its
    len + 1 edges.
    """
    out: list[str] = []
    edges = array("f")
    last = len(chars) - 1
    for index, (char, left, right) in enumerate(zip(chars, lefts, rights, strict=True)):
        if char in _SOFT_HYPHENS:
            # PDFium marks a word broken at a line's end with U+FFFE: a hyphen for the joiner to
            # mend; a soft hyphen inside a line is nothing.
            if index == last:
                out.append("-")
                edges.append(left)
            continue
        if unicodedata.category(char) == "Cc" and char != "\t":
            continue
        normal = unicodedata.normalize("NFKC", char) if not char.isascii() else char
        if char == "\t":
            normal = " "
        step = (right - left) / max(1, len(normal))
        for position, piece in enumerate(normal):
            out.append(piece)
            edges.append(left + position * step)
    edges.append(rights[-1] if rights else 0.0)
    return "".join(out), edges
