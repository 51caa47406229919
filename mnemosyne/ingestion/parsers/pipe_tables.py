"""Tables as Markdown pipe tables: the first row is the header. The chunker keeps a table whole or
cuts it between rows with the header repeated (ingestion/tables.py)."""

from __future__ import annotations

from collections.abc import Sequence


def pipe_table(rows: Sequence[Sequence[str]]) -> str:
    """A pipe table of these rows (cells' whitespace collapsed, `|` escaped); "" when all empty."""
    cleaned = [[cell_text(cell) for cell in row] for row in rows]
    if not any(any(row) for row in cleaned):
        return ""
    width = max(len(row) for row in cleaned)
    cleaned = [row + [""] * (width - len(row)) for row in cleaned]
    lines = [_row(cleaned[0]), "|" + " --- |" * width, *(_row(row) for row in cleaned[1:])]
    return "\n".join(lines)


def cell_text(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"
