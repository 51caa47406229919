"""SciFact as benchmark material: documents as Markdown files, train queries, perturbed copies (pure)."""

from __future__ import annotations

import csv
import json
import random
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

DEFAULT_SCIFACT = Path("/work/shared/data/scifact")

# A copy drops this share of its words and may swap two neighbouring sentences.
DROP_WORDS = 0.15
SWAP_SENTENCES = 0.5
# Per-dimension noise on a copy's unit embedding (≈0.93 cosine to the original at 384 dimensions).
EMBEDDING_NOISE = 0.02

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True)
class Document:
    doc_id: str
    title: str
    text: str

    def markdown(self) -> str:
        return f"# {self.title}\n\n{self.text}\n" if self.title else f"{self.text}\n"


def read_documents(root: Path, limit: int) -> list[Document]:
    """The first `limit` documents of corpus.jsonl, in file order."""
    documents: list[Document] = []
    with (root / "corpus.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            if len(documents) >= limit:
                break
            if line.strip():
                record = json.loads(line)
                title = " ".join((record.get("title") or "").split())
                documents.append(Document(str(record["_id"]), title, (record.get("text") or "").strip()))
    return documents


def write_markdown_corpus(documents: Sequence[Document], directory: Path) -> None:
    """One Markdown file per document ("# title", blank line, text), named by document id."""
    directory.mkdir(parents=True, exist_ok=True)
    for document in documents:
        (directory / f"{document.doc_id}.md").write_text(document.markdown(), encoding="utf-8")


def train_queries(root: Path) -> list[str]:
    """Queries with train judgements (queries.jsonl ∩ qrels/train.tsv), in queries.jsonl order."""
    judged = {query_id for query_id, _ in train_judgements(root)}
    return [text for query_id, text in query_texts(root).items() if query_id in judged]


def pipeline_batches(chunks_per_document: Sequence[int], batch_chunks: int) -> list[tuple[int, int]]:
    """Chunk index ranges [start, end) embedded together, as the pipeline groups whole documents.

    The pipeline adds documents until at least `batch_chunks` chunks are pending, then embeds them
    in one call; whatever is left at the end is the last call.
    """
    batches: list[tuple[int, int]] = []
    start = end = 0
    for count in chunks_per_document:
        end += count
        if end - start >= batch_chunks:
            batches.append((start, end))
            start = end
    if end > start:
        batches.append((start, end))
    return batches


def perturb_text(text: str, rng: random.Random) -> str:
    """Drop about DROP_WORDS of the words; sometimes swap two neighbouring sentences."""
    sentences = [sentence for sentence in _SENTENCE_END.split(text.strip()) if sentence]
    if len(sentences) > 1 and rng.random() < SWAP_SENTENCES:
        i = rng.randrange(len(sentences) - 1)
        sentences[i], sentences[i + 1] = sentences[i + 1], sentences[i]
    kept_sentences = []
    for sentence in sentences:
        words = sentence.split()
        kept = [word for word in words if rng.random() >= DROP_WORDS]
        if kept:
            kept_sentences.append(" ".join(kept))
    return " ".join(kept_sentences) or text


def perturb_vector(
    vector: np.ndarray, rng: np.random.Generator, sigma: float = EMBEDDING_NOISE
) -> np.ndarray:
    """Gaussian noise per dimension, renormalised to unit length (the model's vectors are unit)."""
    noisy = np.asarray(vector, dtype=np.float64) + rng.normal(0.0, sigma, len(vector))
    return (noisy / np.linalg.norm(noisy)).astype(np.float32)


def judged_abstracts(root: Path, limit: int) -> list[tuple[str, str]]:
    """(train query, the abstract judged relevant to it), one per abstract, in qrels order."""
    queries = query_texts(root)
    abstracts = {document.doc_id: document.text for document in read_documents(root, sys.maxsize)}
    pairs: dict[str, tuple[str, str]] = {}
    for query_id, doc_id in train_judgements(root):
        if len(pairs) >= limit:
            break
        if doc_id in abstracts and query_id in queries and doc_id not in pairs:
            pairs[doc_id] = (queries[query_id], abstracts[doc_id])
    return list(pairs.values())


def query_texts(root: Path) -> dict[str, str]:
    """queries.jsonl: each query's text by its id, in file order."""
    with (root / "queries.jsonl").open(encoding="utf-8") as handle:
        records = [json.loads(line) for line in handle if line.strip()]
    return {str(record["_id"]): str(record["text"]) for record in records}


def train_judgements(root: Path) -> list[tuple[str, str]]:
    """qrels/train.tsv: (query id, corpus id) per judgement, in file order."""
    with (root / "qrels" / "train.tsv").open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle, delimiter="\t"))
    return [(row[0], row[1]) for row in rows if len(row) >= 2 and row[0] != "query-id"]
