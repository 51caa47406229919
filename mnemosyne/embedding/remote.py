"""Embeddings from an OpenAI-compatible `/embeddings` endpoint: OpenAI itself, Hugging Face TEI,
vLLM, Ollama, LiteLLM and the like (EMBEDDING_URL).

POST {EMBEDDING_URL}/embeddings {"model": EMBEDDING_MODEL, "input": [...]} in batches of
EMBEDDING_BATCH_SIZE, with `Authorization: Bearer EMBEDDING_API_KEY` when a key is set. The
vector dimension is the model's: read from its answer to a probe at load. Vectors are normalised
here (the index compares by cosine; some servers do not normalise).

Chunk sizes are counted in the bundled model's word pieces (its tokenizer, no model weights): the
remote model's own tokenizer is not available here, and word pieces are a close, conservative
measure for the models these servers run. EMBEDDING_MAX_TOKENS is the remote model's window.

Every failure is an EmbeddingError whose message names the endpoint (never its key) and says
what went wrong; a search reports its vector leg as not run (the full-text leg still answers), an
ingest fails its items with it, another tool call answers it as the tool's error.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
from django.core.exceptions import ImproperlyConfigured

from mnemosyne.embedding.base import EmbeddingError
from mnemosyne.lib.endpoints import check_http_url, display_url
from mnemosyne.lib.metrics import EMBEDDED_TEXTS, EMBEDDING_SECONDS

# How much of an error body to quote in a message.
ERROR_BODY_CHARS = 200
PROBE = "dimension probe"


class RemoteEmbedder:
    """An Embedder over HTTP; thread-safe (one pooled httpx client)."""

    def __init__(
        self,
        url: str,
        *,
        model: str,
        api_key: str = "",
        batch_size: int = 64,
        timeout: float = 30.0,
        max_tokens: int = 512,
        tokenizer_file: Path,
    ) -> None:
        from tokenizers import Tokenizer

        check_http_url(url, "EMBEDDING_URL")
        if not model:
            raise ImproperlyConfigured("EMBEDDING_MODEL must name the remote model when EMBEDDING_URL is set")
        self._endpoint = url.rstrip("/") + "/embeddings"
        self._shown = display_url(self._endpoint)
        self._model = model
        self._batch_size = batch_size
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(headers=headers, timeout=timeout, follow_redirects=False)
        self._tokenizer = Tokenizer.from_file(str(tokenizer_file))
        self._tokenizer.no_truncation()
        self._tokenizer.no_padding()
        self._tokenizer_lock = threading.Lock()
        self.model_id = f"{model} at {self._shown}"
        self.max_tokens = max_tokens
        self.query_backend = "remote"
        self.document_backend = "remote"
        self._dim: int | None = None
        self._dim_lock = threading.Lock()

    @property
    def dim(self) -> int:
        """The model's dimension, from its answer to a probe the first time it is needed (a server
        starts while the endpoint is down; its searches go on without the vector leg)."""
        if self._dim is None:
            with self._dim_lock:
                if self._dim is None:
                    self._dim = len(self._request([PROBE])[0])
        return self._dim

    def embed_batch(self, texts: Sequence[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        started = time.perf_counter()
        for start in range(0, len(texts), self._batch_size):
            vectors.extend(self._checked(self._request(list(texts[start : start + self._batch_size]))))
        EMBEDDING_SECONDS.labels("documents").observe(time.perf_counter() - started)
        EMBEDDED_TEXTS.labels("documents").inc(len(texts))
        return vectors

    def embed_query(self, text: str) -> list[float]:
        started = time.perf_counter()
        (vector,) = self._checked(self._request([text]))
        EMBEDDING_SECONDS.labels("query").observe(time.perf_counter() - started)
        EMBEDDED_TEXTS.labels("query").inc()
        return vector

    def count_tokens(self, text: str) -> int:
        with self._tokenizer_lock:
            return len(self._tokenizer.encode(text, add_special_tokens=False).ids)

    def token_starts(self, text: str) -> list[int]:
        with self._tokenizer_lock:
            encoding = self._tokenizer.encode(text, add_special_tokens=False)
        return [start for start, _ in encoding.offsets]

    def _checked(self, vectors: list[list[float]]) -> list[list[float]]:
        dim = self.dim
        for vector in vectors:
            if len(vector) != dim:
                raise EmbeddingError(
                    f"the embeddings endpoint {self._shown} answered a {len(vector)}-dimensional vector; "
                    f"model {self._model} gave {dim} before"
                )
        return vectors

    def _request(self, texts: list[str]) -> list[list[float]]:
        try:
            response = self._client.post(self._endpoint, json={"model": self._model, "input": texts})
        except httpx.TimeoutException:
            raise EmbeddingError(f"the embeddings endpoint {self._shown} did not answer in time") from None
        except httpx.HTTPError as exc:
            raise EmbeddingError(
                f"the embeddings endpoint {self._shown} could not be reached ({type(exc).__name__})"
            ) from None
        if response.status_code != 200:
            body = " ".join(response.text.split())[:ERROR_BODY_CHARS]
            raise EmbeddingError(
                f"the embeddings endpoint {self._shown} answered HTTP {response.status_code}: {body}"
            )
        return _vectors(response, texts, self._shown)


def _vectors(response: httpx.Response, texts: list[str], shown: str) -> list[list[float]]:
    """The answer's vectors in input order (by `index`), normalised; EmbeddingError if malformed."""
    try:
        payload: Any = response.json()
        data = sorted(payload["data"], key=lambda entry: int(entry["index"]))
        vectors = [[float(value) for value in entry["embedding"]] for entry in data]
    except (ValueError, KeyError, TypeError) as exc:
        raise EmbeddingError(
            f"the embeddings endpoint {shown} answered something other than OpenAI's embeddings format "
            f"({type(exc).__name__})"
        ) from None
    if len(vectors) != len(texts) or not vectors or not vectors[0]:
        raise EmbeddingError(
            f"the embeddings endpoint {shown} returned {len(vectors)} vectors for {len(texts)} texts"
        )
    normalised = []
    for vector in vectors:
        norm = math.sqrt(sum(value * value for value in vector))
        if not math.isfinite(norm) or norm == 0:
            raise EmbeddingError(f"the embeddings endpoint {shown} returned a zero or non-finite vector")
        normalised.append([value / norm for value in vector])
    return normalised
