"""A PDF page's text layer as lines, through PDFium: characters with their boxes and fonts.

PDFium's text page puts the characters in reading order and marks the spaces and line breaks it
infers from their positions (its "generated" characters), which gets word boundaries right where
other extractors run words together. Each line gets its box, the per-character edges, its font
size (the most common among its characters), and whether it is set bold or monospaced.
"""

from __future__ import annotations

import ctypes
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from mnemosyne.ingestion.layout.lines import Line, normalise_chars

# Font names that say monospaced or bold (PDFium's weight is unreliable for Type 1 fonts).
_MONO_NAMES = ("mono", "courier", "cmtt", "typewriter", "consol", "menlo", "inconsolata", "fixed", "code")
_BOLD_NAMES = ("bold", "black", "heavy", "semibold", "demi", "cmbx", "cmb10")
_FIXED_PITCH = 0x1
_NO_BOX = (0.0, 0.0, 0.0, 0.0)


@dataclass(frozen=True)
class PageText:
    lines: list[Line]
    # Characters PDFium could not map to Unicode: a text layer mostly made of these is garbage.
    unmapped: int
    characters: int


@dataclass(frozen=True)
class _Font:
    size: float
    bold: bool
    mono: bool


def page_text(page: pdfium.PdfPage, number: int) -> PageText:
    textpage = page.get_textpage()
    try:
        return _lines(textpage, number)
    finally:
        textpage.close()


def _lines(textpage: pdfium.PdfTextPage, number: int) -> PageText:
    count = textpage.count_chars()
    text: Sequence[str] = textpage.get_text_range() if count else ""
    if len(text) != count:  # a character outside the BMP takes two; read them one by one
        text = _one_per_index([pdfium_c.FPDFText_GetUnicode(textpage, index) for index in range(count)])
    left, right, bottom, top = ctypes.c_double(), ctypes.c_double(), ctypes.c_double(), ctypes.c_double()
    fonts: dict[int, _Font] = {}
    lines: list[Line] = []
    chars: list[str] = []
    boxes: list[tuple[float, float, float, float]] = []
    styles: list[_Font | None] = []
    unmapped = 0
    for index in range(count):
        char = text[index]
        if not char:  # the second half of a character outside the BMP
            continue
        if char in "\r\n":
            _flush(lines, number, chars, boxes, styles)
            chars, boxes, styles = [], [], []
            continue
        generated = pdfium_c.FPDFText_IsGenerated(textpage, index) == 1
        if generated or char.isspace():
            box = boxes[-1] if boxes else _NO_BOX
            chars.append(" ")
            boxes.append((box[1], box[1], box[2], box[3]))
            styles.append(None)
            continue
        if pdfium_c.FPDFText_HasUnicodeMapError(textpage, index) == 1:
            unmapped += 1
        pdfium_c.FPDFText_GetCharBox(textpage, index, left, right, bottom, top)
        chars.append(char)
        boxes.append((left.value, right.value, bottom.value, top.value))
        styles.append(_font(textpage, index, fonts))
    _flush(lines, number, chars, boxes, styles)
    return PageText(lines=lines, unmapped=unmapped, characters=count)


def _one_per_index(codes: list[int]) -> list[str]:
    """One string per character index: a UTF-16 surrogate pair (a character outside the BMP, which
    PDFium counts as two) as the whole character at the first index and "" at the second; a lone
    surrogate, which no tokenizer accepts, as U+FFFD."""
    chars: list[str] = []
    index = 0
    while index < len(codes):
        code = codes[index]
        following = codes[index + 1] if index + 1 < len(codes) else 0
        if 0xD800 <= code < 0xDC00 and 0xDC00 <= following < 0xE000:
            chars += [chr(0x10000 + ((code - 0xD800) << 10) + (following - 0xDC00)), ""]
            index += 2
            continue
        chars.append("\ufffd" if 0xD800 <= code < 0xE000 else chr(code))
        index += 1
    return chars


def _font(textpage: pdfium.PdfTextPage, index: int, fonts: dict[int, _Font]) -> _Font:
    """The character's font, looked up once per text object (characters of one object share it)."""
    handle = pdfium_c.FPDFText_GetTextObject(textpage, index)
    key = ctypes.cast(handle, ctypes.c_void_p).value or 0
    found = fonts.get(key)
    if found is None:
        size = pdfium_c.FPDFText_GetFontSize(textpage, index)
        weight = pdfium_c.FPDFText_GetFontWeight(textpage, index)
        name, flags = _font_name(textpage, index)
        lowered = name.lower()
        found = _Font(
            size=round(size, 1),
            bold=weight >= 600 or any(part in lowered for part in _BOLD_NAMES),
            mono=bool(flags & _FIXED_PITCH) or any(part in lowered for part in _MONO_NAMES),
        )
        fonts[key] = found
    return found


def _font_name(textpage: pdfium.PdfTextPage, index: int) -> tuple[str, int]:
    flags = ctypes.c_int()
    buffer = ctypes.create_string_buffer(128)
    pdfium_c.FPDFText_GetFontInfo(textpage, index, buffer, len(buffer), ctypes.byref(flags))
    # Subset fonts are named "ABCDEF+CMTT10".
    return buffer.value.decode("utf-8", "replace").split("+")[-1], flags.value


def _flush(
    lines: list[Line],
    number: int,
    chars: list[str],
    boxes: list[tuple[float, float, float, float]],
    styles: list[_Font | None],
) -> None:
    # Trim spaces at either end; a line of spaces is no line.
    while chars and chars[-1] == " ":
        chars.pop(), boxes.pop(), styles.pop()
    start = 0
    while start < len(chars) and chars[start] == " ":
        start += 1
    chars, boxes, styles = chars[start:], boxes[start:], styles[start:]
    inked = [box for box, style in zip(boxes, styles, strict=True) if style is not None and box != _NO_BOX]
    if not chars or not inked:
        return
    known = [style for style in styles if style is not None]
    size = Counter(style.size for style in known).most_common(1)[0][0]
    text, edges = normalise_chars("".join(chars), [box[0] for box in boxes], [box[1] for box in boxes])
    if not text.strip():
        return
    lines.append(
        Line(
            page=number,
            text=text,
            x0=min(box[0] for box in inked),
            y0=min(box[2] for box in inked),
            x1=max(box[1] for box in inked),
            y1=max(box[3] for box in inked),
            size=size,
            bold=sum(style.bold for style in known) >= 0.8 * len(known),
            mono=sum(style.mono for style in known) >= 0.8 * len(known),
            edges=edges,
        )
    )
