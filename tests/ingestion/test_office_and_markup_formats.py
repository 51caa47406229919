"""The formats beyond text, web pages, PDF and Word, each from a real file (tests/fixtures/formats,
see its README for where each came from): slide decks, spreadsheets, CSV, e-books,
reStructuredText, AsciiDoc and source code; and what broken or hostile files of them get."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Any

import pytest

from mnemosyne.ingestion import formats
from mnemosyne.ingestion.documents import ParsedDocument, UnreadableFile
from mnemosyne.ingestion.markdown_lines import iter_markdown_headings
from mnemosyne.ingestion.parsing import parse_bytes

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "formats"


def parse(name: str) -> ParsedDocument:
    return parse_bytes((FIXTURES / name).read_bytes(), filename=name)


def headings(text: str) -> list[str]:
    return [heading.title for heading in iter_markdown_headings(text)]


def test_a_slide_deck_is_one_section_per_slide_with_its_notes_and_tables() -> None:
    deck = parse("debian-ids.pptx")  # written by LibreOffice Impress
    assert deck.item_type == "pptx" and deck.title == "Users and groups in Debian"
    assert headings(deck.text) == [
        "Slide 1: Users and groups in Debian",
        "Slide 2: Static ids: root and daemon",
        "Slide 3: Dynamically allocated ids",
        "Slide 4: The nobody user",
        "Slide 5: Id ranges at a glance",
    ]
    assert "- daemon (1): unprivileged daemons that need to write files to disk" in deck.text
    assert "Speaker notes: Files owned by nobody are a sign that something went wrong." in deck.text
    assert "| 65534 | nobody |" in deck.text


def test_a_workbook_is_a_section_per_sheet_holding_a_table() -> None:
    book = parse("ubuntu-releases.xlsx")  # written by LibreOffice Calc
    assert book.item_type == "xlsx" and headings(book.text) == ["Sheet: ubuntu"]
    lines = book.text.splitlines()
    assert lines[2].startswith("| version | codename | series | created | release | eol |")
    assert "| 4.10 | Warty Warthog | warty | 2004-03-05 | 2004-10-20 | 2006-04-30 |" in book.text


def test_a_csv_file_is_a_table() -> None:
    table = parse("debian-releases.csv")
    assert table.item_type == "csv"
    assert (
        table.text.splitlines()[0]
        == "| version | codename | series | created | release | eol | eol-lts | eol-elts |"
    )
    assert "| 7 | Wheezy | wheezy |" in table.text


def test_semicolon_separated_and_legacy_encoded_csv() -> None:
    data = "Name;Stadt\nMüller;Köln\nSchäfer;Düsseldorf\n".encode("cp1252")
    table = parse_bytes(data, filename="kunden.csv")
    assert table.text.splitlines() == [
        "| Name | Stadt |",
        "| --- | --- |",
        "| Müller | Köln |",
        "| Schäfer | Düsseldorf |",
    ]


def test_an_e_book_is_read_chapter_by_chapter() -> None:
    book = parse("users-and-groups.epub")  # written by LibreOffice Writer from Debian's HTML
    assert book.item_type == "epub" and book.title == "Users and Groups in the Debian System"
    assert headings(book.text) == [
        "Users and Groups in the Debian System",
        "Chapter 1. Introduction",
        "Chapter 2. Users and Groups",
    ]
    assert "client is performed as user nobody on the server." in book.text


def test_restructured_text_sections_become_headings() -> None:
    document = parse("email-architecture.rst")  # from CPython's source tree
    assert document.item_type == "rst" and document.title == "email Package Architecture"
    assert {"Overview", "The Model", "Message Lifecycle", "Handling Binary Data"} <= set(
        headings(document.text)
    )


def test_restructured_text_cannot_read_files_or_inject_markup() -> None:
    source = (
        b"Title\n=====\n\n.. include:: /etc/passwd\n\n"
        b".. raw:: html\n\n   <script>alert(1)</script>\n\nBody text.\n"
    )
    document = parse_bytes(source, filename="hostile.rst")
    assert "root:" not in document.text and "script" not in document.text and "Body text." in document.text


def test_asciidoc_headings_and_listing_blocks() -> None:
    document = parse("jetty-readme.adoc")  # from Eclipse Jetty
    assert document.item_type == "asciidoc" and document.title == "ECLIPSE JETTY"
    assert headings(document.text)[:2] == ["ECLIPSE JETTY", "Quick Setup"]
    # A listing block is code, its `$` lines not headings, and kept whole.
    assert "```\n$ export JETTY_HOME=/path/to/jetty-home" in document.text


def test_source_code_sections_are_its_symbols() -> None:
    module = parse("textwrap.py")  # from CPython's standard library
    assert module.item_type == "code" and not module.markdown
    titles = [(heading.level, heading.title) for heading in module.headings]
    assert (1, "TextWrapper") in titles and (2, "_wrap_chunks") in titles
    assert {(1, "wrap"), (1, "fill"), (1, "dedent"), (1, "indent"), (1, "shorten")} <= set(titles)
    first = module.headings[0]
    assert module.text[first.offset :].startswith("class TextWrapper")


@pytest.mark.parametrize(
    ("filename", "source", "expected"),
    [
        (
            "server.go",
            b"package main\ntype Server struct{}\nfunc (s *Server) Start() error { return nil }\n",
            ["Server", "Server.Start"],
        ),
        (
            "lib.rs",
            b"struct A;\nimpl Display for A { fn fmt(&self) {} }\n",
            ["A", "impl Display for A", "fmt"],
        ),
        (
            "app.ts",
            b"export interface Foo { a: string }\nexport class Bar { run(): void {} }\n",
            ["Foo", "Bar", "run"],
        ),
        ("A.java", b"public class A { public A() {} void m() {} }\n", ["A", "A", "m"]),
        ("app.js", b"function f() {}\nclass C { g() {} }\n", ["f", "C", "g"]),
    ],
)
def test_other_languages(filename: str, source: bytes, expected: list[str]) -> None:
    assert [heading.title for heading in parse_bytes(source, filename=filename).headings] == expected


def test_code_is_walked_into_code_libraries_only() -> None:
    assert ".py" in formats.suffixes_for("code") and ".py" not in formats.suffixes_for("documentation")
    assert ".pptx" in formats.suffixes_for("documentation") and ".pptx" in formats.suffixes_for("code")


@pytest.mark.parametrize("name", ["deck.pptx", "book.xlsx", "novel.epub"])
def test_a_corrupt_office_file_is_unreadable_with_a_reason(name: str) -> None:
    with pytest.raises(UnreadableFile, match="not a"):
        parse_bytes(b"PK\x03\x04 this is not really an archive", filename=name)


@pytest.mark.parametrize("name", ["deck.pptx", "book.xlsx", "novel.epub"])
def test_a_zip_bomb_is_refused_before_it_is_unpacked(name: str, settings: Any) -> None:
    settings.INGEST_MAX_UNPACKED_BYTES = 1024 * 1024
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", b"\0" * (2 * 1024 * 1024))
    assert len(buffer.getvalue()) < 20_000  # two megabytes of zeros deflate to a few kilobytes
    with pytest.raises(UnreadableFile, match="too large once unpacked"):
        parse_bytes(buffer.getvalue(), filename=name)
