"""A person at a browser, for OAuth tests: signs in to Mnemosyne's sign-in page and answers its
consent page; and an https server publishing a client ID metadata document."""

from __future__ import annotations

import contextlib
import datetime
import http.server
import ipaddress
import json
import ssl
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx


@dataclass
class Browser:
    """A signed-in session (cookies) that follows the authorization server's redirects itself and
    stops at the client's redirect URI, as a browser hands it to the client."""

    base: str
    username: str
    password: str
    # Form fields sent with the consent page's answer (besides the CSRF token).
    answer: dict[str, str | list[str]] = field(
        default_factory=lambda: {
            "decision": "allow",
            "scope_read": "on",
            "scope_write": "on",
            "all_libraries": "on",
        }
    )
    http: httpx.Client = field(init=False)
    # The client redirect URI the last authorization ended at, with its query.
    landed: str = ""

    def __post_init__(self) -> None:
        self.http = httpx.Client(timeout=30, follow_redirects=False)
        page = self.http.get(f"{self.base}/oauth/login/")
        page.raise_for_status()
        signed_in = self.http.post(
            f"{self.base}/oauth/login/",
            data={
                "username": self.username,
                "password": self.password,
                "csrfmiddlewaretoken": self.http.cookies["csrftoken"],
                "next": "/oauth/login/",
            },
        )
        assert signed_in.status_code == 302, signed_in.text

    def authorize(self, url: str) -> httpx.Response:
        """Open an authorization URL; answer the consent page; the response that leaves this server."""
        response = self.http.get(url)
        while response.status_code == 302 and response.headers["location"].startswith((self.base, "/oauth/")):
            location = response.headers["location"]
            target = location if location.startswith("http") else self.base + location
            response = self.http.get(target)
            if response.status_code == 200 and "/oauth/consent/" in target:
                response = self.http.post(
                    target, data={**self.answer, "csrfmiddlewaretoken": self.http.cookies["csrftoken"]}
                )
        if response.status_code == 302:
            self.landed = response.headers["location"]
        return response

    def query(self) -> dict[str, str]:
        return {key: values[0] for key, values in parse_qs(urlsplit(self.landed).query).items()}

    def close(self) -> None:
        self.http.close()


def self_signed(directory: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key, as PEM files."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return cert_path, key_path


@contextlib.contextmanager
def document_server(directory: Path, documents: dict[str, dict[str, object]]) -> Iterator[tuple[str, Path]]:
    """https://127.0.0.1:PORT serving each document at its path; yields the base URL and the CA file."""
    cert_path, key_path = self_signed(directory)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            document = documents.get(self.path)
            body = json.dumps(document).encode() if document is not None else b"{}"
            self.send_response(200 if document is not None else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_path, key_path)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}", cert_path
    finally:
        server.shutdown()
        server.server_close()
