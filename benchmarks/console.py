"""The console's pages at scale: a library grown to 100k chunks (perturbed copies of real SciFact
chunks, scale.grow_to: tens of thousands of items in one collection) and a real PDF manual, served
by uvicorn; a signed-in client times, over HTTP, the pages a person opens most — a collection's
item list (its first page, a page deep into it by keyset, and filtered by title), an item's chunks,
the chunk inspector's text, the citation viewer of a PDF chunk — and a PDF page's picture drawn the
first time and cached. And what `url` costs a search: the citation link built for 20 hits, timed
in-process (the link is the only thing the console added to a search answer).

Wall times seen by a client on the same machine: the server's time plus a loopback round trip.
"""

from __future__ import annotations

import re
import shutil
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from benchmarks.percentiles import percentile
from benchmarks.results import ConsoleTiming

CHUNKS = 100_000
REQUESTS = 40
WARMUP = 5
PASSWORD = "benchmark console password"
MANUAL = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "pdfs" / "libtasn1.pdf"


def run(*, corpus_10x: Path, log: Callable[[str], None]) -> list[ConsoleTiming]:
    from django.conf import settings
    from django.contrib.auth.models import User

    from benchmarks import ingest, scale, search
    from mnemosyne.ingestion.runner import ingest_paths
    from mnemosyne.library.models import Chunk, Item
    from mnemosyne.library.services import ensure_collection

    real = ingest.real_collection(corpus_10x, log)
    log(f"console: growing the index to {CHUNKS:,} chunks")
    scale.grow_to(CHUNKS, real=real, seed=CHUNKS, log=log)
    copies = real.library.collections.get(name=scale.COPY_COLLECTION)
    manuals = ensure_collection(library=real.library, name="manuals")
    folder = settings.MNEMOSYNE_DATA_DIR / "console-manual"
    folder.mkdir(exist_ok=True)
    shutil.copy(MANUAL, folder / MANUAL.name)
    ingest_paths([folder], collection=manuals, report=lambda line: None, progress=False)
    pdf = Item.objects.get(collection=manuals)
    cited = Chunk.objects.filter(item=pdf, page__isnull=False).order_by("ordinal")[10]
    items = Item.objects.filter(collection=copies)
    deep = items.order_by("title", "id").values_list("id", flat=True)[items.count() // 2]
    busiest = items.order_by("-chunk_count", "id").first()
    assert busiest is not None
    word = (
        re.findall(r"[A-Za-z]{6,}", busiest.title)[0]
        if re.findall(r"[A-Za-z]{6,}", busiest.title)
        else "cell"
    )
    User.objects.filter(username="bench-console").delete()
    User.objects.create_superuser("bench-console", "bench@example.com", PASSWORD)
    chunks, item_count = Chunk.objects.count(), items.count()
    log(f"console: {chunks:,} chunks, {item_count:,} items in the collection timed")
    pages = [
        ("item list, first page", f"/console/collections/{copies.uid}/"),
        ("item list, keyset page halfway", f"/console/collections/{copies.uid}/?after={deep}"),
        ("item list, filtered by title", f"/console/collections/{copies.uid}/?q={word}"),
        ("an item's chunks", f"/console/items/{busiest.uid}/"),
        ("chunk inspector text (PDF, 100 chunks)", f"/console/items/{pdf.uid}/text"),
        ("citation viewer (PDF chunk)", f"/console/chunks/{cited.uid}"),
    ]
    timings = []
    picture_dir = settings.MNEMOSYNE_DATA_DIR / "page-images"
    with search.mcp_server(settings.MNEMOSYNE_DATA_DIR / "uvicorn-console.log") as base:
        client = signed_in(base)
        try:
            for name, path in pages:
                timings.append(_timed(client, name, path, chunks, item_count))
                log(f"console: {name}: p50 {timings[-1].p50_ms:.1f} ms, p95 {timings[-1].p95_ms:.1f} ms")
            picture = f"/console/items/{pdf.uid}/pages/{cited.page}.png"
            first = []
            for _ in range(5):
                shutil.rmtree(picture_dir, ignore_errors=True)
                first.append(_get(client, picture))
            timings.append(
                ConsoleTiming("PDF page picture, first time", 5, chunks, item_count, *spread(first))
            )
            timings.append(_timed(client, "PDF page picture, cached", picture, chunks, item_count))
        finally:
            client.close()
    timings.append(_url_cost(chunks, item_count))
    return timings


def signed_in(base: str, username: str = "bench-console", password: str = PASSWORD) -> httpx.Client:
    """An HTTP client signed in to the console with a password, as a person is."""
    client = httpx.Client(base_url=base, timeout=120, follow_redirects=False)
    page = client.get("/console/sign-in/")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
    assert token is not None, page.text[:500]
    answer = client.post(
        "/console/sign-in/",
        data={"username": username, "password": password, "csrfmiddlewaretoken": token.group(1)},
        headers={"Referer": f"{base}/console/sign-in/"},
    )
    assert answer.status_code == 302, answer.text[:500]
    return client


def _get(client: httpx.Client, path: str) -> float:
    started = time.perf_counter()
    response = client.get(path)
    elapsed = (time.perf_counter() - started) * 1000
    assert response.status_code == 200, (path, response.status_code, response.text[:300])
    return elapsed


def _timed(client: httpx.Client, name: str, path: str, chunks: int, items: int) -> ConsoleTiming:
    for _ in range(WARMUP):
        _get(client, path)
    return ConsoleTiming(
        name, REQUESTS, chunks, items, *spread([_get(client, path) for _ in range(REQUESTS)])
    )


def spread(values: list[float]) -> tuple[float, float]:
    """The median and the 95th percentile."""
    return statistics.median(values), percentile(values, 0.95)


def _url_cost(chunks: int, items: int) -> ConsoleTiming:
    """The citation links of a 20-hit answer, built as `search` builds them (tools/links.py)."""
    from mcp_server.tools.links import citation_url

    uids = [f"chk_{number:016d}" for number in range(20)]
    runs: list[Any] = []
    for _ in range(200):
        started = time.perf_counter()
        for uid in uids:
            citation_url(uid)
        runs.append((time.perf_counter() - started) * 1000)
    return ConsoleTiming("search: the 20 hits' url fields", 200, chunks, items, *spread(runs))
