"""Layout analysis on made-up lines: furniture, reading order, blocks, headings, assembly. Pure."""

from __future__ import annotations

from mnemosyne.ingestion.layout import lay_out
from mnemosyne.ingestion.layout.blocks import Style, document_style, group_blocks
from mnemosyne.ingestion.layout.furniture import is_leader_entry, is_page_number, remove_furniture
from mnemosyne.ingestion.layout.headings import OutlineEntry, comparable, font_headings, outline_headings
from mnemosyne.ingestion.layout.lines import Line, normalise_chars
from mnemosyne.ingestion.layout.reading_order import find_gutter, reading_order

HEIGHT = 792.0


def line(
    text: str, y: float, *, page: int = 1, x0: float = 72.0, x1: float | None = None, **style: object
) -> Line:
    width = x1 if x1 is not None else x0 + 5.5 * len(text)
    return Line(page=page, text=text, x0=x0, y0=y, x1=width, y1=y + 10, **style)  # type: ignore[arg-type]


def body_page(page: int, *, header: str | None = None, number: str | None = None) -> list[Line]:
    lines = [line(header, 750, page=page)] if header else []
    lines += [line(f"Body line {n} of page {page} goes on", 690 - 14 * n, page=page) for n in range(20)]
    if number:
        lines.append(line(number, 40, page=page, x0=300))
    return lines


def test_running_headers_and_page_numbers_go_and_the_text_stays() -> None:
    pages = [body_page(n, header=f"Chapter 2: Handling {n + 2}", number=str(n)) for n in range(1, 7)]
    kept = remove_furniture(pages, [HEIGHT] * 6, spacing=14)
    assert all(len(lines) == 20 for lines in kept)
    assert all(not line.text.startswith("Chapter") for lines in kept for line in lines)


def test_a_document_without_running_headers_keeps_its_first_and_last_lines() -> None:
    pages = [body_page(n) for n in range(1, 7)]
    assert remove_furniture(pages, [HEIGHT] * 6, spacing=14) == pages


def test_page_numbers_and_index_leaders_are_recognised() -> None:
    assert is_page_number("12") and is_page_number("- 3 -") and is_page_number("Page 4 of 10")
    assert is_page_number("xiv") and not is_page_number("12 monkeys")
    assert is_leader_entry("2.1 ASN.1 syntax . . . . . . . . . 2") and is_leader_entry("Naming........3")
    assert not is_leader_entry("See section 2.1 on page 3.")


def test_two_columns_are_read_down_the_left_column_first() -> None:
    left = [line(f"left {n}", 700 - 14 * n, x0=72, x1=290) for n in range(10)]
    right = [line(f"right {n}", 700 - 14 * n, x0=320, x1=540) for n in range(10)]
    title = line("A title across the page", 740, x0=72, x1=540)
    interleaved = [title, *(side for pair in zip(left, right, strict=True) for side in pair)]
    assert find_gutter(interleaved) is not None
    assert [item.text for item in reading_order(interleaved)] == [
        "A title across the page",
        *(f"left {n}" for n in range(10)),
        *(f"right {n}" for n in range(10)),
    ]


def test_a_single_column_keeps_the_text_layers_order() -> None:
    lines = [line(f"line {n}", 700 - 14 * n, x1=540) for n in range(10)]
    assert find_gutter(lines) is None and reading_order(lines) == lines


def test_paragraphs_lists_and_code_become_blocks() -> None:
    style = Style(body_size=10, spacing=13)
    lines = [
        line("The parser reads definitions and", 700, x1=500),
        line("builds a tree.", 687, x1=160),
        line("Here is the list of types:", 668, x0=87, x1=300),
        line("• INTEGER;", 652, x0=100),
        line("• BOOLEAN;", 636, x0=100),
        line("Version ::= INTEGER", 616, x0=125, mono=True),
        line("Other ::= BOOLEAN", 590, x0=125, mono=True),
    ]
    blocks = group_blocks(lines, style, {})
    assert [(block.kind, len(block.lines)) for block in blocks] == [
        ("paragraph", 2),
        ("paragraph", 1),
        ("list", 2),
        ("code", 2),
    ]


