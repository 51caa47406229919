"""One reader for every ingest door — the CLI's files and URLs, a source's files, a background
upload, `upsert_item`: the bytes got (and timed), hashed, an item already up to date recognised
before anything is parsed, then parsed into what the pipeline ingests, or the reason it cannot be.

Each door says how its bytes are got (a file, a URL, an object, a request's body), what item they
are (`source`), and how it answers a refusal (a skipped file, a failed result, an argument error).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from mnemosyne.ingestion.documents import DocumentInput, DocumentRejected
from mnemosyne.ingestion.fetch import FetchFailed
from mnemosyne.ingestion.outcomes import IngestResult, content_hash
from mnemosyne.ingestion.parsing import parse_bytes

# (source, digest) → the result of an item already up to date, else None (outcomes.unchanged_results).
UnchangedLookup = Callable[[str, str], IngestResult | None]


@dataclass(frozen=True)
class Refused:
    """Why the bytes of `source` cannot be ingested: unreadable, too large, not a document."""

    source: str
    reason: str


@dataclass(frozen=True)
class Read:
    """The bytes a door got, what they are named, and what they were stamped with."""

    data: bytes
    filename: str
    metadata: dict[str, object] = field(default_factory=dict)


def read_input(
    source: str,
    get: Callable[[], Read],
    *,
    unchanged: UnchangedLookup | None = None,
    given: Mapping[str, object] | None = None,
    digest_of: Callable[[bytes], str] = content_hash,
) -> DocumentInput | Refused | IngestResult:
    """`get()` the bytes of item `source` and parse them; with `unchanged`, an item already up to
    date with them is its result, not parsed again. `digest_of` is what "the same document" means
    (by default its bytes' hash). An OSError, a fetch that failed or a document the parsers refuse
    is a Refused with the reason."""
    try:
        started = time.perf_counter()
        got = get()
        read_seconds = time.perf_counter() - started
        digest = digest_of(got.data)
        if unchanged is not None and (result := unchanged(source, digest)) is not None:
            return result
        parsed = parse_bytes(got.data, filename=got.filename)
    except (DocumentRejected, FetchFailed) as exc:
        return Refused(source, str(exc))
    except OSError as exc:
        return Refused(source, f"cannot read: {exc.strerror or exc}")
    return DocumentInput(
        source=source,
        parsed=parsed,
        digest=digest,
        metadata=got.metadata,
        given=given or {},
        original=got.data,
        read_seconds=read_seconds,
    )
