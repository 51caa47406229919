"""Chunking: pure functions, checked without a database."""

from __future__ import annotations

import itertools
import random
import time

import pytest

from mnemosyne.ingestion.chunking import SECTION_SEPARATOR, ChunkSpan, chunk_text
from mnemosyne.ingestion.markdown_lines import iter_markdown_headings
from mnemosyne.text.normalising import normalise_text


def count_words(text: str) -> int:
    return len(text.split())


def chunk(
    text: str, *, max_tokens: int = 50, overlap_tokens: int = 0, markdown: bool = True
) -> list[ChunkSpan]:
    return chunk_text(
        text,
        max_tokens=max_tokens,
        overlap_tokens=overlap_tokens,
        count_tokens=count_words,
        markdown=markdown,
    )


def assert_invariants(text: str, chunks: list[ChunkSpan], max_tokens: int, *, markdown: bool = True) -> None:
    covered = bytearray(len(text))
    headings = list(iter_markdown_headings(text)) if markdown else []
    heading_starts = [h.line_start for h in headings]
    on_heading_lines = bytearray(len(text))
    for heading in headings:
        on_heading_lines[heading.line_start : heading.line_end] = b"\x01" * (
            heading.line_end - heading.line_start
        )
    for previous, current in itertools.pairwise(chunks):
        assert previous.char_start <= current.char_start
        assert previous.char_end < current.char_end
    for c in chunks:
        assert text[c.char_start : c.char_end] == c.text
        assert c.text and c.text == c.text.strip()
        assert c.token_count == count_words(c.text)
        assert c.token_count <= max_tokens or len(c.text.split()) == 1
        # A chunk holds one section, after any bare headings (sections of nothing but a heading).
        inner = [h for h in heading_starts if c.char_start < h < c.char_end]
        if inner:
            assert all(text[i].isspace() or on_heading_lines[i] for i in range(c.char_start, inner[-1])), (
                "a chunk spans two sections"
            )
        covered[c.char_start : c.char_end] = b"\x01" * (c.char_end - c.char_start)
    uncovered = [i for i, ch in enumerate(text) if not ch.isspace() and not covered[i]]
    assert not uncovered, f"text not in any chunk at {uncovered[:5]}"


def sentences(count: int, words_each: int = 5, word: str = "word") -> str:
    return " ".join(" ".join([word] * (words_each - 1)) + " end." for _ in range(count))


# normalise_text


def test_it_turns_crlf_and_lone_cr_into_newlines() -> None:
    assert normalise_text("one\r\ntwo\rthree") == "one\ntwo\nthree"


def test_it_strips_the_bom_and_control_characters_but_keeps_tabs() -> None:
    assert normalise_text("\ufeffa\x00b\x07c\td\x1b") == "abc\td"


def test_it_removes_trailing_whitespace_and_collapses_blank_runs() -> None:
    assert normalise_text("  \n\nfirst  \t\n \n\n\n\nsecond\u00a0\n\n") == "first\n\nsecond"


# chunk_text: structure


def test_empty_or_whitespace_input_gives_no_chunks() -> None:
    assert chunk("") == []
    assert chunk("   \n\n  \n", markdown=False) == []


def test_it_keeps_the_heading_path_and_pops_deeper_levels() -> None:
    text = (
        "# Design\n\nintro\n\n## Naming\n\nnames\n\n### Deep\n\ndeep\n\n## Errors\n\nerrors\n\n# Other\n\nx"
    )
    paths = [c.section_path for c in chunk(text)]
    sep = SECTION_SEPARATOR
    assert paths == [
        "Design",
        f"Design{sep}Naming",
        f"Design{sep}Naming{sep}Deep",
        f"Design{sep}Errors",
        "Other",
    ]


def test_the_heading_line_belongs_to_its_sections_first_chunk() -> None:
    chunks = chunk("Preamble text.\n\n## Setup ##\n\nInstall it.")
    assert [(c.section_path, c.text) for c in chunks] == [
        ("", "Preamble text."),
        ("Setup", "## Setup ##\n\nInstall it."),
    ]


def test_a_heading_is_glued_to_the_first_sentences_of_a_paragraph_too_big_to_join_whole() -> None:
    text = "## Title\n\n" + sentences(3, words_each=4)  # 12 words fit alone, not with the heading
    chunks = chunk(text, max_tokens=12)
    assert chunks[0].text == "## Title\n\nword word word end. word word word end."
    assert_invariants(text, chunks, 12)


def test_headings_with_no_body_join_the_content_that_follows_them() -> None:
    chunks = chunk("# Only\n\n## Empty\n\n# Next\n\nbody")
    assert [(c.section_path, c.text) for c in chunks] == [("Next", "# Only\n\n## Empty\n\n# Next\n\nbody")]


