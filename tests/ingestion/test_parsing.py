"""Parsing uploaded files: pure functions, checked without a database."""

from __future__ import annotations

import pytest

from mnemosyne.ingestion.documents import ParsedDocument, UnreadableFile, UnsupportedFile
from mnemosyne.ingestion.parsing import parse_bytes
from mnemosyne.text.normalising import normalise_text


def test_it_reads_a_text_file_titled_by_its_filename() -> None:
    parsed = parse_bytes(b"Hello there.\r\n", filename="release_notes-2024.txt")
    assert parsed == ParsedDocument(
        title="release notes 2024", item_type="text", text="Hello there.", markdown=False
    )


def test_it_titles_markdown_by_its_first_h1() -> None:
    parsed = parse_bytes(b"Intro\n\n## Sub\n\n# The Title #\n\n# Later", filename="notes.md")
    assert (parsed.title, parsed.item_type, parsed.markdown) == ("The Title", "markdown", True)


def test_an_h1_inside_a_code_fence_is_not_the_title() -> None:
    parsed = parse_bytes(b"```\n# comment\n```\n\ntext", filename="my-notes.markdown")
    assert parsed.title == "my notes"


def test_front_matter_gives_the_title_when_there_is_no_h1_and_is_stripped() -> None:
    data = b'---\nauthor: me\ntitle: "From: Front Matter"\n---\n\n## Body\n\ntext'
    parsed = parse_bytes(data, filename="x.md")
    assert parsed.title == "From: Front Matter"
    assert parsed.text == "## Body\n\ntext"


def test_an_h1_wins_over_front_matter_which_is_stripped_anyway() -> None:
    parsed = parse_bytes(b"---\ntitle: Meta\n---\n# Heading\n\ntext", filename="x.md")
    assert (parsed.title, parsed.text) == ("Heading", "# Heading\n\ntext")


def test_front_matter_without_a_title_falls_back_to_the_filename() -> None:
    parsed = parse_bytes(b"---\ntags: [a]\n---\nbody", filename="design_doc.md")
    assert (parsed.title, parsed.text) == ("design doc", "body")


def test_empty_front_matter_is_stripped_without_swallowing_the_body() -> None:
    parsed = parse_bytes(b"---\n---\nbody\n\n---\n\nmore", filename="x.md")
    assert parsed.text == "body\n\n---\n\nmore"


def test_a_leading_thematic_break_is_not_front_matter() -> None:
    parsed = parse_bytes(b"---\n\nSome text.\n\n---\n\nMore text.", filename="x.md")
    assert parsed.text == "---\n\nSome text.\n\n---\n\nMore text."


def test_front_matter_is_left_alone_in_text_files() -> None:
    parsed = parse_bytes(b"---\ntitle: Meta\n---\n# Heading", filename="plain.txt")
    assert (parsed.title, parsed.text) == ("plain", "---\ntitle: Meta\n---\n# Heading")


def test_it_accepts_a_utf8_bom_and_uppercase_suffix() -> None:
    parsed = parse_bytes("\ufeff# Café\n\nnaïve".encode(), filename="CAFE.MD")
    assert (parsed.title, parsed.text) == ("Café", "# Café\n\nnaïve")


def test_it_rejects_an_unsupported_suffix() -> None:
    with pytest.raises(UnsupportedFile, match=r"unsupported file type '\.numbers'"):
        parse_bytes(b"PK\x03\x04", filename="sheet.numbers")
    with pytest.raises(UnsupportedFile, match="no file extension"):
        parse_bytes(b"text", filename="README")


def test_it_rejects_binary_content_with_nul_bytes() -> None:
    with pytest.raises(UnreadableFile, match="NUL"):
        parse_bytes(b"text\x00\x01\x02", filename="a.txt")


def test_it_rejects_bytes_that_are_text_in_no_encoding() -> None:
    with pytest.raises(UnreadableFile, match="not valid UTF-8"):
        parse_bytes(bytes(range(0x80, 0x100)) * 4 + b"\xff\xfe\x81", filename="a.txt")


@pytest.mark.parametrize(
    ("text", "encoding"),
    [
        ("Café au lait, crème brûlée, déjà vu.", "latin-1"),
        ("He said “hello” – it’s fine…", "cp1252"),
        ("Příliš žluťoučký kůň úpěl ďábelské ódy.", "cp1250"),
        ("Привет, как дела? Это тестовый документ на русском языке.", "cp1251"),
        ("Привет, как дела? Это тестовый документ на русском языке.", "koi8_r"),
        ("これは日本語のテスト文書です。検索エンジンで使います。", "shift_jis"),
        ("这是一个中文测试文档，用于搜索引擎。", "gb18030"),
        ("UTF-16 with its byte order mark: naïve", "utf-16"),
    ],
)
def test_text_in_other_encodings_is_read(text: str, encoding: str) -> None:
    assert parse_bytes(text.encode(encoding), filename="a.txt").text == normalise_text(text)


@pytest.mark.parametrize("data", [b"", b"  \r\n\t\n", b"\xef\xbb\xbf", b"---\ntitle: Only meta\n---\n"])
def test_it_rejects_a_file_that_is_empty_after_normalising(data: bytes) -> None:
    with pytest.raises(UnreadableFile, match="empty file"):
        parse_bytes(data, filename="a.md")


def test_a_setext_title_names_a_markdown_file() -> None:
    parsed = parse_bytes(b"Release notes\n=============\n\nWhat changed.\n", filename="notes.md")
    assert parsed.title == "Release notes"
