"""Rerankers: score (query, document) pairs with a cross-encoder, remote or local.

Two backends behind one small interface: an HTTP service speaking Hugging Face TEI's
`/rerank` or Cohere's (also Jina's) rerank API, and a sentence-transformers CrossEncoder
loaded offline from a local directory. Every failure is a RerankError whose message is
safe to show a user: it names the reranker, never its API key.
"""

from __future__ import annotations

import functools
import math
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import httpx
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from mnemosyne.lib.endpoints import check_http_url, display_url

PROTOCOLS = ("tei", "cohere")
# TEI's default --max-client-batch-size; a larger request is refused with HTTP 413.
TEI_BATCH_SIZE = 32
# How much of an error body to quote in a message.
ERROR_BODY_CHARS = 200


class RerankError(Exception):
    """The reranker could not score the documents; the message is safe to show a user."""


class Reranker(Protocol):
    name: str

    def score(self, query: str, documents: Sequence[str]) -> list[float]: ...


class HttpReranker:
    def __init__(
        self, url: str, *, protocol: str, api_key: str = "", model: str = "", timeout: float = 5.0
    ) -> None:
        if protocol not in PROTOCOLS:
            raise ImproperlyConfigured(
                f"RERANK_PROTOCOL must be one of {', '.join(PROTOCOLS)}, got {protocol!r}"
            )
        check_http_url(url, "RERANK_URL")
        self.url = url
        self.protocol = protocol
        self.model = model
        self.timeout = timeout
        self.name = f"http:{protocol} {display_url(url)}"
        self._api_key = api_key
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        # One client per reranker: its connection pool is reused across searches (and threads).
        self._client = httpx.Client(timeout=httpx.Timeout(timeout), headers=headers)

    def close(self) -> None:
        self._client.close()

    def score(self, query: str, documents: Sequence[str]) -> list[float]:
        if not documents:
            return []
        if self.protocol == "cohere":
            return self._score_batch(query, documents)
        scores: list[float] = []
        for start in range(0, len(documents), TEI_BATCH_SIZE):
            scores.extend(self._score_batch(query, documents[start : start + TEI_BATCH_SIZE]))
        return scores

    def _score_batch(self, query: str, documents: Sequence[str]) -> list[float]:
        body: dict[str, Any]
        if self.protocol == "tei":
            # truncate: a long query plus a chunk may pass the model's window; TEI refuses it otherwise.
            body = {"query": query, "texts": list(documents), "raw_scores": False, "truncate": True}
        else:
            body = {"query": query, "documents": list(documents), "top_n": len(documents)}
            if self.model:
                body["model"] = self.model
        payload = self._post(body)
        if self.protocol == "tei":
            results, score_key = payload, "score"
        else:
            results = payload.get("results") if isinstance(payload, dict) else None
            score_key = "relevance_score"
        return self._scores_by_index(results, score_key, len(documents))

    def _post(self, body: dict[str, Any]) -> Any:
        where = display_url(self.url)
        try:
            response = self._client.post(self.url, json=body)
        except httpx.TimeoutException as exc:
            raise RerankError(f"reranker at {where} timed out after {self.timeout:g} s") from exc
        except httpx.ConnectError as exc:
            raise RerankError(f"could not connect to reranker at {where}: {exc}") from exc
        except httpx.TransportError as exc:
            raise RerankError(f"request to reranker at {where} failed: {exc}") from exc
        if not response.is_success:
            text = response.text[:ERROR_BODY_CHARS]
            if self._api_key:
                text = text.replace(self._api_key, "***")
            raise RerankError(f"reranker at {where} answered HTTP {response.status_code}: {text}")
        try:
            return response.json()
        except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
            raise RerankError(f"reranker at {where} answered with invalid JSON") from exc

    def _scores_by_index(self, results: Any, score_key: str, count: int) -> list[float]:
        where = display_url(self.url)
        expected = f'a list of {{"index": int, "{score_key}": number}}'
        if not isinstance(results, list):
            raise RerankError(f"reranker at {where} answered with an unexpected shape; expected {expected}")
        scores: dict[int, float] = {}
        for item in results:
            parsed = _parse_result(item, score_key)
            if parsed is None:
                raise RerankError(
                    f"reranker at {where} answered with an unexpected shape; "
                    f"expected {expected}, got {item!r:.100}"
                )
            index, score = parsed
            if not 0 <= index < count or index in scores:
                raise RerankError(f"reranker at {where} answered with a bad or repeated index {index}")
            scores[index] = score
        missing = [index for index in range(count) if index not in scores]
        if missing:
            listed = ", ".join(str(index) for index in missing[:10])
            raise RerankError(f"reranker at {where} returned no score for document(s) {listed}")
        return [scores[index] for index in range(count)]


