"""Sources kept in sync: a directory of SciFact documents (one Markdown file each) attached with
add_source — its first sync is the full ingest — then a sync after 1 % of the files changed, one
after nothing changed, and the watch latency: `manage.py sync --watch` running, a file edited on
disk, until the new text is searchable (its item complete with the new digest), over 20 edits."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks.corpus import Document, write_markdown_corpus
from benchmarks.documents_results import SyncResult

ROOT = Path(__file__).resolve().parent.parent
EDITS = 20


def run(documents: list[Document], scratch: Path, log: Callable[[str], None]) -> SyncResult:
    from benchmarks.database import BENCH_PREFIX
    from mnemosyne.embedding import get_embedder
    from mnemosyne.ingestion.sync.runs import sync_source
    from mnemosyne.library.models import Source
    from mnemosyne.library.services import ensure_collection, ensure_library

    directory = scratch / "sync-corpus"
    write_markdown_corpus(documents, directory)
    files = sorted(directory.glob("*.md"))
    embedder = get_embedder()
    collection = ensure_collection(library=ensure_library(name=f"{BENCH_PREFIX}sync"), name="files")
    source = Source.objects.create(collection=collection, kind=Source.Kind.DIRECTORY, location=str(directory))
    log(f"sync: first sync (the full ingest) of {len(files)} files")
    started = time.perf_counter()
    first = sync_source(source, embedder=embedder)
    full = time.perf_counter() - started
    source.refresh_from_db()
    started = time.perf_counter()
    sync_source(source, embedder=embedder)
    noop = time.perf_counter() - started
    changed = files[:: max(1, len(files) // max(1, len(files) // 100))][: max(1, len(files) // 100)]
    for path in changed:
        path.write_text(
            path.read_text(encoding="utf-8") + "\n\nRevised in the sync benchmark.\n", encoding="utf-8"
        )
    log(f"sync: {len(changed)} files changed")
    source.refresh_from_db()
    started = time.perf_counter()
    incremental = sync_source(source, embedder=embedder)
    partial = time.perf_counter() - started
    latencies = _watch(source.uid, directory, files, log)
    return SyncResult(
        files=len(files),
        chunks=first.counts()["created"],
        full_seconds=full,
        changed=len(changed),
        incremental_seconds=partial,
        incremental_updated=incremental.counts()["updated"],
        noop_seconds=noop,
        watch_p50_seconds=statistics.median(latencies),
        watch_max_seconds=max(latencies),
        watch_edits=len(latencies),
    )


def _watch(source_uid: str, directory: Path, files: list[Path], log: Callable[[str], None]) -> list[float]:
    from mnemosyne.library.models import Item

    log(f"sync: watch latency over {EDITS} edits")
    watcher = subprocess.Popen(
        [sys.executable, "manage.py", "sync", source_uid, "--watch"],
        cwd=ROOT,
        env=os.environ,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    latencies = []
    try:
        assert watcher.stdout is not None
        while "Watching" not in watcher.stdout.readline():
            if watcher.poll() is not None:
                raise RuntimeError("sync --watch exited")
        for index in range(EDITS):
            path = files[-1 - index]
            source_name = f"{directory.name}/{path.name}"
            before = Item.objects.get(source=source_name).content_hash
            edited = time.perf_counter()
            path.write_text(
                path.read_text(encoding="utf-8") + f"\n\nWatched edit {index}.\n", encoding="utf-8"
            )
            while Item.objects.filter(source=source_name, content_hash=before).exists():
                time.sleep(0.02)
                if time.perf_counter() - edited > 60:
                    raise RuntimeError(f"edit {index} not picked up within 60 s")
            latencies.append(time.perf_counter() - edited)
            time.sleep(0.2)
    finally:
        watcher.terminate()
        watcher.wait(timeout=30)
    return latencies
