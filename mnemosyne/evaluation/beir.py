"""BEIR-layout datasets: load a corpus into a library of its own and score the SearchService on it.

Layout: corpus.jsonl ({_id, title, text}), queries.jsonl ({_id, text}), qrels/<split>.tsv
(query-id, corpus-id, score, with a header line).
"""

from __future__ import annotations

import csv
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from mnemosyne.embedding import Embedder
from mnemosyne.evaluation import measures
from mnemosyne.evaluation.models import EvaluationSet
from mnemosyne.evaluation.services import create_set
from mnemosyne.evaluation.set_files import read_beir
from mnemosyne.evaluation.set_imports import ImportReport, add_rows
from mnemosyne.ingestion.documents import DocumentInput, ParsedDocument
from mnemosyne.ingestion.outcomes import IngestResult, content_hash
from mnemosyne.ingestion.pipeline import ingest_documents
from mnemosyne.library.errors import InvalidArgument, LibraryError
from mnemosyne.library.models import Collection, EmbeddingStatus, Item, Library, LibraryType
from mnemosyne.library.services import ensure_collection, ensure_library
from mnemosyne.search.service import SearchRequest, search
from mnemosyne.storage import ChunkStore
from mnemosyne.text.normalising import normalise_text


@dataclass(frozen=True)
class Dataset:
    root: Path

    @property
    def name(self) -> str:
        return self.root.resolve().name

    def check(self, split: str) -> None:
        for path in (self.root / "corpus.jsonl", self.root / "queries.jsonl", self.qrels_path(split)):
            if not path.is_file():
                raise InvalidArgument(f"not a BEIR dataset: {path} is missing")

    def qrels_path(self, split: str) -> Path:
        return self.root / "qrels" / f"{split}.tsv"

    def corpus_size(self) -> int:
        with (self.root / "corpus.jsonl").open("rb") as handle:
            return sum(1 for line in handle if line.strip())

    def documents(self) -> Iterator[DocumentInput]:
        with (self.root / "corpus.jsonl").open("rb") as handle:
            for line in handle:
                if not line.strip():
                    continue
                record = json.loads(line)
                title = normalise_text(record.get("title") or "")
                text = normalise_text(record.get("text") or "") or title
                yield DocumentInput(
                    source=str(record["_id"]),
                    parsed=ParsedDocument(title=title, item_type="text", text=text, markdown=False),
                    digest=content_hash(line),
                )

    def queries(self) -> dict[str, str]:
        queries = {}
        with (self.root / "queries.jsonl").open("rb") as handle:
            for line in handle:
                if line.strip():
                    record = json.loads(line)
                    queries[str(record["_id"])] = record["text"]
        return queries

    def qrels(self, split: str) -> dict[str, dict[str, int]]:
        judged: dict[str, dict[str, int]] = {}
        with self.qrels_path(split).open(newline="") as handle:
            reader = csv.reader(handle, delimiter="\t")
            for row in reader:
                if not row or row[0] == "query-id":
                    continue
                judged.setdefault(row[0], {})[row[1]] = int(row[2])
        return judged


def ensure_loaded(
    dataset: Dataset,
    *,
    embedder: Embedder,
    store: ChunkStore,
    on_progress: Callable[[IngestResult], None] | None = None,
) -> tuple[Library, Collection]:
    """The dataset's library, loading (or completing) its corpus when needed."""
    library = ensure_library(
        name=f"BEIR {dataset.name}",
        # The general profile: a benchmark measures the search every library runs.
        library_type=LibraryType.GENERAL,
        description=f"BEIR dataset {dataset.name}, loaded by `manage.py evaluate`.",
    )
    collection = ensure_collection(library=library, name="corpus")
    complete = Item.objects.filter(collection=collection, embedding_status=EmbeddingStatus.COMPLETE).count()
    if complete != dataset.corpus_size():
        for _ in ingest_documents(
            collection=collection,
            documents=dataset.documents(),
            embedder=embedder,
            store=store,
            on_progress=on_progress,
        ):
            pass
    return library, collection


class RerankFailed(LibraryError):
    """A query of a reranked evaluation came back in fused order: the figures would mix the two."""


@dataclass(frozen=True)
class EvaluationResult:
    ndcg_at_10: float
    recall_at_100: float
    mrr_at_10: float
    queries: int
    latency_p50_ms: float
    latency_p95_ms: float

    def as_json(self) -> str:
        return json.dumps(
            {
                "ndcg@10": round(self.ndcg_at_10, 4),
                "recall@100": round(self.recall_at_100, 4),
                "mrr@10": round(self.mrr_at_10, 4),
                "queries": self.queries,
                "latency_ms": {"p50": round(self.latency_p50_ms, 2), "p95": round(self.latency_p95_ms, 2)},
            }
        )


def evaluate(
    dataset: Dataset,
    *,
    split: str,
    library: Library,
    request_template: SearchRequest,
    embedder: Embedder,
    on_query: Callable[[int, int], None] | None = None,
) -> EvaluationResult:
    """Run every judged query of `split` through the SearchService and score the rankings.

    With `rerank` in the template every query must come back reranked; the first that does not
    (no reranker, or the reranker failing) stops the evaluation with the search's own note.
    """
    queries = dataset.queries()
    qrels = {qid: judged for qid, judged in dataset.qrels(split).items() if qid in queries}
    ndcg, recall, mrr, latencies = [], [], [], []
    sources = dict(Item.objects.filter(collection__library=library).values_list("id", "source"))
    for number, (query_id, judged) in enumerate(sorted(qrels.items()), start=1):
        request = SearchRequest(**{**request_template.__dict__, "query": queries[query_id]})
        started = time.perf_counter()
        response = search(request, embedder=embedder)
        latencies.append((time.perf_counter() - started) * 1000)
        if request.rerank and response.hits and not response.rerank_applied:
            raise RerankFailed(f"query {query_id!r}: {response.rerank_note}")
        ranked = measures.best_per_document(
            [(sources[hit.chunk.item_id], hit.score) for hit in response.hits]
        )
        ndcg.append(measures.ndcg_at_k(ranked, judged, 10))
        recall.append(measures.recall_at_k(ranked, judged, 100))
        mrr.append(measures.mrr_at_k(ranked, judged, 10))
        if on_query is not None:
            on_query(number, len(qrels))
    count = len(ndcg)
    return EvaluationResult(
        ndcg_at_10=sum(ndcg) / count if count else 0.0,
        recall_at_100=sum(recall) / count if count else 0.0,
        mrr_at_10=sum(mrr) / count if count else 0.0,
        queries=count,
        latency_p50_ms=measures.percentile(latencies, 0.5),
        latency_p95_ms=measures.percentile(latencies, 0.95),
    )


def as_set(dataset: Dataset, split: str, library: Library) -> tuple[EvaluationSet, ImportReport]:
    """The dataset's judged queries of `split` as the evaluation set "BEIR <name> <split>" of its
    library (made, and its questions imported, the first time; as it is after that)."""
    name = f"BEIR {dataset.name} {split}"
    found = EvaluationSet.objects.filter(name=name, library=library).first()
    if found is not None:
        return found, ImportReport()
    evaluation_set = create_set(
        name=name,
        library=library,
        description=f"The judged queries of {split}, from `manage.py evaluate --save`.",
    )
    read = read_beir(
        (dataset.root / "queries.jsonl").read_bytes(),
        dataset.qrels_path(split).read_bytes(),
        queries_name="queries.jsonl",
        qrels_name=f"qrels/{split}.tsv",
    )
    return evaluation_set, add_rows(evaluation_set, read)
