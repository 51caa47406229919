"""A small local /rerank server (TEI and Cohere styles) for the reranker and search tests."""

from __future__ import annotations

import json
import random
import threading
from dataclasses import dataclass, field
from typing import Any

from tests.json_server import JSONHandler


def overlap(query: str, document: str) -> float:
    """The fake model: the share of the query's words the document contains."""
    words = set(query.split())
    return len(words & set(document.split())) / len(words)


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class RerankServer:
    base: str
    requests: list[Recorded] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)


def make_handler(state: RerankServer) -> type[JSONHandler]:
    class Handler(JSONHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state.requests.append(Recorded(self.path, dict(self.headers), body))
            if self.path == "/stall":
                state.release.wait(timeout=30)
                return self.reply(200, [])
            if self.path == "/error":
                # Echoes the credentials, as a careless proxy might: the error must not.
                return self.reply(500, f"boom {self.headers.get('Authorization')}".encode())
            if self.path == "/not-json":
                return self.reply(200, b"<html>not json</html>")
            if self.path == "/wrong-shape":
                return self.reply(200, {"unexpected": True})
            texts = body["texts"] if "texts" in body else body["documents"]
            scored = [(index, overlap(body["query"], text)) for index, text in enumerate(texts)]
            random.Random(len(state.requests)).shuffle(scored)
            if self.path == "/missing-index":
                scored = [pair for pair in scored if pair[0] != 1]
            if self.path == "/cohere":
                return self.reply(200, {"results": [{"index": i, "relevance_score": s} for i, s in scored]})
            return self.reply(200, [{"index": i, "score": s} for i, s in scored])

    return Handler
