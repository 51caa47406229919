"""HTTP services the server calls (a reranker, an embeddings endpoint): their configured URL checked
once, and shown in messages and logs without the secrets a URL may carry."""

from __future__ import annotations

import httpx
from django.core.exceptions import ImproperlyConfigured


def display_url(url: str) -> str:
    """The URL without credentials or query string, which may carry secrets."""
    return str(httpx.URL(url).copy_with(username=None, password=None, query=None, fragment=None))


def check_http_url(url: str, setting: str) -> None:
    """ImproperlyConfigured, naming `setting`, unless `url` is an http:// or https:// URL."""
    try:
        scheme = httpx.URL(url).scheme
    except httpx.InvalidURL as exc:
        raise ImproperlyConfigured(f"{setting} is not a valid URL: {exc}") from exc
    if scheme not in ("http", "https"):
        raise ImproperlyConfigured(f"{setting} must be an http:// or https:// URL, got {display_url(url)}")
