"""The development token `make run` prints, kept between runs so a pasted client config keeps
working: the raw token in one file under the data directory, readable by its owner only (0600).
Only this file holds it; the database keeps its digest, as for every token."""

from __future__ import annotations

import os
from pathlib import Path

from django.conf import settings

PATH_NAME = "dev-token"


def path() -> Path:
    return settings.MNEMOSYNE_DATA_DIR / PATH_NAME


def read() -> str | None:
    try:
        raw = path().read_text().strip()
    except OSError:
        return None
    return raw or None


def write(raw: str) -> None:
    """Replace the kept token; the file is created 0600 and swapped in whole."""
    target = path()
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{PATH_NAME}.partial")
    partial.unlink(missing_ok=True)
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        handle.write(raw + "\n")
    os.replace(partial, target)
