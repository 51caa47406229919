"""OCR on scans made here: pages of the Debian manuals rasterised with PDFium into image-only PDFs.

Each page is rendered at 150 and at 300 dpi and saved as a one-page PDF holding only that picture
(what a scanner gives), then ingested's way in: parse_bytes with OCR=auto. Word accuracy is the
share of the words of the page's own text layer (read by the same parser with OCR off) that the OCR
text has, counted as multisets of case-sensitive words (runs of letters and digits, NFKC). Pages/s
is for the parse as a whole: rendering the scan back, recognising, laying out.
"""

from __future__ import annotations

import io
import re
import statistics
import time
import unicodedata
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from benchmarks.documents_results import OcrRun

# (manual, page): prose, lists, code and a table of contents, from five manuals.
PAGES = (
    ("libtasn1.pdf", 6),
    ("libtasn1.pdf", 10),
    ("manual.pdf", 5),
    ("manual.pdf", 8),
    ("fontconfig-user.pdf", 3),
    ("fontconfig-user.pdf", 6),
    ("nettle.pdf", 20),
    ("shared-mime-info-spec.pdf", 4),
)
DPIS = (150, 300)
_WORD = re.compile(r"[^\W_]+")


def words(text: str) -> Counter[str]:
    return Counter(_WORD.findall(unicodedata.normalize("NFKC", text)))


def run_together_share(reference: str, read: str) -> float:
    """The share of the read text's words that are two or more of the reference's words run
    together ("Eachelementhas"): the reference's runs of 2-6 consecutive words, joined, against
    the read words that are not words of the reference."""
    words_in_order = [word.lower() for word in _WORD.findall(unicodedata.normalize("NFKC", reference))]
    known = set(words_in_order)
    joined = {
        "".join(words_in_order[start : start + length])
        for length in range(2, 7)
        for start in range(len(words_in_order) - length + 1)
    }
    read_words = [word.lower() for word in _WORD.findall(unicodedata.normalize("NFKC", read))]
    together = sum(1 for word in read_words if word not in known and word in joined)
    return together / len(read_words) if read_words else 0.0


def split_again(text: str) -> str:
    """The text with its run-together words split, as OCR'd lines are (ingestion/word_splitting.py)."""
    from mnemosyne.ingestion.word_splitting import space_positions

    positions = space_positions(text)
    for position in reversed(positions):
        text = f"{text[:position]} {text[position:]}"
    return text


def word_accuracy(reference: Counter[str], read: Counter[str]) -> float:
    """The share of the reference's words (with their counts) that the read text has."""
    total = sum(reference.values())
    return sum((reference & read).values()) / total if total else 0.0


def scan(path: Path, page: int, dpi: int) -> bytes:
    """A one-page image-only PDF of the page, as a scanner at `dpi` would give it."""
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(str(path))
    try:
        image = document[page - 1].render(scale=dpi / 72).to_pil().convert("RGB")
    finally:
        document.close()
    buffer = io.BytesIO()
    image.save(buffer, "PDF", resolution=dpi)
    return buffer.getvalue()


def page_text(path: Path, page: int) -> str:
    """The page's text as the parser reads its text layer."""
    from mnemosyne.ingestion.parsing import parse_bytes

    parsed = parse_bytes(path.read_bytes(), filename=path.name)
    starts = [*parsed.page_starts, len(parsed.text)]
    return parsed.text[starts[page - 1] : starts[page]]


def run(manuals: dict[str, Path], log: Callable[[str], None]) -> list[OcrRun]:
    from django.conf import settings

    from mnemosyne.ingestion import ocr
    from mnemosyne.ingestion.parsing import parse_bytes

    pages = [(name, page) for name, page in PAGES if name in manuals]
    previous, splitting = settings.OCR, ocr.with_spaces
    try:
        settings.OCR = "off"
        texts = {(name, page): page_text(manuals[name], page) for name, page in pages}
        references = {key: words(text) for key, text in texts.items()}
        settings.OCR = "auto"
        # Read without splitting run-together words, which is then applied to the text read: the
        # same words as within OCR (it acts on runs of letters alone), and no second recognition.
        ocr.with_spaces = lambda text, lefts, rights: (text, lefts, rights)
        runs = []
        for dpi in DPIS:
            log(f"OCR at {dpi} dpi on {len(pages)} scanned pages")
            scans = [scan(manuals[name], page, dpi) for name, page in pages]
            accuracies, unsplit, together, together_unsplit, seconds = [], [], [], [], 0.0
            for (name, page), data in zip(pages, scans, strict=True):
                started = time.perf_counter()
                parsed = parse_bytes(data, filename=f"scan-{page}.pdf")
                split = split_again(parsed.text)
                seconds += time.perf_counter() - started
                accuracies.append(word_accuracy(references[name, page], words(split)))
                unsplit.append(word_accuracy(references[name, page], words(parsed.text)))
                together.append(run_together_share(texts[name, page], split))
                together_unsplit.append(run_together_share(texts[name, page], parsed.text))
            weights = [sum(references[key].values()) for key in pages]
            runs.append(
                OcrRun(
                    dpi=dpi,
                    pages=len(pages),
                    word_accuracy=sum(
                        accuracy * sum(references[key].values())
                        for accuracy, key in zip(accuracies, pages, strict=True)
                    )
                    / sum(sum(references[key].values()) for key in pages),
                    worst_page=min(accuracies),
                    median_page=statistics.median(accuracies),
                    pages_per_second=len(pages) / seconds if seconds else 0.0,
                    word_accuracy_unsplit=sum(a * w for a, w in zip(unsplit, weights, strict=True))
                    / sum(weights),
                    run_together=statistics.fmean(together),
                    run_together_unsplit=statistics.fmean(together_unsplit),
                )
            )
    finally:
        settings.OCR = previous
        ocr.with_spaces = splitting
    return runs
