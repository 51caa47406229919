"""Planning a paged document's chunks: never across a section start, across pages when a section
runs on, citing the pages (first and last) and the section."""

from __future__ import annotations

from mnemosyne.embedding import Embedder
from mnemosyne.ingestion.documents import Heading, ParsedDocument
from mnemosyne.ingestion.parsing import parse_bytes
from mnemosyne.ingestion.planning import plan_chunks, section_starts
from tests.conftest import FIXTURES
from tests.documents import outlined_pdf

FIXTURE_TEXTS = [FIXTURES / "docs" / "backups.md", FIXTURES / "docs" / "onboarding.txt"]


def words(text: str) -> int:
    return len(text.split())


def test_outlined_pdf_chunks_cite_pages_and_section() -> None:
    parsed = parse_bytes(outlined_pdf(), filename="outlined.pdf")
    planned = plan_chunks(parsed, max_tokens=200, overlap_tokens=0, count_tokens=words)
    cited = [
        (chunk.span.page, chunk.span.page_end, chunk.span.section_path, chunk.span.text.split("\n")[0])
        for chunk in planned
    ]
    # "1 Tides" runs from page 1 onto page 2, where "1.1 Barrages" starts.
    assert cited == [
        (1, 2, "1 Tides", "1 Tides"),
        (2, None, "1 Tides › 1.1 Barrages", "1.1 Barrages"),
        (3, None, "2 Power generation", "Turbines turn in the stream. They resemble wind turbines."),
    ]
    for chunk in planned:
        assert parsed.text[chunk.span.char_start : chunk.span.char_end] == chunk.span.text
    # The section is part of what is embedded and indexed.
    assert planned[1].header == "Outlined Report › 1 Tides › 1.1 Barrages"
    # Every chunk carries the boxes of its lines, on its pages.
    for chunk in planned:
        pages = {location[0] for location in chunk.span.locations}
        assert pages == set(range(chunk.span.page or 0, (chunk.span.page_end or chunk.span.page or 0) + 1))


def test_section_paths_nest_by_level_and_close_at_the_same_level() -> None:
    headings = [Heading(0, 1, "A"), Heading(5, 2, "A.1"), Heading(9, 3, "A.1.a"), Heading(12, 2, "A.2")]
    assert section_starts([*headings, Heading(20, 1, "B")]) == [
        (0, "A"),
        (5, "A › A.1"),
        (9, "A › A.1 › A.1.a"),
        (12, "A › A.2"),
        (20, "B"),
    ]


def test_text_before_the_first_heading_has_no_section() -> None:
    text = "Preface text.\n\nChapter one text."
    parsed = ParsedDocument(
        title="Book",
        item_type="pdf",
        text=text,
        markdown=False,
        page_starts=(0,),
        headings=(Heading(text.index("Chapter"), 1, "Chapter one"),),
    )
    planned = plan_chunks(parsed, max_tokens=200, overlap_tokens=0, count_tokens=words)
    assert [(chunk.span.section_path, chunk.span.text) for chunk in planned] == [
        ("", "Preface text."),
        ("Chapter one", "Chapter one text."),
    ]


MIXED_TEXT = """# Café operations — naïve guide

Grinders need calibration every 3.14 days; e.g. the Mazzer-style units (see https://example.com/x?y=1).
Don't over-extract: the shot's yield is 2× the dose. 東京の店舗 use the same rules!

```python
def brew(dose: float) -> float:
    return dose * 2.0
```

## Cleaning

A verylongwordwithoutanybreaksthatgoesonandonandonforalongtimewithoutstopping appears here.
Back-flush daily. Descale monthly. Replace gaskets yearly. """ + " ".join(
    f"Sentence {n} talks about milk steaming, latte art and the grinder's burrs." for n in range(40)
)


def test_counting_from_token_offsets_gives_the_same_chunks_as_tokenizing_each_span(
    embedder: Embedder,
) -> None:
    documents = [
        parse_bytes(MIXED_TEXT.encode(), filename="guide.md"),
        parse_bytes(outlined_pdf(), filename="outlined.pdf"),
        *(parse_bytes(path.read_bytes(), filename=path.name) for path in FIXTURE_TEXTS),
    ]
    # Small windows split the guide at every level: blocks, sentences, lines, words.
    assert (
        len(plan_chunks(documents[0], max_tokens=40, overlap_tokens=10, count_tokens=embedder.count_tokens))
        > 20
    )
    for parsed in documents:
        for max_tokens, overlap in ((40, 10), (200, 40)):
            slow = plan_chunks(
                parsed, max_tokens=max_tokens, overlap_tokens=overlap, count_tokens=embedder.count_tokens
            )
            fast = plan_chunks(
                parsed,
                max_tokens=max_tokens,
                overlap_tokens=overlap,
                count_tokens=embedder.count_tokens,
                locate_tokens=embedder.token_starts,
            )
            assert [chunk.span for chunk in fast] == [chunk.span for chunk in slow]
            for chunk in fast:
                assert chunk.span.token_count == embedder.count_tokens(chunk.span.text)