def test_a_last_heading_with_no_body_is_still_a_chunk() -> None:
    chunks = chunk("# First\n\nbody\n\n# Last")
    assert [c.text for c in chunks] == ["# First\n\nbody", "# Last"]


def test_code_fences_are_not_treated_as_headings() -> None:
    text = "# Real\n\n```python\n# not a heading\n\nx = 1\n```\n\n~~~\n## nor this\n~~~\n\nafter"
    chunks = chunk(text)
    assert [c.section_path for c in chunks] == ["Real"]
    assert [h.title for h in iter_markdown_headings(text)] == ["Real"]


def test_a_fenced_block_stays_in_one_chunk_across_its_blank_lines() -> None:
    fence = "```\nfirst line\n\nsecond line\n```"
    chunks = chunk(f"intro words here\n\n{fence}\n\noutro", max_tokens=6)
    assert fence in [c.text for c in chunks]


def test_a_fenced_block_larger_than_the_limit_is_split() -> None:
    text = "```\n" + "\n\n".join(["a b c"] * 10) + "\n```"
    chunks = chunk(text, max_tokens=7)
    assert len(chunks) > 1
    assert_invariants(text, chunks, 7)


def test_plain_text_mode_ignores_hashes() -> None:
    chunks = chunk("# not a heading\n\ntext", markdown=False)
    assert [(c.section_path, c.text) for c in chunks] == [("", "# not a heading\n\ntext")]


def test_hashtags_and_headings_without_a_space_are_body_text() -> None:
    assert [c.section_path for c in chunk("#tag\n\n####### seven")] == [""]


# chunk_text: sizes


def test_it_packs_whole_paragraphs_greedily() -> None:
    text = "\n\n".join(["one two three"] * 5)
    chunks = chunk(text, max_tokens=7, markdown=False)
    assert [c.text for c in chunks] == ["one two three\n\none two three"] * 2 + ["one two three"]


def test_no_chunk_exceeds_max_tokens() -> None:
    text = "\n\n".join(sentences(n, words_each=n + 1) for n in range(1, 12))
    for max_tokens in (3, 8, 20, 100):
        chunks = chunk(text, max_tokens=max_tokens, overlap_tokens=2)
        assert max(c.token_count for c in chunks) <= max_tokens
        assert_invariants(text, chunks, max_tokens)


def test_a_giant_paragraph_is_split_at_sentences() -> None:
    text = sentences(20)
    chunks = chunk(text, max_tokens=12, markdown=False)
    assert all(c.text.endswith("end.") for c in chunks)
    assert_invariants(text, chunks, 12, markdown=False)


def test_a_giant_sentence_is_split_at_words() -> None:
    text = " ".join(["word"] * 1000) + "."
    chunks = chunk(text, max_tokens=64, overlap_tokens=8, markdown=False)
    assert len(chunks) >= 1000 // 64
    assert_invariants(text, chunks, 64, markdown=False)


def test_a_word_larger_than_the_limit_is_a_chunk_of_its_own_and_terminates() -> None:
    text = "small words\n\n" + "x" * 10_000 + "\n\nmore small words"
    chunks = chunk_text(
        text, max_tokens=4, overlap_tokens=3, count_tokens=lambda s: len(s) // 4 + 1, markdown=False
    )
    assert "x" * 10_000 in [c.text for c in chunks]
    assert chunks[-1].text.endswith("words")


def test_it_respects_the_limit_when_token_counts_are_not_additive() -> None:
    def counter(text: str) -> int:  # a blank line costs a token, as with real tokenizers
        return len(text.split()) + text.count("\n\n")

    text = "\n\n".join(["a b c"] * 30)
    chunks = chunk_text(text, max_tokens=10, overlap_tokens=4, count_tokens=counter, markdown=False)
    assert all(c.token_count == counter(c.text) <= 10 for c in chunks)
    assert chunks[-1].char_end == len(text)


def test_it_drops_the_overlap_rather_than_exceed_the_limit() -> None:
    def counter(text: str) -> int:
        return len(text.split()) + 2 * text.count("\n\n")

    text = "\n\n".join(["a b c d. e f."] * 5)
    chunks = chunk_text(text, max_tokens=9, overlap_tokens=2, count_tokens=counter, markdown=False)
    assert [c.text for c in chunks] == ["a b c d. e f."] * 5


def test_it_rejects_a_nonsensical_limit() -> None:
    with pytest.raises(ValueError, match="max_tokens"):
        chunk("text", max_tokens=0)
    with pytest.raises(ValueError, match="overlap_tokens"):
        chunk("text", overlap_tokens=-1)


# chunk_text: overlap


def test_overlap_repeats_the_trailing_sentences_of_the_previous_chunk() -> None:
    text = "\n\n".join([sentences(3, word="p1"), sentences(3, word="p2"), sentences(3, word="p3")])
    chunks = chunk(text, max_tokens=20, overlap_tokens=5, markdown=False)
    assert len(chunks) > 1
    for previous, current in itertools.pairwise(chunks):
        repeated = text[current.char_start : previous.char_end]
        assert repeated and previous.text.endswith(repeated)
        assert count_words(repeated) <= 5
        assert current.char_end > previous.char_end


