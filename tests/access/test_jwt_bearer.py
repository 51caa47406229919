"""JWT verification against a JWKS served over local HTTP: keys, claims, caching and rotation."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import Iterator
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization

from access.jwt_bearer import JWKSCache, JWTConfig, JWTRejected, verify
from tests.access.jwks_server import (
    AUDIENCE,
    ISSUER,
    JWKSServer,
    claims,
    ec_key,
    jwks_server,
    rsa_key,
)

FIRST = rsa_key("rsa-1")
SECOND = rsa_key("rsa-2")
ELLIPTIC = ec_key("ec-1")
STRANGER = rsa_key("rsa-1")  # claims the first key's id, signs with another key


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def idp() -> Iterator[JWKSServer]:
    with jwks_server(FIRST, ELLIPTIC) as state:
        yield state


@pytest.fixture
def clock() -> Clock:
    return Clock()


def b64(value: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()


def config_for(idp: JWKSServer) -> JWTConfig:
    return JWTConfig(
        issuer=ISSUER,
        audience=AUDIENCE,
        jwks_url=idp.url,
        algorithms=("RS256", "ES256"),
        scope_claim="scope",
        libraries_claim="mnemosyne_libraries",
        cache_seconds=300,
        min_refetch_seconds=30,
        http_timeout=2.0,
        leeway_seconds=30,
    )


def cache_for(idp: JWKSServer, clock: Clock) -> JWKSCache:
    return JWKSCache(idp.url, lifetime=300, min_refetch_interval=30, timeout=2.0, clock=clock)


def rejection(raw: str, idp: JWKSServer, clock: Clock) -> JWTRejected:
    with pytest.raises(JWTRejected) as caught:
        verify(raw, config_for(idp), cache_for(idp, clock))
    return caught.value


def test_it_accepts_a_token_signed_by_a_published_key_and_reads_its_claims(
    idp: JWKSServer, clock: Clock
) -> None:
    raw = FIRST.sign(claims(sub="alice", scope="read write openid", libraries=["lib_a", "lib_b"]))
    verified = verify(raw, config_for(idp), cache_for(idp, clock))
    assert verified.subject == "alice"
    assert verified.scopes == frozenset({"read", "write"})
    assert verified.library_uids == frozenset({"lib_a", "lib_b"})


def test_it_accepts_an_elliptic_curve_key_and_scopes_in_a_scp_list(idp: JWKSServer, clock: Clock) -> None:
    raw = ELLIPTIC.sign(claims(scope=None, scp=["read", "profile"]))
    verified = verify(raw, config_for(idp), cache_for(idp, clock))
    assert verified.scopes == frozenset({"read"})
    assert verified.library_uids is None  # no libraries claim: every library


@pytest.mark.parametrize(
    ("change", "expired"),
    [
        ({"aud": "https://someone-else.example/mcp"}, False),
        ({"iss": "https://evil.example/"}, False),
        ({"exp": None}, False),
        ({"sub": None}, False),
        ({"nbf": 4_000_000_000}, False),
        ({"exp": 1_000_000_000}, True),
    ],
    ids=["wrong-audience", "wrong-issuer", "no-exp", "no-sub", "not-yet-valid", "expired"],
)
def test_it_rejects_a_token_whose_claims_do_not_fit(
    idp: JWKSServer, clock: Clock, change: dict[str, Any], expired: bool
) -> None:
    refused = rejection(FIRST.sign(claims(**change)), idp, clock)
    assert refused.expired is expired


def test_expiry_has_a_small_leeway(idp: JWKSServer, clock: Clock) -> None:
    just_expired = claims(lifetime=-10)
    assert verify(FIRST.sign(just_expired), config_for(idp), cache_for(idp, clock)).subject
    assert rejection(FIRST.sign(claims(lifetime=-120)), idp, clock).expired


def test_it_rejects_a_signature_by_a_key_that_is_not_published(idp: JWKSServer, clock: Clock) -> None:
    assert "signature" in str(rejection(STRANGER.sign(claims()), idp, clock)).lower()


def test_it_rejects_a_token_whose_payload_was_changed_after_signing(idp: JWKSServer, clock: Clock) -> None:
    header, _, signature = FIRST.sign(claims(scope="read")).split(".")
    forged = b64(claims(scope="read write"))
    assert "signature" in str(rejection(f"{header}.{forged}.{signature}", idp, clock)).lower()


def test_it_rejects_symmetric_and_unsigned_algorithms(idp: JWKSServer, clock: Clock) -> None:
    # The classic confusion: the public key used as an HMAC secret.
    public_pem = FIRST.private_key.public_key().public_bytes(
        encoding=serialization.Encoding.PEM, format=serialization.PublicFormat.SubjectPublicKeyInfo
    )
    signing_input = f"{b64(dict(alg='HS256', kid='rsa-1', typ='JWT'))}.{b64(claims())}"
    mac = hmac.new(public_pem, signing_input.encode(), hashlib.sha256).digest()
    hmac_token = f"{signing_input}.{base64.urlsafe_b64encode(mac).rstrip(b'=').decode()}"
    unsigned = f"{b64(dict(alg='none', kid='rsa-1', typ='JWT'))}.{b64(claims())}."
    for raw in (hmac_token, unsigned):
        assert "not allowed" in str(rejection(raw, idp, clock))
    assert idp.fetch_count() == 0  # refused before any key was looked up


def test_it_rejects_what_is_not_a_jwt_without_asking_the_idp(idp: JWKSServer, clock: Clock) -> None:
    rejection("not-a-jwt", idp, clock)
    rejection("a.b.c", idp, clock)
    assert idp.fetch_count() == 0


def test_the_key_set_is_fetched_once_and_cached(idp: JWKSServer, clock: Clock) -> None:
    cache = cache_for(idp, clock)
    for _ in range(5):
        verify(FIRST.sign(claims()), config_for(idp), cache)
        verify(ELLIPTIC.sign(claims()), config_for(idp), cache)
    assert idp.fetch_count() == 1
    clock.now += 300  # the cache lifetime
    verify(FIRST.sign(claims()), config_for(idp), cache)
    assert idp.fetch_count() == 2


def test_an_unknown_key_id_refetches_once_so_a_rotated_key_is_found(idp: JWKSServer, clock: Clock) -> None:
    cache = cache_for(idp, clock)
    verify(FIRST.sign(claims()), config_for(idp), cache)
    idp.publish(SECOND)  # the IdP rotates
    clock.now += 31
    assert verify(SECOND.sign(claims(sub="bob")), config_for(idp), cache).subject == "bob"
    assert idp.fetch_count() == 2
    with pytest.raises(JWTRejected):
        verify(FIRST.sign(claims()), config_for(idp), cache)  # retired with the rotation


def test_made_up_key_ids_cannot_flood_the_idp(idp: JWKSServer, clock: Clock) -> None:
    cache = cache_for(idp, clock)
    verify(FIRST.sign(claims()), config_for(idp), cache)
    for attempt in range(50):
        clock.now += 0.5
        with pytest.raises(JWTRejected, match="no signing key"):
            verify(FIRST.sign(claims(), kid=f"bogus-{attempt}"), config_for(idp), cache)
    # 25 seconds of bogus ids: under the 30-second minimum interval, so no refetch at all.
    assert idp.fetch_count() == 1
    clock.now += 5
    with pytest.raises(JWTRejected):
        verify(FIRST.sign(claims(), kid="bogus-late"), config_for(idp), cache)
    assert idp.fetch_count() == 2


def test_a_rotation_inside_the_minimum_interval_is_seen_once_it_has_passed(
    idp: JWKSServer, clock: Clock
) -> None:
    cache = cache_for(idp, clock)
    verify(FIRST.sign(claims()), config_for(idp), cache)
    idp.publish(FIRST, SECOND)
    clock.now += 1
    with pytest.raises(JWTRejected):
        verify(SECOND.sign(claims()), config_for(idp), cache)
    clock.now += 30
    assert verify(SECOND.sign(claims()), config_for(idp), cache).subject


def test_an_unreachable_idp_keeps_the_keys_already_fetched(clock: Clock) -> None:
    with jwks_server(FIRST) as idp:
        cache = cache_for(idp, clock)
        verify(FIRST.sign(claims()), config_for(idp), cache)
        config = config_for(idp)
    clock.now += 301  # stale, and the server is gone
    assert verify(FIRST.sign(claims()), config, cache).subject
    with pytest.raises(JWTRejected, match="no signing key"):
        verify(SECOND.sign(claims()), config, cache)


def test_malformed_claims_are_refused(idp: JWKSServer, clock: Clock) -> None:
    rejection(FIRST.sign(claims(scope=None, scp=7)), idp, clock)
    rejection(FIRST.sign(claims(mnemosyne_libraries={"lib": 1})), idp, clock)