def test_a_list_running_over_a_page_break_stays_one_block_and_cites_both_pages() -> None:
    first = [line("Types the parser manages:", 120, page=1, x1=300)]
    first += [line(f"• TYPE{n};", 104 - 16 * n, page=1, x0=100) for n in range(3)]
    second = [line(f"• MORE{n};", 700 - 16 * n, page=2, x0=100) for n in range(3)]
    second.append(line("This version does not handle the REAL type.", 640, page=2, x1=400))
    laid = lay_out([first, second], [HEIGHT, HEIGHT])
    assert "• TYPE2;\n• MORE0;" in laid.text
    listed = [
        box
        for box in laid.boxes
        if "TYPE" in laid.text[box.start : box.end] or "MORE" in laid.text[box.start : box.end]
    ]
    assert {box.page for box in listed} == {1, 2}


def test_a_word_broken_at_a_lines_end_is_joined_and_a_ligature_unfolded() -> None:
    chars = "ﬁle in the con\ufffe"
    text, edges = normalise_chars(
        chars, [float(i) for i in range(len(chars))], [i + 1.0 for i in range(len(chars))]
    )
    assert text == "file in the con-" and len(edges) == len(text) + 1
    lines = [line(text, 700, x1=540), line("ﬁguration directory.", 687)]
    lines[1] = Line(
        page=1, text=normalise_chars(lines[1].text, [0.0] * 20, [1.0] * 20)[0], x0=72, y0=687, x1=200, y1=697
    )
    assert lay_out([lines], [HEIGHT]).text == "file in the configuration directory."


def test_font_headings_take_their_level_from_numbering_or_size() -> None:
    lines = [
        line("2 Structure handling", 700, size=17.0, bold=True),
        line("2.1 Syntax", 670, size=14.0, bold=True),
        line("The parser is case sensitive and reads", 650, size=10.0, x1=500),
        line("definitions from a file.", 637, size=10.0),
        line("Notes on naming", 610, size=14.0, bold=True),
        line("Names are dotted paths.", 590, size=10.0),
    ]
    style = document_style([lines])
    marks = font_headings([lines], style)
    assert {
        item.text: (marks[id(item)].level, marks[id(item)].title) for item in lines if id(item) in marks
    } == {
        "2 Structure handling": (1, "2 Structure handling"),
        "2.1 Syntax": (2, "2.1 Syntax"),
        "Notes on naming": (2, "Notes on naming"),
    }


def test_an_outline_title_finds_its_heading_despite_punctuation_and_body_mentions() -> None:
    style = Style(body_size=10, spacing=13)
    lines = [
        line("See the ASN.1 syntax below for the naming rules.", 700, size=10.0),
        line("2.1 ASN.1 syntax", 670, size=14.0, bold=True),
        line("The parser is case sensitive.", 650, size=10.0),
    ]
    marks = outline_headings([OutlineEntry(level=2, title="ASN-1 Syntax", page=1, y=690)], [lines], style)
    assert list(marks) == [id(lines[1])] and marks[id(lines[1])].printed
    assert comparable("“ASN.1 — syntax”") == comparable("asn1syntax")


def test_an_outline_entry_not_printed_starts_its_section_without_taking_a_line() -> None:
    lines = [line("Turbines turn in the stream.", 700), line("They resemble wind turbines.", 687)]
    laid = lay_out([lines], [HEIGHT], outline=[OutlineEntry(level=1, title="Power generation", page=1)])
    assert [(heading.offset, heading.title) for heading in laid.headings] == [(0, "Power generation")]
    assert laid.text == "Turbines turn in the stream. They resemble wind turbines."
