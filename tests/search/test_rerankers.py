"""Rerankers: the HTTP backend against a real local server speaking TEI and Cohere, and the pure ordering."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from mnemosyne.search.rerankers import (
    CrossEncoderReranker,
    HttpReranker,
    RerankError,
    get_reranker,
    rerank_order,
)
from tests.search.rerank_server import RerankServer, overlap

QUERY = "how do cats sleep"
DOCUMENTS = ["dogs bark", "cats sleep all day", "how birds fly", "do cats sleep how", "cats"]


@pytest.fixture
def make_reranker() -> Iterator[Any]:
    created: list[HttpReranker] = []

    def make(url: str, **options: Any) -> HttpReranker:
        options.setdefault("protocol", "tei")
        created.append(HttpReranker(url, **options))
        return created[-1]

    yield make
    for reranker in created:
        reranker.close()


@pytest.mark.parametrize("protocol", ["tei", "cohere"])
def test_scores_map_back_to_their_documents_whatever_order_the_server_answers_in(
    server: RerankServer, make_reranker: Any, protocol: str
) -> None:
    reranker = make_reranker(f"{server.base}/{protocol}", protocol=protocol)
    assert reranker.score(QUERY, DOCUMENTS) == [overlap(QUERY, document) for document in DOCUMENTS]


def test_tei_requests_are_sent_in_batches_of_32(server: RerankServer, make_reranker: Any) -> None:
    documents = [f"doc {index} cats" if index % 3 else f"doc {index}" for index in range(70)]
    scores = make_reranker(f"{server.base}/tei").score("cats", documents)
    assert [len(request.body["texts"]) for request in server.requests] == [32, 32, 6]
    assert scores == [overlap("cats", document) for document in documents]
    assert server.requests[0].body == {
        "query": "cats",
        "texts": documents[:32],
        "raw_scores": False,
        "truncate": True,
    }


@pytest.mark.parametrize(("model", "sent"), [("rerank-v3.5", {"model": "rerank-v3.5"}), ("", {})])
def test_cohere_sends_every_document_at_once_with_top_n_and_the_model_when_set(
    server: RerankServer, make_reranker: Any, model: str, sent: dict[str, str]
) -> None:
    documents = [f"doc {index}" for index in range(70)]
    make_reranker(f"{server.base}/cohere", protocol="cohere", model=model).score("doc", documents)
    (request,) = server.requests
    assert request.body == {"query": "doc", "documents": documents, "top_n": 70, **sent}


def test_the_api_key_is_sent_as_a_bearer_token_only_when_set(
    server: RerankServer, make_reranker: Any
) -> None:
    make_reranker(f"{server.base}/tei", api_key="sekret-key").score(QUERY, DOCUMENTS)
    make_reranker(f"{server.base}/tei").score(QUERY, DOCUMENTS)
    with_key, without_key = (request.headers for request in server.requests)
    assert with_key["Authorization"] == "Bearer sekret-key"
    assert "Authorization" not in without_key


def test_no_documents_makes_no_request(server: RerankServer, make_reranker: Any) -> None:
    assert make_reranker(f"{server.base}/tei").score(QUERY, []) == []
    assert server.requests == []


def test_an_http_error_names_the_status_and_never_the_api_key(
    server: RerankServer, make_reranker: Any
) -> None:
    reranker = make_reranker(f"{server.base}/error", api_key="sekret-key")
    with pytest.raises(RerankError, match="answered HTTP 500") as caught:
        reranker.score(QUERY, DOCUMENTS)
    assert "sekret-key" not in str(caught.value)
    assert "sekret-key" not in reranker.name


@pytest.mark.parametrize(
    ("path", "protocol", "message"),
    [
        ("not-json", "tei", "invalid JSON"),
        ("wrong-shape", "tei", "unexpected shape"),
        ("wrong-shape", "cohere", "unexpected shape"),
        ("tei", "cohere", "unexpected shape"),
        ("missing-index", "tei", r"no score for document\(s\) 1"),
    ],
)
def test_a_malformed_answer_is_a_rerank_error(
    server: RerankServer, make_reranker: Any, path: str, protocol: str, message: str
) -> None:
    with pytest.raises(RerankError, match=message):
        make_reranker(f"{server.base}/{path}", protocol=protocol).score(QUERY, DOCUMENTS)


def test_a_stalled_server_is_a_rerank_error_within_the_timeout(
    server: RerankServer, make_reranker: Any
) -> None:
    reranker = make_reranker(f"{server.base}/stall", timeout=0.3)
    started = time.monotonic()
    with pytest.raises(RerankError, match=r"timed out after 0\.3 s"):
        reranker.score(QUERY, DOCUMENTS)
    assert time.monotonic() - started < 3
    server.release.set()


def test_a_refused_connection_is_a_rerank_error(make_reranker: Any) -> None:
    # Bound but not listening: the port is ours, and connecting to it is refused.
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        with pytest.raises(RerankError, match=r"could not connect to reranker at http://127\.0\.0\.1"):
            make_reranker(f"http://127.0.0.1:{port}/rerank").score(QUERY, DOCUMENTS)


def test_the_name_hides_credentials_in_the_url(make_reranker: Any) -> None:
    reranker = make_reranker("https://user:pw@rerank.example/v1/rerank?key=abc", protocol="cohere")
    assert reranker.name == "http:cohere https://rerank.example/v1/rerank"


@dataclass
class FixedScores:
    scores: dict[str, float]
    name: str = "fixed"
    calls: list[list[str]] = field(default_factory=list)

    def score(self, query: str, documents: Sequence[str]) -> list[float]:
        self.calls.append(list(documents))
        return [self.scores[document] for document in documents]


def test_rerank_order_puts_the_best_scored_head_first_then_the_tail_unscored() -> None:
    reranker = FixedScores({"a": 0.1, "b": 0.9, "c": 0.5, "d": 0.5})
    order = rerank_order("q", ["a", "b", "c", "d", "e", "f"], reranker, top_n=4)
    # c and d tie and keep their original order; e and f were not scored
    assert order == [(1, 0.9), (2, 0.5), (3, 0.5), (0, 0.1), (4, None), (5, None)]
    assert reranker.calls == [["a", "b", "c", "d"]]


def test_rerank_order_scores_everything_when_top_n_covers_it() -> None:
    assert rerank_order("q", ["a", "b"], FixedScores({"a": 0.2, "b": 0.3}), top_n=50) == [(1, 0.3), (0, 0.2)]


def test_rerank_order_of_nothing_does_not_call_the_reranker() -> None:
    reranker = FixedScores({})
    assert rerank_order("q", [], reranker, top_n=5) == []
    assert reranker.calls == []


def test_rerank_order_rejects_a_reranker_that_returns_the_wrong_number_of_scores() -> None:
    class Short(FixedScores):
        def score(self, query: str, documents: Sequence[str]) -> list[float]:
            return [1.0]

    with pytest.raises(RerankError, match="returned 1 scores for 2 documents"):
        rerank_order("q", ["a", "b"], Short({}), top_n=5)


def test_rerank_order_rejects_a_top_n_below_one() -> None:
    with pytest.raises(ValueError, match="top_n must be at least 1"):
        rerank_order("q", ["a"], FixedScores({"a": 1.0}), top_n=0)


def test_get_reranker_is_none_when_unconfigured(settings: Any) -> None:
    settings.RERANK_URL = ""
    settings.RERANK_MODEL_PATH = ""
    assert get_reranker() is None


def test_get_reranker_builds_one_http_reranker_per_configuration(settings: Any) -> None:
    settings.RERANK_URL = "http://127.0.0.1:9/rerank"
    settings.RERANK_MODEL_PATH = ""
    settings.RERANK_PROTOCOL = "cohere"
    settings.RERANK_TIMEOUT = 2.5
    reranker = get_reranker()
    assert isinstance(reranker, HttpReranker)
    assert reranker.name == "http:cohere http://127.0.0.1:9/rerank"
    assert reranker.timeout == 2.5
    assert get_reranker() is reranker
    settings.RERANK_TIMEOUT = 3.0
    assert get_reranker() is not reranker


def test_get_reranker_builds_a_cross_encoder_for_a_model_path(settings: Any, tmp_path: Path) -> None:
    settings.RERANK_URL = ""
    settings.RERANK_MODEL_PATH = str(tmp_path)
    reranker = get_reranker()
    assert isinstance(reranker, CrossEncoderReranker)
    assert reranker.name == f"cross-encoder:{tmp_path}"


def test_a_cross_encoder_without_its_directory_fails_clearly_on_use(tmp_path: Path) -> None:
    reranker = CrossEncoderReranker(tmp_path / "absent")  # constructing it loads nothing
    with pytest.raises(RerankError, match="absent is not a directory"):
        reranker.score(QUERY, DOCUMENTS)


@pytest.mark.slow
def test_a_cross_encoder_scores_each_document_from_a_local_model(tmp_path: Path) -> None:
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *sorted({w for d in DOCUMENTS for w in d.split()})]
    (tmp_path / "vocab.txt").write_text("\n".join(words) + "\n")
    config = BertConfig(
        vocab_size=len(words),
        hidden_size=8,
        num_hidden_layers=1,
        num_attention_heads=1,
        intermediate_size=16,
        max_position_embeddings=64,
    )
    config.num_labels = 1  # one relevance score per pair
    BertForSequenceClassification(config).save_pretrained(tmp_path)
    BertTokenizer(str(tmp_path / "vocab.txt")).save_pretrained(tmp_path)
    reranker = CrossEncoderReranker(tmp_path)
    scores = reranker.score(QUERY, DOCUMENTS)
    assert len(scores) == len(DOCUMENTS)
    assert all(isinstance(score, float) for score in scores)
    assert reranker.score(QUERY, DOCUMENTS) == scores
    assert [index for index, _ in rerank_order(QUERY, DOCUMENTS, reranker, top_n=3)][3:] == [3, 4]


@pytest.mark.slow
def test_a_directory_without_a_model_is_a_clear_load_error(tmp_path: Path) -> None:
    with pytest.raises(RerankError, match="could not load the cross-encoder in"):
        CrossEncoderReranker(tmp_path).score(QUERY, DOCUMENTS)
