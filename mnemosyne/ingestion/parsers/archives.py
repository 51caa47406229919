"""Office files and e-books are ZIP archives: refuse one that would inflate past a bound (a zip
bomb) or is not an archive, before the format's library unpacks it. zipfile never reads an entry
past its declared size, so the declared sizes are a sound bound."""

from __future__ import annotations

import io
import zipfile

from django.conf import settings

from mnemosyne.ingestion.documents import UnreadableFile

MAX_ENTRIES = 100_000


def check_archive(data: bytes, kind: str) -> None:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            entries = archive.infolist()
    except (zipfile.BadZipFile, ValueError) as exc:
        raise UnreadableFile(f"not a {kind} file ({exc})") from exc
    if len(entries) > MAX_ENTRIES:
        raise UnreadableFile(f"{kind} file has too many parts ({len(entries):,})")
    unpacked = sum(entry.file_size for entry in entries)
    if unpacked > settings.INGEST_MAX_UNPACKED_BYTES:
        raise UnreadableFile(
            f"{kind} file too large once unpacked ({unpacked:,} bytes; INGEST_MAX_UNPACKED_BYTES)"
        )
