"""Turn a file into a ParsedDocument, or say clearly why we cannot: the entry point every caller uses.

The format comes from the file name's suffix (formats.py, the one table of formats); the per-format
code lives in `mnemosyne.ingestion.parsers`. Every parse runs in a parser child process, under
memory and CPU-time bounds and without network (parser_processes.py): the bytes are a stranger's.
"""

from __future__ import annotations

import logging
import time
from dataclasses import replace
from pathlib import PurePath

from mnemosyne.ingestion import formats, ocr, parser_processes
from mnemosyne.ingestion.documents import (
    DocumentRejected,
    ParsedDocument,
    UnreadableFile,
    UnsupportedFile,
)

logger = logging.getLogger(__name__)
MAX_REASON_CHARS = 300


def parse_bytes(data: bytes, *, filename: str) -> ParsedDocument:
    """The document in `data`, parsed in a parser child, with the seconds its parse and OCR took."""
    format_of(filename)  # an unsupported file is refused here, no child asked
    return parser_processes.parse(data, filename)


def parse_here(data: bytes, *, filename: str) -> ParsedDocument:
    """The document in `data`, parsed in this process (a parser child's work), with the seconds its
    parse and its OCR took."""
    found = format_of(filename)
    started = time.perf_counter()
    try:
        with ocr.clocked() as ocr_seconds:
            parsed = found.parse(data, filename=filename)
        elapsed = time.perf_counter() - started
        return replace(parsed, seconds={"parse": elapsed - ocr_seconds[0], "ocr": ocr_seconds[0]})
    except (DocumentRejected, MemoryError):
        # Out of memory, nothing more is allocated here (not even a reason's text): the parser
        # child says so once the failed parse is freed (parser_child.py).
        raise
    except Exception as exc:
        # Parsers run third-party code over untrusted bytes: whatever it raises means this file is
        # unreadable, and must not stop the ingestion of the files around it. Said once, in the
        # item's reason; the traceback only at debug level.
        logger.debug("the %s parser failed on %r", found.item_type, filename, exc_info=True)
        # One line: some libraries put a whole traceback in their message.
        lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
        reason = (lines[-1] if lines else type(exc).__name__)[:MAX_REASON_CHARS]
        raise UnreadableFile(f"cannot parse {found.item_type} file: {reason}") from exc


def format_of(filename: str) -> formats.Format:
    suffix = PurePath(filename).suffix.lower()
    if not suffix:
        raise UnsupportedFile("unsupported file type (no file extension)")
    found = formats.by_suffix(suffix)
    if found is None:
        raise UnsupportedFile(f"unsupported file type '{suffix}'")
    return found
