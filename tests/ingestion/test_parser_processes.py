"""Every parse runs in a parser child under memory and CPU-time bounds: files made to hurt a parser
are refused in one line within seconds; a parser that runs out of its memory or its CPU time fails
only that document, with the bound it met named, and the pool's other parses go on; a child has no
network."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from typing import Any

import pytest

from mnemosyne.ingestion.documents import DocumentRejected
from mnemosyne.ingestion.parser_processes import ParserFailed, ParserPool, limits, out_of_memory
from mnemosyne.ingestion.parsers import spreadsheets
from mnemosyne.ingestion.parsing import parse_bytes, parse_here
from tests.ingestion.hostile_files import IN_MEMORY, html_nested
from tests.ingestion.test_pdf_documents import scanned

pytestmark = pytest.mark.slow  # parser children are processes

REASONS = {
    "bomb.docx": "too large once unpacked",
    "laughs.xlsx": "no readable cells",
    "pages.pdf": "no extractable text",
    "loop.pdf": "cannot parse pdf file",
    "nested.html": "nest more than 1000 deep (INGEST_MAX_NESTING)",
    "escaping.epub": "not a readable EPUB file",
}


@pytest.mark.parametrize("name", sorted(IN_MEMORY))
def test_a_hostile_file_is_refused_in_one_line_within_seconds(name: str) -> None:
    data = IN_MEMORY[name]()
    started = time.monotonic()
    with pytest.raises(DocumentRejected) as refused:
        parse_bytes(data, filename=name)
    assert time.monotonic() - started < 60
    assert REASONS[name] in str(refused.value) and "\n" not in str(refused.value)


def pool(**overrides: Any) -> ParserPool:
    return ParserPool(2, {**limits(), **overrides})


def counting_starts(parsers: ParserPool, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    started: list[int] = []
    start = parsers._start

    def counted() -> Any:
        started.append(1)
        return start()

    monkeypatch.setattr(parsers, "_start", counted)
    return started


ROWS = b"".join(b"%d,%s\n" % (number, b"cell " * 8) for number in range(600_000))  # 28 MB of cells


def test_a_parser_out_of_memory_fails_its_document_only(monkeypatch: pytest.MonkeyPatch) -> None:
    parsers = pool(INGEST_PARSE_MEMORY_MB=256)
    started = counting_starts(parsers, monkeypatch)
    assert parsers.parse(b"# Before\n\ntext\n", "before.md").title == "Before"
    with pytest.raises(
        ParserFailed, match=r"^the parser ran out of its memory budget \(256 MiB, INGEST_PARSE_MEMORY_MB\)$"
    ):
        parsers.parse(ROWS, "big.csv")
    # The warm child ran out first; the document was tried again in a fresh one, then failed.
    assert len(started) == 2
    assert parsers.parse(b"# Still here\n\ntext\n", "after.md").title == "Still here"
    # A fresh child that runs out has no earlier parse to blame: no second try.
    cold = pool(INGEST_PARSE_MEMORY_MB=256)
    started = counting_starts(cold, monkeypatch)
    with pytest.raises(ParserFailed, match="memory budget"):
        cold.parse(ROWS, "big.csv")
    assert len(started) == 1


def test_running_out_of_memory_is_raised_as_it_is_not_as_an_unreadable_file(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Nothing is allocated for a reason's text while the failed parse still holds the heap.
    def exhausted(data: bytes, *, filename: str) -> Any:
        raise MemoryError

    monkeypatch.setattr(spreadsheets, "parse_csv", exhausted)
    with pytest.raises(MemoryError):
        parse_here(b"a,b\n", filename="rows.csv")


def test_a_native_librarys_allocation_failure_is_running_out_of_memory() -> None:
    # ONNX Runtime (the OCR models) says so as a RuntimeError naming std::bad_alloc, which the PDF
    # parser wraps in its own refusal.
    native = RuntimeError("[ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : Status Message: std::bad_alloc")
    try:
        try:
            raise native
        except RuntimeError as exc:
            raise DocumentRejected("cannot parse pdf file") from exc
    except DocumentRejected as wrapped:
        assert out_of_memory(wrapped)
    assert out_of_memory(MemoryError())
    assert not out_of_memory(DocumentRejected("cannot parse pdf file: no trailer"))


def test_a_parser_out_of_cpu_time_is_stopped_and_the_other_parse_goes_on() -> None:
    parsers = pool(INGEST_PARSE_CPU_SECONDS=5, INGEST_MAX_NESTING=100_000)
    outcome: dict[str, tuple[str, float]] = {}

    def hog() -> None:
        started = time.monotonic()
        try:
            parsers.parse(html_nested(60_000), "deep.html")
        except ParserFailed as exc:
            outcome["hog"] = (str(exc), time.monotonic() - started)

    thread = threading.Thread(target=hog)
    thread.start()
    time.sleep(1)
    assert parsers.parse(b"# Meanwhile\n\nanother document\n", "meanwhile.md").title == "Meanwhile"
    thread.join(timeout=120)
    reason, seconds = outcome["hog"]
    assert reason == "the parser ran out of its CPU-time budget (INGEST_PARSE_CPU_SECONDS) and was stopped"
    assert seconds < 30


def test_each_page_read_by_ocr_adds_to_the_parses_cpu_time() -> None:
    """A scanned page needs more CPU than the base budget: the page's allowance carries it; without
    the allowance the same parse is stopped."""
    scan = scanned("libtasn1.pdf", [5], 150)
    tight = pool(OCR="auto", INGEST_PARSE_CPU_SECONDS=5, INGEST_PARSE_CPU_SECONDS_PER_PAGE=0)
    with pytest.raises(ParserFailed, match="CPU-time budget"):
        tight.parse(scan, "scan.pdf")
    allowed = pool(OCR="auto", INGEST_PARSE_CPU_SECONDS=5, INGEST_PARSE_CPU_SECONDS_PER_PAGE=120)
    assert allowed.parse(scan, "scan.pdf").ocr_pages == (1,)


def test_a_parser_child_has_no_network() -> None:
    """The child's first act, run in a process of its own: a server on this machine that the test
    reaches is out of the child's reach."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        socket.create_connection(("127.0.0.1", port), timeout=5).close()  # reachable from here
        probe = (
            "import socket\n"
            "from mnemosyne.ingestion.parser_child import _leave_network\n"
            "_leave_network()\n"
            f"try:\n    socket.create_connection(('127.0.0.1', {port}), timeout=5)\n"
            "except OSError as exc:\n    print('refused:', exc)\n"
        )
        done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.stdout.startswith("refused:"), done.stdout + done.stderr
