"""An ingest run over files and directories, shared by `manage.py ingest` and `serve --demo`."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from tqdm import tqdm

from mnemosyne.ingestion.embedding import Embedder, get_embedder
from mnemosyne.ingestion.parsing import SUPPORTED_SUFFIXES, UnreadableFile, UnsupportedFile, parse_bytes
from mnemosyne.ingestion.pipeline import IngestResult, Outcome, content_hash, ingest_document
from mnemosyne.ingestion.sources import Skipped, SourceFile, discover
from mnemosyne.library.models import Collection
from mnemosyne.storage import ChunkStore, get_chunk_store

Report = Callable[[str], None]


@dataclass
class RunSummary:
    results: list[IngestResult] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)

    def counts(self) -> Counter[str]:
        counts: Counter[str] = Counter(result.outcome.value for result in self.results)
        counts["skipped"] = len(self.skipped)
        return counts

    def line(self) -> str:
        counts = self.counts()
        parts = [
            f"{counts[name]} {name}" for name in ("created", "updated", "unchanged", "failed", "skipped")
        ]
        chunks = sum(result.chunk_count for result in self.results if result.outcome != Outcome.FAILED)
        return f"{', '.join(parts)}; {chunks} chunks in the ingested items"


def ingest_paths(
    paths: Sequence[Path],
    *,
    collection: Collection,
    report: Report,
    embedder: Embedder | None = None,
    store: ChunkStore | None = None,
    progress: bool | None = None,
) -> RunSummary:
    """Ingest every supported file under `paths`; a bad file is reported and the run goes on."""
    embedder = embedder or get_embedder()
    store = store or get_chunk_store()
    show_progress = sys.stderr.isatty() if progress is None else progress
    summary = RunSummary()
    found: list[SourceFile] = []
    for entry in discover(paths, set(SUPPORTED_SUFFIXES)):
        if isinstance(entry, Skipped):
            summary.skipped.append(entry)
            report(f"skipped {entry.path}: {entry.reason}")
        else:
            found.append(entry)

    with tqdm(total=len(found), unit="file", disable=not show_progress, file=sys.stderr) as bar:
        for source_file in found:
            bar.set_postfix_str(source_file.source[-40:], refresh=False)
            result = _ingest_one(source_file, collection=collection, embedder=embedder, store=store)
            if isinstance(result, Skipped):
                summary.skipped.append(result)
                report(f"skipped {result.path}: {result.reason}")
            else:
                summary.results.append(result)
                if result.outcome == Outcome.FAILED:
                    report(f"failed {result.source}: {result.error}")
                elif result.outcome != Outcome.UNCHANGED:
                    report(f"{result.outcome.value} {result.source} ({result.chunk_count} chunks)")
            bar.update(1)
    return summary


def _ingest_one(
    source_file: SourceFile, *, collection: Collection, embedder: Embedder, store: ChunkStore
) -> IngestResult | Skipped:
    path = source_file.path
    try:
        size = path.stat().st_size
        if size > settings.INGEST_MAX_FILE_BYTES:
            return Skipped(
                path, f"{size} bytes is over INGEST_MAX_FILE_BYTES ({settings.INGEST_MAX_FILE_BYTES})"
            )
        data = path.read_bytes()
        parsed = parse_bytes(data, filename=path.name)
    except (UnsupportedFile, UnreadableFile) as exc:
        return Skipped(path, str(exc))
    except OSError as exc:
        return Skipped(path, f"cannot read: {exc.strerror or exc}")
    return ingest_document(
        collection=collection,
        source=source_file.source,
        parsed=parsed,
        digest=content_hash(data),
        embedder=embedder,
        store=store,
        metadata={"path": str(path)},
    )
