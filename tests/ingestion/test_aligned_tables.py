"""Tables without rules, on made-up lines of a statement page: rows, columns, header, title. Pure."""

from __future__ import annotations

from array import array

from mnemosyne.ingestion.layout import lay_out
from mnemosyne.ingestion.layout.aligned_rows import cells_of, is_number
from mnemosyne.ingestion.layout.aligned_tables import find_tables
from mnemosyne.ingestion.layout.lines import Line

WIDTH = 612.0
HEIGHT = 792.0
CHAR = 5.0  # every character 5 points wide


def positioned(
    text: str,
    y: float,
    *,
    x0: float = 40.0,
    page: int = 1,
    bold: bool = False,
    gaps: dict[str, float] | None = None,
) -> Line:
    """A line whose characters are CHAR wide, except that a space runs on to the x in `gaps`
    (keyed by the index of the word after it: {"at_5": 400.0})."""
    gaps = gaps or {}
    edges = array("f")
    x = x0
    words = text.split(" ")
    out = []
    for index, word in enumerate(words):
        if index:
            edges.append(x)
            out.append(" ")
            target = gaps.get(f"at_{index}")
            x = target if target is not None else x + CHAR
        for char in word:
            edges.append(x)
            out.append(char)
            x += CHAR
    edges.append(x)
    return Line(page=page, text="".join(out), x0=x0, y0=y, x1=x, y1=y + 10, size=10, bold=bold, edges=edges)


def row(label: str, numbers: list[str], y: float, *, columns: tuple[float, ...] = (400.0, 500.0)) -> Line:
    """A statement row: a label, then numbers right-aligned on each column's edge."""
    text = " ".join([label, *numbers])
    positions = {}
    words = len(label.split(" "))
    for number, right in zip(numbers, columns, strict=True):
        positions[f"at_{words}"] = right - CHAR * len(number)
        words += len(number.split(" "))
    return positioned(text, y, gaps=positions)


def statement() -> list[Line]:
    return [
        positioned("ACME CORPORATION", 740, x0=250, bold=True),
        positioned("CONSOLIDATED BALANCE SHEETS", 726, x0=236, bold=True),
        positioned("(In millions)", 712, x0=275),
        positioned("2019", 690, x0=380, bold=True),
        positioned("2018", 690, x0=480, bold=True),
        positioned("Current assets:", 674),
        row("Cash and cash equivalents", ["$ 5,794", "$ 4,225"], 660),
        row("Inventories", ["32", "43"], 646),
        row("Total current assets", ["7,292", "(6,106)"], 632),
        positioned("The accompanying notes are an integral part of these statements.", 600),
    ]


def test_cells_are_cut_at_wide_gaps_and_a_dollar_sign_joins_its_number() -> None:
    cells = cells_of(row("Cash and cash equivalents", ["$ 5,794", "$ 4,225"], 660))
    assert [cell.text for cell in cells] == ["Cash and cash equivalents", "$ 5,794", "$ 4,225"]


def test_numbers_are_recognised_in_the_forms_statements_print_them() -> None:
    for text in ("5,794", "$5,794", "(1,234)", "$(454)", "12.5%", "—", "0.36", "n/a"):
        assert is_number(text), text
    for text in ("Note 18", "2019 and 2018", "Total"):
        assert not is_number(text), text


def test_a_statement_without_rules_is_read_with_its_title_unit_and_column_years() -> None:
    (table,) = find_tables(statement(), WIDTH)
    assert table.heading == "ACME CORPORATION CONSOLIDATED BALANCE SHEETS"
    assert table.unit == "(In millions)"
    assert table.header == ["", "2019", "2018"]
    assert table.rows == [
        ["Current assets:", "", ""],
        ["Cash and cash equivalents", "$ 5,794", "$ 4,225"],
        ["Inventories", "32", "43"],
        ["Total current assets", "7,292", "(6,106)"],
    ]


def test_a_paragraph_is_not_a_table_and_prose_beside_numbers_is_not_either() -> None:
    prose = [
        positioned(f"this line of running text goes on and on as prose does {n}", 700 - 14 * n)
        for n in range(6)
    ]
    assert find_tables(prose, WIDTH) == []
    beside = [
        row(
            f"and the sentence of the paragraph carries on over here {n}",
            ["91"],
            700 - 14 * n,
            columns=(500.0,),
        )
        for n in range(5)
    ]
    assert find_tables(beside, WIDTH) == []


def test_the_statement_becomes_a_markdown_table_under_its_title_which_is_its_section() -> None:
    laid = lay_out([statement()], [HEIGHT], widths=[WIDTH])
    assert "CONSOLIDATED BALANCE SHEETS (In millions)\n|  | 2019 | 2018 |\n|---|---|---|" in laid.text
    assert "| Inventories | 32 | 43 |" in laid.text
    (heading,) = [heading for heading in laid.headings if "BALANCE" in heading.title]
    assert heading.title == "ACME CORPORATION CONSOLIDATED BALANCE SHEETS"
    assert laid.text.index("ACME") == heading.offset
    # The header row is not a heading, and each row keeps its line's box.
    assert not any(heading.title in ("2019", "2018") for heading in laid.headings)
    row_start = laid.text.index("| Inventories")
    (box,) = [box for box in laid.boxes if box.start == row_start]
    assert (box.y0, box.y1) == (646, 656)


def test_headers_over_two_columns_head_each_of_them() -> None:
    lines = [
        positioned("Three Months Ended", 700, x0=370),
        positioned("July 1, 2023", 688, x0=350),
        positioned("June 25, 2022", 688, x0=440),
        row("Net sales", ["81,797", "82,959"], 670, columns=(410.0, 500.0)),
        row("Cost of sales", ["45,384", "47,074"], 656, columns=(410.0, 500.0)),
    ]
    (table,) = find_tables(lines, WIDTH)
    assert table.header == ["", "Three Months Ended July 1, 2023", "Three Months Ended June 25, 2022"]


def test_a_page_of_numbers_alone_keeps_its_title_and_headers_to_be_found_by() -> None:
    lines = [
        positioned("QUARTERLY SHIPMENTS", 740, x0=230, bold=True),
        positioned("(In thousands)", 726, x0=265),
        positioned("2023", 700, x0=380, bold=True),
        positioned("2022", 700, x0=480, bold=True),
        *(row("", [f"{n},250", f"{n},100"], 680 - 14 * n) for n in range(1, 6)),
    ]
    laid = lay_out([lines], [HEIGHT], widths=[WIDTH])
    assert laid.text.startswith("QUARTERLY SHIPMENTS (In thousands)\n|  | 2023 | 2022 |")
    assert [heading.title for heading in laid.headings] == ["QUARTERLY SHIPMENTS"]
