"""PDF text extraction libraries side by side on the manuals: speed, word boundaries, ligatures.

Each library's plain text extraction, page by page, without Mnemosyne's layout analysis: PDFium
(pypdfium2, `get_text_range`), pypdf (`extract_text`) and pdfplumber (`extract_text`, on
pdfminer.six). Words run together are counted as tokens of more than 25 letters; ligatures as
characters U+FB00 to U+FB06 left in the text. Seconds are the medians of ROUNDS rounds per manual.
"""

from __future__ import annotations

import io
import re
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks.documents_results import ExtractorRun

ROUNDS = 3
_RUN_TOGETHER = re.compile(r"[^\W\d_]{26,}")
_LIGATURE = re.compile("[\ufb00-\ufb06]")


def _pdfium(data: bytes) -> list[str]:
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(data)
    try:
        pages = []
        for page in document:
            textpage = page.get_textpage()
            pages.append(textpage.get_text_range())
            textpage.close()
            page.close()
        return pages
    finally:
        document.close()


def _pypdf(data: bytes) -> list[str]:
    from pypdf import PdfReader

    return [page.extract_text() or "" for page in PdfReader(io.BytesIO(data)).pages]


def _pdfplumber(data: bytes) -> list[str]:
    import pdfplumber

    with pdfplumber.open(io.BytesIO(data)) as pdf:
        return [page.extract_text() or "" for page in pdf.pages]


EXTRACTORS: dict[str, Callable[[bytes], list[str]]] = {
    "pypdfium2 (PDFium)": _pdfium,
    "pypdf": _pypdf,
    "pdfplumber (pdfminer.six)": _pdfplumber,
}


def run(manuals: list[Path], log: Callable[[str], None]) -> list[ExtractorRun]:
    runs = []
    for name, extract in EXTRACTORS.items():
        log(f"extracting the manuals' text with {name}")
        for path in manuals:
            data = path.read_bytes()
            seconds, pages = [], []
            for _ in range(ROUNDS):
                started = time.perf_counter()
                pages = extract(data)
                seconds.append(time.perf_counter() - started)
            text = "\n".join(pages)
            runs.append(
                ExtractorRun(
                    library=name,
                    manual=path.name,
                    pages=len(pages),
                    seconds=statistics.median(seconds),
                    run_together=len(_RUN_TOGETHER.findall(text)),
                    ligatures=len(_LIGATURE.findall(text)),
                )
            )
    return runs
