"""An ingest run over files and directories, shared by `manage.py ingest` and `serve --demo`."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from tqdm import tqdm

from mnemosyne.ingestion.embedding import Embedder, get_embedder
from mnemosyne.ingestion.parsing import SUPPORTED_SUFFIXES, DocumentRejected, parse_bytes
from mnemosyne.ingestion.pipeline import DocumentInput, IngestResult, Outcome, content_hash, ingest_documents
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

    def on_result(result: IngestResult) -> None:
        summary.results.append(result)
        if result.outcome == Outcome.FAILED:
            report(f"failed {result.source}: {result.error}")
        elif result.outcome != Outcome.UNCHANGED:
            report(f"{result.outcome.value} {result.source} ({result.chunk_count} chunks)")
        bar.update(1)

    def documents() -> Iterator[DocumentInput]:
        # Files are read and parsed one at a time, as the pipeline asks for them.
        for source_file in found:
            bar.set_postfix_str(source_file.source[-40:], refresh=False)
            document = _read(source_file)
            if isinstance(document, Skipped):
                summary.skipped.append(document)
                report(f"skipped {document.path}: {document.reason}")
                bar.update(1)
            else:
                yield document

    with tqdm(total=len(found), unit="file", disable=not show_progress, file=sys.stderr) as bar:
        for _ in ingest_documents(
            collection=collection,
            documents=documents(),
            embedder=embedder,
            store=store,
            on_progress=on_result,
        ):
            pass
    return summary


def _read(source_file: SourceFile) -> DocumentInput | Skipped:
    path = source_file.path
    try:
        size = path.stat().st_size
        if size > settings.INGEST_MAX_FILE_BYTES:
            return Skipped(
                path, f"{size} bytes is over INGEST_MAX_FILE_BYTES ({settings.INGEST_MAX_FILE_BYTES})"
            )
        data = path.read_bytes()
        parsed = parse_bytes(data, filename=path.name)
    except DocumentRejected as exc:
        return Skipped(path, str(exc))
    except OSError as exc:
        return Skipped(path, f"cannot read: {exc.strerror or exc}")
    return DocumentInput(
        source=source_file.source, parsed=parsed, digest=content_hash(data), metadata={"path": str(path)}
    )
