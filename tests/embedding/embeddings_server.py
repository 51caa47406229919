"""A local OpenAI-compatible /embeddings server for the remote embedder's tests.

Its "model" hashes words into DIMENSIONS signed buckets, so texts sharing words get similar vectors
(search finds them) and a text always gets the same vector. It answers in shuffled order, as the
API allows (each vector carries its `index`). Model names ask for failures: `error-500`, `stall`,
`wrong-shape`, `short` (one vector too few); a name starting `slow-` takes 0.2 s per request.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from tests.json_server import JSONHandler, QuietServer

DIMENSIONS = 64


def fake_vector(text: str) -> list[float]:
    vector = [0.0] * DIMENSIONS
    for word in re.findall(r"\w+", text.lower()):
        digest = hashlib.sha256(word.encode()).digest()
        vector[digest[0] % DIMENSIONS] += 1.0 if digest[1] % 2 else -1.0
    if not any(vector):
        vector[0] = 1.0
    return [value * 3.0 for value in vector]  # not normalised: the client normalises


@dataclass
class EmbeddingsServer:
    base: str = ""
    requests: list[dict[str, Any]] = field(default_factory=list)
    authorizations: list[str | None] = field(default_factory=list)


def _handler(state: EmbeddingsServer) -> type[JSONHandler]:
    class Handler(JSONHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state.requests.append(body)
            state.authorizations.append(self.headers.get("Authorization"))
            if self.path != "/v1/embeddings":
                return self.reply(404, {"error": {"message": "not found"}})
            model, texts = body["model"], body["input"]
            if model == "error-500":
                return self.reply(500, f"boom {self.headers.get('Authorization')}".encode())
            if model == "stall":
                time.sleep(3)
            if model.startswith("slow-"):
                time.sleep(0.2)
            if model == "wrong-shape":
                return self.reply(200, {"vectors": []})
            data = [
                {"object": "embedding", "index": i, "embedding": fake_vector(t)} for i, t in enumerate(texts)
            ]
            if model == "short" and len(texts) > 1:
                data = data[:-1]
            random.Random(len(state.requests)).shuffle(data)
            return self.reply(200, {"object": "list", "model": model, "data": data})

    return Handler


@contextmanager
def embeddings_server() -> Iterator[EmbeddingsServer]:
    state = EmbeddingsServer()
    httpd = QuietServer(("127.0.0.1", 0), _handler(state))
    state.base = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield state
    finally:
        httpd.shutdown()
