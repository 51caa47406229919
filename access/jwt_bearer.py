"""Bearer JWTs from an identity provider: signature by a JWKS key, issuer, audience, expiry.

Off unless MCP_JWT_ISSUER is set (with MCP_JWT_AUDIENCE and MCP_JWT_JWKS_URL). The JWKS is fetched
over HTTP and cached for MCP_JWT_JWKS_CACHE_SECONDS; a token naming a key id the cache lacks
refetches it once (the IdP rotated its keys), at most every MCP_JWT_JWKS_MIN_REFETCH_SECONDS, so a
flood of made-up key ids costs the IdP one request per interval. Only asymmetric algorithms are
accepted (MCP_JWT_ALGORITHMS); `exp`, `iss`, `aud` and `sub` are required, `exp`/`nbf` are checked
with MCP_JWT_LEEWAY_SECONDS of leeway.

Claims map to access: scopes from MCP_JWT_SCOPE_CLAIM ("scope", space separated; a list in "scp"
is read too), of which only "read" and "write" mean anything; libraries from MCP_JWT_LIBRARIES_CLAIM
(a list of library uids; absent means every library, as for a token without libraries).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import jwt
from django.conf import settings

logger = logging.getLogger(__name__)

KNOWN_SCOPES = ("read", "write")


class JWTRejected(Exception):
    """The token is not a JWT we accept; `expired` when only its lifetime is the problem."""

    def __init__(self, reason: str, *, expired: bool = False) -> None:
        super().__init__(reason)
        self.expired = expired


@dataclass(frozen=True)
class JWTConfig:
    issuer: str
    audience: str
    jwks_url: str
    algorithms: tuple[str, ...]
    scope_claim: str
    libraries_claim: str
    cache_seconds: float
    min_refetch_seconds: float
    http_timeout: float
    leeway_seconds: int

    @classmethod
    def from_settings(cls) -> JWTConfig | None:
        """The configuration, or None when JWT bearer tokens are off."""
        if not settings.MCP_JWT_ISSUER:
            return None
        return cls(
            issuer=settings.MCP_JWT_ISSUER,
            audience=settings.MCP_JWT_AUDIENCE,
            jwks_url=settings.MCP_JWT_JWKS_URL,
            algorithms=tuple(settings.MCP_JWT_ALGORITHMS),
            scope_claim=settings.MCP_JWT_SCOPE_CLAIM,
            libraries_claim=settings.MCP_JWT_LIBRARIES_CLAIM,
            cache_seconds=settings.MCP_JWT_JWKS_CACHE_SECONDS,
            min_refetch_seconds=settings.MCP_JWT_JWKS_MIN_REFETCH_SECONDS,
            http_timeout=settings.MCP_JWT_HTTP_TIMEOUT,
            leeway_seconds=settings.MCP_JWT_LEEWAY_SECONDS,
        )


@dataclass(frozen=True)
class VerifiedJWT:
    subject: str
    issuer: str
    scopes: frozenset[str]
    # None: the token names no libraries (every library); else the uids it names.
    library_uids: frozenset[str] | None


class JWKSCache:
    """The IdP's signing keys by key id, fetched over HTTP and cached; thread-safe."""

    def __init__(
        self,
        url: str,
        *,
        lifetime: float,
        min_refetch_interval: float,
        timeout: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.url = url
        self.lifetime = lifetime
        self.min_refetch_interval = min_refetch_interval
        self.timeout = timeout
        self._clock = clock
        self._lock = threading.Lock()
        self._keys: list[dict[str, Any]] = []
        self._fetched_at: float | None = None

    def key_for(self, kid: str | None) -> dict[str, Any]:
        """The JWK for `kid` (the only signing key, when the token names none); JWTRejected if unknown."""
        with self._lock:
            now = self._clock()
            stale = self._fetched_at is None or now - self._fetched_at >= self.lifetime
            if stale:
                self._refresh(now)
            key = self._find(kid)
            if key is None and not stale and now - (self._fetched_at or now) >= self.min_refetch_interval:
                # Perhaps the IdP rotated its keys since we last looked.
                self._refresh(now)
                key = self._find(kid)
        if key is None:
            raise JWTRejected(f"no signing key with id {kid!r} in the JWKS")
        return key

    def _find(self, kid: str | None) -> dict[str, Any] | None:
        if kid is None:
            return self._keys[0] if len(self._keys) == 1 else None
        return next((key for key in self._keys if key.get("kid") == kid), None)

    def _refresh(self, now: float) -> None:
        # A failed fetch counts as a fetch too: an unreachable IdP is not asked again at once.
        self._fetched_at = now
        try:
            response = httpx.get(self.url, timeout=self.timeout, follow_redirects=False)
            response.raise_for_status()
            document = response.json()
        except (httpx.HTTPError, ValueError) as exc:
            # Keep the keys we had: tokens signed by them still verify while the IdP is away.
            logger.error("could not fetch the JWKS from %s: %s", self.url, exc)
            return
        keys = document.get("keys") if isinstance(document, dict) else None
        if not isinstance(keys, list):
            logger.error("the JWKS at %s has no 'keys' list", self.url)
            return
        self._keys = [key for key in keys if isinstance(key, dict) and key.get("use", "sig") == "sig"]


_caches: dict[tuple[str, float, float, float], JWKSCache] = {}
_caches_lock = threading.Lock()


def jwks_cache(config: JWTConfig) -> JWKSCache:
    """One cache per JWKS configuration per process."""
    identity = (config.jwks_url, config.cache_seconds, config.min_refetch_seconds, config.http_timeout)
    with _caches_lock:
        if identity not in _caches:
            _caches[identity] = JWKSCache(
                config.jwks_url,
                lifetime=config.cache_seconds,
                min_refetch_interval=config.min_refetch_seconds,
                timeout=config.http_timeout,
            )
        return _caches[identity]


def verify(raw: str, config: JWTConfig, keys: JWKSCache) -> VerifiedJWT:
    """The verified token's subject, scopes and libraries; JWTRejected with the reason otherwise."""
    try:
        header = jwt.get_unverified_header(raw)
    except jwt.InvalidTokenError as exc:
        raise JWTRejected(f"not a JWT: {exc}") from None
    algorithm = header.get("alg")
    if algorithm not in config.algorithms:
        raise JWTRejected(f"algorithm {algorithm!r} is not allowed")
    kid = header.get("kid")
    jwk = keys.key_for(kid if isinstance(kid, str) else None)
    try:
        # A JWK without "alg" takes the token's (allowed) one; a key of another type fails here.
        key = jwt.PyJWK(jwk, algorithm=jwk.get("alg") or algorithm)
        claims = jwt.decode(
            raw,
            key=key,
            algorithms=list(config.algorithms),
            audience=config.audience,
            issuer=config.issuer,
            leeway=config.leeway_seconds,
            options={"require": ["exp", "iss", "aud", "sub"]},
        )
    except jwt.ExpiredSignatureError:
        raise JWTRejected("the token has expired", expired=True) from None
    except (jwt.InvalidTokenError, jwt.PyJWKError) as exc:
        raise JWTRejected(str(exc)) from None
    subject = claims["sub"]
    if not isinstance(subject, str) or not subject:
        raise JWTRejected("the sub claim must be a non-empty string")
    return VerifiedJWT(
        subject=subject,
        issuer=config.issuer,
        scopes=scopes_from_claims(claims, config.scope_claim),
        library_uids=library_uids_from_claims(claims, config.libraries_claim),
    )


def _words(value: Any) -> list[str] | None:
    """A claim as a list of strings: space separated text or a list of strings; None if neither."""
    if isinstance(value, str):
        return value.split()
    if isinstance(value, list) and all(isinstance(part, str) for part in value):
        return list(value)
    return None


def scopes_from_claims(claims: dict[str, Any], scope_claim: str) -> frozenset[str]:
    """Our scopes ("read", "write") among the token's; others are ignored."""
    granted: set[str] = set()
    for name in dict.fromkeys((scope_claim, "scp")):
        words = _words(claims.get(name))
        if words is None and name in claims:
            raise JWTRejected(f"the {name} claim must be a string or a list of strings")
        granted.update(words or [])
    return frozenset(granted.intersection(KNOWN_SCOPES))


def library_uids_from_claims(claims: dict[str, Any], libraries_claim: str) -> frozenset[str] | None:
    if libraries_claim not in claims:
        return None
    words = _words(claims[libraries_claim])
    if words is None:
        raise JWTRejected(f"the {libraries_claim} claim must be a list of library uids")
    return frozenset(words)
