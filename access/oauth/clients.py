"""OAuth clients: registered dynamically (RFC 7591), or known by their client ID metadata document
(the client_id is an https URL whose JSON describes the client; fetched, checked, cached a day)."""

from __future__ import annotations

import json
import logging
import ssl
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

import httpx
from django.conf import settings
from django.utils import timezone
from mcp.shared.auth import InvalidRedirectUriError, OAuthClientInformationFull
from pydantic import AnyUrl, ValidationError

from access.models import OAuthClient
from access.oauth import config
from mnemosyne.lib.addresses import PrivateAddress, check_public_host

logger = logging.getLogger(__name__)

DOCUMENT_MAX_BYTES = 64 * 1024
DOCUMENT_TIMEOUT_SECONDS = 5.0
DOCUMENT_CACHE = timedelta(days=1)


class Client(OAuthClientInformationFull):
    """A client as the SDK's handlers see it; a loopback redirect URI may use any port (RFC 8252 §7.3)."""

    def validate_redirect_uri(self, redirect_uri: AnyUrl | None) -> AnyUrl:
        try:
            return super().validate_redirect_uri(redirect_uri)
        except InvalidRedirectUriError:
            if redirect_uri is None or not _matches_loopback(str(redirect_uri), self.redirect_uris or []):
                raise
            return redirect_uri


def _matches_loopback(uri: str, registered: list[AnyUrl]) -> bool:
    asked = urlsplit(uri)
    if asked.scheme != "http" or not config.is_loopback(asked.hostname):
        return False
    for known in registered:
        parts = urlsplit(str(known))
        if (parts.scheme, parts.hostname, parts.path, parts.query) == (
            "http",
            asked.hostname,
            asked.path,
            asked.query,
        ):
            return True
    return False


class DocumentRefused(Exception):
    """A client ID metadata document that cannot be used; the message says why."""


def find(client_id: str) -> Client | None:
    row = OAuthClient.objects.filter(client_id=client_id).first()
    stale = row is not None and row.from_metadata_document and _is_stale(row)
    if row is not None and not stale:
        return Client.model_validate(row.information)
    if not is_document_url(client_id):
        return None
    try:
        information = fetch_document(client_id)
    except DocumentRefused as exc:
        logger.info("client ID metadata document %s refused: %s", client_id, exc)
        return None
    OAuthClient.objects.update_or_create(
        client_id=client_id,
        defaults={
            "name": information.client_name or "",
            "information": information.model_dump(mode="json", exclude_none=True),
            "from_metadata_document": True,
            "fetched_at": timezone.now(),
        },
    )
    return information


def _is_stale(row: OAuthClient) -> bool:
    return row.fetched_at is None or timezone.now() - row.fetched_at > DOCUMENT_CACHE


def register(information: OAuthClientInformationFull) -> None:
    """Keep a dynamically registered client; raises ValueError naming a refused redirect URI."""
    for uri in information.redirect_uris or []:
        problem = config.redirect_uri_problem(str(uri))
        if problem:
            raise ValueError(problem)
    OAuthClient.objects.create(
        client_id=information.client_id,
        name=(information.client_name or "")[:200],
        information=information.model_dump(mode="json", exclude_none=True),
    )


def is_document_url(client_id: str) -> bool:
    parts = urlsplit(client_id)
    return parts.scheme == "https" and bool(parts.hostname) and parts.path not in ("", "/")


def fetch_document(url: str) -> Client:
    """Fetch and check a client ID metadata document (draft-ietf-oauth-client-id-metadata-document)."""
    host = urlsplit(url).hostname or ""
    _check_host(host)
    try:
        # The system's trust store (ssl's defaults honour SSL_CERT_FILE); no redirects followed.
        with (
            httpx.Client(verify=ssl.create_default_context(), timeout=DOCUMENT_TIMEOUT_SECONDS) as http,
            http.stream("GET", url, headers={"Accept": "application/json"}) as response,
        ):
            if response.status_code != 200:
                raise DocumentRefused(f"answered HTTP {response.status_code}")
            body = b""
            for piece in response.iter_bytes():
                body += piece
                if len(body) > DOCUMENT_MAX_BYTES:
                    raise DocumentRefused(f"larger than {DOCUMENT_MAX_BYTES} bytes")
    except httpx.HTTPError as exc:
        raise DocumentRefused(f"could not be fetched ({type(exc).__name__})") from None
    try:
        document: Any = json.loads(body)
    except ValueError:
        raise DocumentRefused("is not JSON") from None
    if not isinstance(document, dict) or document.get("client_id") != url:
        raise DocumentRefused("its client_id is not the URL it was fetched from")
    if document.get("client_secret") or document.get("client_secret_expires_at"):
        raise DocumentRefused("a metadata document must not carry a client secret")
    document["token_endpoint_auth_method"] = "none"
    # A document that names no scope may ask for any of ours (the user still consents to each).
    document.setdefault("scope", " ".join(config.SCOPES))
    try:
        information = Client.model_validate(document)
    except ValidationError as exc:
        raise DocumentRefused(f"is not valid client metadata ({exc.error_count()} errors)") from None
    if not information.redirect_uris:
        raise DocumentRefused("names no redirect_uris")
    for uri in information.redirect_uris:
        problem = config.redirect_uri_problem(str(uri))
        if problem:
            raise DocumentRefused(problem)
    return information


def _check_host(host: str) -> None:
    if settings.MCP_OAUTH_PRIVATE_CLIENT_DOCUMENTS:
        return
    try:
        check_public_host(host)
    except OSError:
        raise DocumentRefused("its host does not resolve") from None
    except PrivateAddress as exc:
        raise DocumentRefused(f"{exc} (MCP_OAUTH_PRIVATE_CLIENT_DOCUMENTS allows it)") from None
