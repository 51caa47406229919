"""`manage.py ingest` in a process of its own, reporting what the parent cannot see from outside.

python -m benchmarks._ingest_child DIR LIBRARY COLLECTION → the last line of stdout is JSON:
{"documents", "chunks", "seconds", "embedding_seconds", "startup_seconds", "rss_after_load_bytes",
"rss_quarters_bytes", "peak_rss_bytes"}. `seconds` times the ingest command alone (start-up,
Django set-up and model load come before it); `embedding_seconds` is the part of it spent inside
the model's embed_batch.
"""

from __future__ import annotations

import io
import json
import os
import resource
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import mnemosyne  # noqa: F401  (Python 3.11 support for Django; must come first)

if TYPE_CHECKING:
    from mnemosyne.embedding import Embedder


class TimedEmbedder:
    """The process's embedder, adding up the time spent in embed_batch."""

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner
        self.seconds = 0.0

    def __getattr__(self, name: str) -> object:
        return getattr(self._inner, name)

    def embed_batch(self, texts: Sequence[str]) -> list[list[float]]:
        started = time.perf_counter()
        try:
            return self._inner.embed_batch(texts)
        finally:
            self.seconds += time.perf_counter() - started


class RSSSampler(threading.Thread):
    """The process's RSS every half second, to tell steady growth from a one-off peak."""

    def __init__(self, read_rss: Callable[[], int]) -> None:
        super().__init__(daemon=True)
        self._read_rss = read_rss
        self._stop_event = threading.Event()
        self.samples: list[int] = []

    def run(self) -> None:
        while not self._stop_event.wait(0.5):
            self.samples.append(self._read_rss())

    def stop(self) -> list[int]:
        """RSS at a quarter, half, three quarters and the end of the sampled time."""
        self._stop_event.set()
        self.join()
        self.samples.append(self._read_rss())
        count = len(self.samples)
        return [self.samples[min(count - 1, count * quarter // 4)] for quarter in (1, 2, 3, 4)]


def main(directory: str, library: str, collection: str) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mnemosyne.project.settings")
    import django
    import psutil

    django.setup()
    from django.core.management import call_command

    from mnemosyne import embedding
    from mnemosyne.library.models import Chunk, EmbeddingStatus, Item

    # A first call after loading is slower (kernels warm up); that is model load, not ingest.
    embedding.get_embedder().embed_batch(["warm up"])
    # The command asks get_embedder() for the process-wide embedder: hand it the timed one.
    timed = TimedEmbedder(embedding.get_embedder())
    embedding._embedder = timed  # type: ignore[assignment]
    process = psutil.Process()
    startup = time.time() - process.create_time()
    rss_after_load = process.memory_info().rss
    sampler = RSSSampler(lambda: int(process.memory_info().rss))
    sampler.start()
    started = time.perf_counter()
    call_command(
        "ingest",
        directory,
        "--library",
        library,
        "--collection",
        collection,
        "--no-progress",
        stdout=io.StringIO(),
    )
    seconds = time.perf_counter() - started
    rss_quarters = sampler.stop()
    where = {"collection__library__name": library, "collection__name": collection}
    report = {
        "documents": Item.objects.filter(**where, embedding_status=EmbeddingStatus.COMPLETE).count(),
        "chunks": Chunk.objects.filter(**where).count(),
        "seconds": seconds,
        "embedding_seconds": timed.seconds,
        "startup_seconds": startup,
        "rss_after_load_bytes": rss_after_load,
        "rss_quarters_bytes": rss_quarters,
        # Linux reports kilobytes.
        "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
    }
    print(json.dumps(report), flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:4])
