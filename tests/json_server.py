"""What the tests' small local HTTP services share: a threading server that stays quiet about
clients that hung up, and a handler that logs nothing and answers JSON."""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A handler released after the client gave up writes to a closed socket; that is expected.
        pass


class JSONHandler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass

    def reply(self, status: int, payload: Any) -> None:
        """`payload` as JSON (bytes are sent as they are, still labelled JSON)."""
        raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)