def _parse_result(item: Any, score_key: str) -> tuple[int, float] | None:
    """(index, score) from one result, or None when it is not that shape."""
    if not isinstance(item, dict):
        return None
    index, score = item.get("index"), item.get(score_key)
    if isinstance(index, bool) or not isinstance(index, int):
        return None
    if isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score):
        return None
    return index, float(score)


class CrossEncoderReranker:
    """A sentence-transformers CrossEncoder on the CPU, loaded from a local directory on first use."""

    def __init__(self, model_dir: str | Path) -> None:
        self.model_dir = Path(model_dir).expanduser()
        self.name = f"cross-encoder:{self.model_dir}"
        self._model: Any = None
        # The model is shared by threads (MCP tool calls run in a thread pool).
        self._lock = threading.Lock()

    def _load(self) -> Any:
        if not self.model_dir.is_dir():
            raise RerankError(
                f"RERANK_MODEL_PATH {self.model_dir} is not a directory; it must hold a local model"
            )
        # Never download: the path is a local model or nothing.
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ["TRANSFORMERS_OFFLINE"] = "1"
        from sentence_transformers import CrossEncoder
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()
        try:
            return CrossEncoder(str(self.model_dir), device="cpu", local_files_only=True)
        except (OSError, ValueError) as exc:
            raise RerankError(f"could not load the cross-encoder in {self.model_dir}: {exc}") from exc

    def score(self, query: str, documents: Sequence[str]) -> list[float]:
        if not documents:
            return []
        with self._lock:
            if self._model is None:
                self._model = self._load()
            scores = self._model.predict(
                [(query, document) for document in documents], convert_to_numpy=True, show_progress_bar=False
            )
        if scores.ndim != 1:
            raise RerankError(
                f"the cross-encoder in {self.model_dir} gives {scores.shape[-1]} scores per pair, not 1"
            )
        return [float(value) for value in scores]


def get_reranker() -> Reranker | None:
    """The configured reranker, or None when neither RERANK_URL nor RERANK_MODEL_PATH is set."""
    return _build_reranker(
        settings.RERANK_URL,
        settings.RERANK_PROTOCOL,
        settings.RERANK_API_KEY,
        settings.RERANK_MODEL,
        settings.RERANK_MODEL_PATH,
        float(settings.RERANK_TIMEOUT),
    )


@functools.lru_cache(maxsize=4)
def _build_reranker(
    url: str, protocol: str, api_key: str, model: str, model_path: str, timeout: float
) -> Reranker | None:
    # Cached per settings values, so a search reuses one HTTP client or one loaded model.
    if url and model_path:
        raise ImproperlyConfigured("set RERANK_URL or RERANK_MODEL_PATH, not both")
    if url:
        return HttpReranker(url, protocol=protocol, api_key=api_key, model=model, timeout=timeout)
    if model_path:
        return CrossEncoderReranker(model_path)
    return None


def rerank_order(
    query: str, documents: Sequence[str], reranker: Reranker, top_n: int
) -> list[tuple[int, float | None]]:
    """Rerank the first top_n documents; return (original index, score) for every document.

    The head is ordered best score first (ties keep their original order); the documents
    past top_n follow in their original order with score None, meaning "not reranked".
    """
    if top_n < 1:
        raise ValueError(f"top_n must be at least 1, got {top_n}")
    head = documents[:top_n]
    if not head:
        return []
    scores = reranker.score(query, head)
    if len(scores) != len(head):
        raise RerankError(f"reranker {reranker.name} returned {len(scores)} scores for {len(head)} documents")
    if not all(math.isfinite(score) for score in scores):
        raise RerankError(f"reranker {reranker.name} returned a score that is not a finite number")
    ranked: list[tuple[int, float | None]] = [
        (index, score) for index, score in sorted(enumerate(scores), key=lambda pair: -pair[1])
    ]
    ranked.extend((index, None) for index in range(len(head), len(documents)))
    return ranked
