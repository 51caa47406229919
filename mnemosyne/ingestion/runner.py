"""An ingest run over files, directories and URLs, shared by `manage.py ingest` and `serve --demo`."""

from __future__ import annotations

import sys
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

from tqdm import tqdm

from mnemosyne.embedding import Embedder, get_embedder
from mnemosyne.ingestion import formats
from mnemosyne.ingestion.documents import DocumentInput, DocumentRejected
from mnemosyne.ingestion.fetch import fetch_url
from mnemosyne.ingestion.inputs import InputFile, Skipped, collect_inputs, is_url, too_large
from mnemosyne.ingestion.intake import Read, Refused, UnchangedLookup, read_input
from mnemosyne.ingestion.outcomes import IngestResult, Outcome, RunReport, unchanged_results
from mnemosyne.ingestion.pipeline import ingest_documents
from mnemosyne.library.errors import NotFound
from mnemosyne.library.models import Collection, Item
from mnemosyne.library.services import delete_item
from mnemosyne.storage import ChunkStore, get_chunk_store

Report = Callable[[str], None]

# Files whose items are looked up with one query (a re-run over an unchanged tree is mostly that).
LOOKUP_FILES = 256


def ingest_paths(
    paths: Sequence[Path | str],
    *,
    collection: Collection,
    report: Report,
    embedder: Embedder | None = None,
    store: ChunkStore | None = None,
    progress: bool | None = None,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    prune: bool = False,
    given: Mapping[str, object] | None = None,
) -> RunReport:
    """Ingest every supported file under `paths` and every http(s) URL among them.

    A bad file or URL is reported and the run goes on. With `prune`, items of the collection
    whose file under one of the directories walked is gone are deleted afterwards. `given` is what
    a person says every one of the documents is (identity.parse_given), over what is read.
    """
    given = dict(given or {})
    embedder = embedder or get_embedder()
    store = store or get_chunk_store()
    show_progress = sys.stderr.isatty() if progress is None else progress
    summary = RunReport()
    inputs = collect_inputs(
        paths, formats.suffixes_for(collection.library.library_type), include=include, exclude=exclude
    )
    for entry in inputs.skipped:
        summary.skipped.append(entry)
        report(f"skipped {entry.path}: {entry.reason}")

    def on_result(result: IngestResult) -> None:
        summary.results.append(result)
        if result.outcome == Outcome.FAILED:
            report(f"failed {result.source}: {result.error}")
        elif result.outcome != Outcome.UNCHANGED:
            notes = "".join(f"; {note}" for note in result.notes)
            report(f"{result.outcome.value} {result.source} ({result.chunk_count} chunks{notes})")
        bar.update(1)

    def documents() -> Iterator[DocumentInput]:
        # Files are read (and URLs fetched) one at a time, as the pipeline asks for them; whether
        # their items are up to date is read for LOOKUP_FILES of them at a time.
        for start in range(0, len(inputs.files), LOOKUP_FILES):
            window = inputs.files[start : start + LOOKUP_FILES]
            sources = [input_file.source for input_file in window]
            known = unchanged_results(collection=collection, sources=sources, embedder=embedder, given=given)
            for input_file in window:
                bar.set_postfix_str(input_file.source[-40:], refresh=False)
                document = read_file(input_file, unchanged=known, given=given)
                if isinstance(document, Skipped):
                    summary.skipped.append(document)
                    report(f"skipped {document.path}: {document.reason}")
                    bar.update(1)
                elif isinstance(document, IngestResult):
                    on_result(document)
                else:
                    yield document
        for url in inputs.urls:
            bar.set_postfix_str(url[-40:], refresh=False)
            fetched = read_url(url, given=given)
            if isinstance(fetched, IngestResult):
                on_result(fetched)
            else:
                yield fetched

    total = len(inputs.files) + len(inputs.urls)
    with tqdm(total=total, unit="file", disable=not show_progress, file=sys.stderr) as bar:
        for _ in ingest_documents(
            collection=collection,
            documents=documents(),
            embedder=embedder,
            store=store,
            on_progress=on_result,
        ):
            pass
    if prune:
        summary.deleted = prune_missing(
            collection=collection, directories=inputs.directories, store=store, report=report
        )
    return summary


def read_file(
    input_file: InputFile,
    *,
    unchanged: UnchangedLookup | None = None,
    given: Mapping[str, object] | None = None,
) -> DocumentInput | Skipped | IngestResult:
    """Read and parse a file (intake.read_input); with `unchanged`, a file whose item is up to
    date is not even parsed. One that cannot be is skipped, with the reason."""
    path = input_file.path

    def get() -> Read:
        oversize = too_large(path.stat().st_size)
        if oversize:
            raise DocumentRejected(oversize)
        return Read(path.read_bytes(), path.name, {"path": str(path)})

    read = read_input(input_file.source, get, unchanged=unchanged, given=given)
    return Skipped(path, read.reason) if isinstance(read, Refused) else read


def read_url(url: str, *, given: Mapping[str, object] | None = None) -> DocumentInput | IngestResult:
    """Fetch and parse a URL; one that cannot be is a failed result (its item, if any, is untouched).
    The URL as given is the item's identity, so a re-run finds the same item."""

    def get() -> Read:
        fetched = fetch_url(url)
        metadata: dict[str, object] = {"url": url, "content_type": fetched.content_type}
        if fetched.final_url != url:
            metadata["final_url"] = fetched.final_url
        return Read(fetched.data, fetched.filename, metadata)

    read = read_input(url, get, given=given)
    return IngestResult(url, Outcome.FAILED, error=read.reason) if isinstance(read, Refused) else read


def prune_missing(
    *, collection: Collection, directories: Sequence[Path], store: ChunkStore, report: Report
) -> list[str]:
    """Delete the items found under `directories` before whose file is gone; return their sources.

    An item is under a directory when its source starts with the directory's name and "/" (how
    sources are named); it is kept while the file exists under any walked directory of that name.
    URL items are never pruned.
    """
    bases_by_name: dict[str, list[Path]] = defaultdict(list)
    for directory in directories:
        if directory.name:
            bases_by_name[directory.name].append(directory.resolve().parent)
    deleted: list[str] = []
    for name, bases in sorted(bases_by_name.items()):
        items = Item.objects.filter(collection=collection, source__startswith=f"{name}/").order_by("source")
        for item in items.only("pk", "uid", "source"):
            if is_url(item.source) or any((base / item.source).exists() for base in bases):
                continue
            try:
                deletion = delete_item(item_uid=item.uid, dry_run=False, store=store)
            except NotFound:
                continue  # deleted meanwhile
            deleted.append(item.source)
            left = "" if deletion.storage_cleaned else " (its stored objects could not be removed)"
            report(f"deleted {item.source}{left}")
    return deleted