def test_overlap_zero_gives_disjoint_chunks() -> None:
    text = sentences(30)
    chunks = chunk(text, max_tokens=12, markdown=False)
    assert all(a.char_end < b.char_start for a, b in itertools.pairwise(chunks))


def test_overlap_never_crosses_sections() -> None:
    text = "# A\n\n" + sentences(3) + "\n\n# B\n\n" + sentences(3)
    chunks = chunk(text, max_tokens=100, overlap_tokens=10)
    assert [c.text.split("\n")[0] for c in chunks] == ["# A", "# B"]


def test_overlap_as_large_as_the_limit_still_makes_progress() -> None:
    text = sentences(50)
    chunks = chunk(text, max_tokens=10, overlap_tokens=10, markdown=False)
    assert chunks[-1].char_end == len(text)
    assert all(b.char_start < a.char_end for a, b in itertools.pairwise(chunks))
    assert_invariants(text, chunks, 10, markdown=False)


# chunk_text: at scale


def random_markdown(rng: random.Random) -> str:
    words = ["alpha", "beta", "gamma", "delta", "x" * rng.randint(1, 40), "é", "word!", "end.", "`code`"]
    blocks: list[str] = []
    for _ in range(rng.randint(0, 25)):
        kind = rng.random()
        if kind < 0.2:
            blocks.append("#" * rng.randint(1, 7) + rng.choice([" ", "", "  "]) + rng.choice(words))
        elif kind < 0.3:
            fence = rng.choice(["```", "~~~", "````"])
            body = "\n".join(rng.choice(["# fake", "", "x = 1", "  y()", "## also fake"]) for _ in range(6))
            blocks.append(f"{fence}\n{body}\n{fence if rng.random() < 0.9 else ''}")
        else:
            sentence_count = rng.randint(1, 12)
            blocks.append(
                " ".join(
                    " ".join(rng.choice(words) for _ in range(rng.randint(1, 30)))
                    + rng.choice([".", "!", "?", ""])
                    for _ in range(sentence_count)
                )
            )
    separators = ["\n", "\n\n", "\n\n\n", "\r\n\r\n", "  \n\t\n"]
    return "".join(block + rng.choice(separators) for block in blocks)


@pytest.mark.parametrize("seed", range(300))
def test_random_documents_keep_every_invariant(seed: int) -> None:
    rng = random.Random(seed)
    text = normalise_text(random_markdown(rng))
    max_tokens = rng.choice([1, 2, 5, 16, 64, 400])
    overlap_tokens = rng.choice([0, 0, 1, 3, max_tokens // 4, max_tokens])
    markdown = rng.random() < 0.85
    chunks = chunk(text, max_tokens=max_tokens, overlap_tokens=overlap_tokens, markdown=markdown)
    assert_invariants(text, chunks, max_tokens, markdown=markdown)


def test_a_megabyte_of_markdown_chunks_in_linear_time_not_quadratic() -> None:
    rng = random.Random(7)
    parts: list[str] = []
    while sum(map(len, parts)) < 1_000_000:
        parts.append(random_markdown(rng))
    text = normalise_text("\n\n".join(parts))
    started = time.perf_counter()
    chunks = chunk(text, max_tokens=256, overlap_tokens=32)
    # A guard against work quadratic in the text (minutes for a megabyte), not a speed target: it
    # takes about 0.2 s here, and the bound leaves a busy machine fifty times that.
    assert time.perf_counter() - started < 10.0
    assert chunks[-1].char_end == len(text)


def test_setext_headings_are_headings_of_both_kinds() -> None:
    # Once: `Title\n=====` gave no section at all.
    text = "Install\n=======\n\nRun the installer.\n\nOn Linux\n--------\n\nUse the package.\n"
    headings = list(iter_markdown_headings(text))
    assert [(h.level, h.title) for h in headings] == [(1, "Install"), (2, "On Linux")]
    assert text[headings[1].line_start : headings[1].line_end] == "On Linux\n--------"
    sections = [c.section_path for c in chunk(text, max_tokens=6)]
    assert sections[-1] == f"Install{SECTION_SEPARATOR}On Linux"


@pytest.mark.parametrize(
    "text",
    [
        "Some prose.\n\n---\n\nMore prose.",  # a thematic break after a blank line
        "- a list item\n---",  # a list item is not a title
        "    indented code\n====",  # nor is indented code
        "```\nTitle\n=====\n```",  # nor anything inside a fence
        "First line of a paragraph\nsecond line\n---",  # only one-line paragraphs become headings here
    ],
)
def test_what_is_not_a_setext_heading(text: str) -> None:
    assert list(iter_markdown_headings(text)) == []
