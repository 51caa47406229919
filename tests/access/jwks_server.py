"""An identity provider for the JWT tests: locally generated keys and a JWKS served over HTTP.

The keys are made with `cryptography` on the spot; the JWKS server counts its fetches and can be
switched to another key set mid-test (key rotation).
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

ISSUER = "https://idp.example.test/"
AUDIENCE = "https://mnemosyne.example.test/mcp"


@dataclass(frozen=True)
class SigningKey:
    kid: str
    algorithm: str
    private_key: Any

    @property
    def public_jwk(self) -> dict[str, Any]:
        exporter = RSAAlgorithm if self.algorithm.startswith(("RS", "PS")) else ECAlgorithm
        jwk: dict[str, Any] = exporter.to_jwk(self.private_key.public_key(), as_dict=True)
        return {**jwk, "kid": self.kid, "alg": self.algorithm, "use": "sig"}

    def sign(self, claims: dict[str, Any], *, kid: str | None = None) -> str:
        return jwt.encode(
            claims, self.private_key, algorithm=self.algorithm, headers={"kid": kid or self.kid}
        )


def rsa_key(kid: str) -> SigningKey:
    return SigningKey(kid, "RS256", rsa.generate_private_key(public_exponent=65537, key_size=2048))


def ec_key(kid: str) -> SigningKey:
    return SigningKey(kid, "ES256", ec.generate_private_key(ec.SECP256R1()))


def claims(
    *,
    sub: str = "alice@example.test",
    scope: str | None = "read",
    libraries: list[str] | None = None,
    lifetime: int = 300,
    **overrides: Any,
) -> dict[str, Any]:
    """A token's claims as our IdP would issue them; overrides replace or (None) drop a claim."""
    now = int(time.time())
    body: dict[str, Any] = {"iss": ISSUER, "aud": AUDIENCE, "sub": sub, "iat": now, "exp": now + lifetime}
    if scope is not None:
        body["scope"] = scope
    if libraries is not None:
        body["mnemosyne_libraries"] = libraries
    for name, value in overrides.items():
        if value is None:
            body.pop(name, None)
        else:
            body[name] = value
    return body


@dataclass
class JWKSServer:
    url: str = ""
    keys: list[SigningKey] = field(default_factory=list)
    fetches: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def publish(self, *keys: SigningKey) -> None:
        with self.lock:
            self.keys = list(keys)

    def fetch_count(self) -> int:
        with self.lock:
            return self.fetches


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True


def _handler(state: JWKSServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            with state.lock:
                state.fetches += 1
                document = {"keys": [key.public_jwk for key in state.keys]}
            raw = json.dumps(document).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

    return Handler


@contextlib.contextmanager
def jwks_server(*keys: SigningKey) -> Iterator[JWKSServer]:
    """A JWKS at http://127.0.0.1:<port>/jwks.json publishing `keys` until told otherwise."""
    state = JWKSServer(keys=list(keys))
    server = _QuietServer(("127.0.0.1", 0), _handler(state))
    state.url = f"http://127.0.0.1:{server.server_address[1]}/jwks.json"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
