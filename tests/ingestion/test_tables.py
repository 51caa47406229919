"""Tables in a document's text: kept whole with their caption, or cut between rows with the header
repeated. Pure."""

from __future__ import annotations

from mnemosyne.ingestion.chunking import chunk_text
from mnemosyne.ingestion.tables import header_end, markdown_table


def words(text: str) -> int:
    return len(text.split())


TABLE = markdown_table(
    [["Berth", "Draught", "Length"], *[[f"Quay {n}", f"{n}.5", f"{100 + n}"] for n in range(12)]]
)
DOCUMENT = (
    f"# Berths\n\nThe harbour has twelve quays.\n\nTable 1: Limits per berth\n\n{TABLE}\n\nAsk the master."
)


def test_a_pipe_table_is_recognised_under_its_caption() -> None:
    text = f"Table 1: Limits\n{TABLE}"
    assert header_end(text, 0, len(text)) == text.index("| Quay 0") - 1
    assert header_end("| not | a table |", 0, 17) is None
    assert header_end("plain\ntext", 0, 10) is None


def test_a_table_that_fits_is_one_chunk_with_its_caption() -> None:
    chunks = chunk_text(DOCUMENT, max_tokens=200, overlap_tokens=0, count_tokens=words, markdown=True)
    (table,) = [chunk for chunk in chunks if "| Quay 0 |" in chunk.text]
    assert table.text.count("| Quay") == 12 and "Table 1: Limits per berth" in table.text


def test_a_long_table_is_cut_between_rows_with_the_caption_and_header_repeated() -> None:
    chunks = chunk_text(DOCUMENT, max_tokens=40, overlap_tokens=0, count_tokens=words, markdown=True)
    parts = [chunk for chunk in chunks if "| Quay" in chunk.text]
    assert len(parts) > 2
    rows = [line for part in parts for line in part.text.splitlines() if line.startswith("| Quay")]
    assert rows == [f"| Quay {n} | {n}.5 | {100 + n} |" for n in range(12)]
    for part in parts:
        assert part.text.startswith("Table 1: Limits per berth")
        assert "| Berth | Draught | Length |\n|---|---|---|" in part.text
        assert part.token_count <= 40
        assert DOCUMENT[part.char_start : part.char_end] in part.text


def test_a_title_or_unit_line_right_above_a_table_heads_every_part_of_it() -> None:
    for caption in ("Consolidated Balance Sheets", "(In millions, except per share data)", "Berths are:"):
        document = f"# Harbour\n\nThe harbour has twelve quays.\n\n{caption}\n\n{TABLE}\n\nAsk the master."
        chunks = chunk_text(document, max_tokens=40, overlap_tokens=0, count_tokens=words, markdown=True)
        parts = [chunk for chunk in chunks if "| Quay" in chunk.text]
        assert len(parts) > 2 and all(part.text.startswith(caption) for part in parts), caption
    # A sentence is not a caption: it stays with the text before the table.
    document = f"Quays are listed below for the master to read.\n\n{TABLE}"
    chunks = chunk_text(document, max_tokens=40, overlap_tokens=0, count_tokens=words, markdown=True)
    assert not any(
        chunk.text.startswith("Quays are listed") and "| Quay 11" in chunk.text for chunk in chunks
    )
