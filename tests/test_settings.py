"""Settings from the environment: the env readers, DATABASE_URL parsing, and the real settings module."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured
from psycopg.conninfo import conninfo_to_dict

from mnemosyne import database
from mnemosyne.database import parse_database_url
from mnemosyne.env import envbool, envchoice, envint, envlist

ROOT = Path(__file__).resolve().parent.parent
VAR = "MNEMOSYNE_TEST_SETTING"


@pytest.fixture
def unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(VAR, raising=False)


# envbool


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("1", True),
        ("true", True),
        ("TRUE", True),
        ("yes", True),
        (" on ", True),
        ("0", False),
        ("false", False),
        ("No", False),
        ("off", False),
        ("", False),
    ],
)
def test_envbool_reads_the_usual_spellings(monkeypatch: pytest.MonkeyPatch, raw: str, expected: bool) -> None:
    monkeypatch.setenv(VAR, raw)
    assert envbool(VAR, not expected) is expected


@pytest.mark.parametrize("default", [True, False])
@pytest.mark.usefixtures("unset")
def test_envbool_falls_back_to_the_default_when_unset(default: bool) -> None:
    assert envbool(VAR, default) is default


@pytest.mark.parametrize("raw", ["maybe", "2", "truee", "y es"])
def test_envbool_rejects_a_value_it_cannot_read_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, raw: str
) -> None:
    monkeypatch.setenv(VAR, raw)
    with pytest.raises(ImproperlyConfigured, match=VAR) as excinfo:
        envbool(VAR, True)
    assert repr(raw) in str(excinfo.value)


# envint


@pytest.mark.parametrize(("raw", "expected"), [("42", 42), (" 7 ", 7), ("-3", -3), ("0", 0)])
def test_envint_reads_an_integer(monkeypatch: pytest.MonkeyPatch, raw: str, expected: int) -> None:
    monkeypatch.setenv(VAR, raw)
    assert envint(VAR, 99) == expected


@pytest.mark.usefixtures("unset")
def test_envint_falls_back_to_the_default_when_unset() -> None:
    assert envint(VAR, 99, minimum=1, maximum=100) == 99


@pytest.mark.parametrize("raw", ["", "   "])
def test_envint_treats_a_blank_value_as_unset(monkeypatch: pytest.MonkeyPatch, raw: str) -> None:
    monkeypatch.setenv(VAR, raw)
    assert envint(VAR, 99) == 99


@pytest.mark.parametrize("raw", ["1", "100"])
def test_envint_accepts_the_bounds_themselves(monkeypatch: pytest.MonkeyPatch, raw: str) -> None:
    monkeypatch.setenv(VAR, raw)
    assert envint(VAR, 50, minimum=1, maximum=100) == int(raw)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("abc", "must be an integer"),
        ("1.5", "must be an integer"),
        ("0", "at least 1"),
        ("101", "at most 100"),
    ],
)
def test_envint_rejects_a_bad_value_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, raw: str, message: str
) -> None:
    monkeypatch.setenv(VAR, raw)
    with pytest.raises(ImproperlyConfigured, match=VAR) as excinfo:
        envint(VAR, 50, minimum=1, maximum=100)
    assert message in str(excinfo.value)


# envchoice


@pytest.mark.parametrize(("raw", "expected"), [("s3", "s3"), ("S3", "s3"), (" filesystem ", "filesystem")])
def test_envchoice_reads_a_choice_case_insensitively(
    monkeypatch: pytest.MonkeyPatch, raw: str, expected: str
) -> None:
    monkeypatch.setenv(VAR, raw)
    assert envchoice(VAR, "filesystem", ("filesystem", "s3")) == expected


@pytest.mark.usefixtures("unset")
def test_envchoice_falls_back_to_the_default_when_unset() -> None:
    assert envchoice(VAR, "filesystem", ("filesystem", "s3")) == "filesystem"


@pytest.mark.parametrize("raw", ["ftp", "", "s3 filesystem"])
def test_envchoice_rejects_an_unknown_choice_naming_the_variable_and_the_choices(
    monkeypatch: pytest.MonkeyPatch, raw: str
) -> None:
    monkeypatch.setenv(VAR, raw)
    with pytest.raises(ImproperlyConfigured, match=VAR) as excinfo:
        envchoice(VAR, "filesystem", ("filesystem", "s3"))
    assert "filesystem, s3" in str(excinfo.value)


# envlist


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("a", ["a"]),
        ("a,b", ["a", "b"]),
        (" a , b ,, c ,", ["a", "b", "c"]),
        ("", []),
        (" , ", []),
    ],
)
def test_envlist_splits_on_commas_and_drops_blanks(
    monkeypatch: pytest.MonkeyPatch, raw: str, expected: list[str]
) -> None:
    monkeypatch.setenv(VAR, raw)
    assert envlist(VAR, ["default"]) == expected


@pytest.mark.usefixtures("unset")
def test_envlist_falls_back_to_the_default_when_unset() -> None:
    assert envlist(VAR, ["x", "y"]) == ["x", "y"]


# parse_database_url


def test_it_parses_a_url_with_user_password_host_port_and_name() -> None:
    assert parse_database_url("postgres://alice:s3cret@db.example.com:5433/mnemosyne") == {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": "mnemosyne",
        "USER": "alice",
        "PASSWORD": "s3cret",
        "HOST": "db.example.com",
        "PORT": "5433",
        "OPTIONS": {},
    }


@pytest.mark.parametrize("scheme", ["postgres", "postgresql", "pgsql"])
def test_it_accepts_each_postgres_scheme(scheme: str) -> None:
    assert parse_database_url(f"{scheme}://h/db")["NAME"] == "db"


def test_it_takes_a_socket_directory_from_the_host_query_parameter() -> None:
    parsed = parse_database_url("postgresql://postgres:@/mnemosyne?host=/var/run/postgresql")
    assert (parsed["HOST"], parsed["PORT"], parsed["USER"], parsed["PASSWORD"], parsed["NAME"]) == (
        "/var/run/postgresql",
        "",
        "postgres",
        "",
        "mnemosyne",
    )
    # host is a connection parameter, not an extra option passed through twice
    assert parsed["OPTIONS"] == {}


def test_it_decodes_a_percent_encoded_password_and_user() -> None:
    parsed = parse_database_url("postgres://al%40ice:p%40ss%3Aw%2Fd%25@h:5432/db")
    assert (parsed["USER"], parsed["PASSWORD"]) == ("al@ice", "p@ss:w/d%")


def test_it_passes_other_query_parameters_through_as_options() -> None:
    parsed = parse_database_url("postgres://h/db?sslmode=require&connect_timeout=5")
    assert parsed["OPTIONS"] == {"sslmode": "require", "connect_timeout": "5"}


@pytest.mark.parametrize(
    "url",
    [
        "postgres://alice:s3cret@db.example.com:5433/mnemosyne?sslmode=require",
        "postgresql://postgres:@/mnemosyne?host=/var/run/postgresql",
        "postgres://al%40ice:p%40ss%3Aw%2Fd@h/d%20b",
        "postgresql://u:a+b@h/db",
        "postgresql://%2Fvar%2Frun%2FPg/db",
        "postgresql://postgres:@/mnemosyne?host=/home/me/c++/data/pgdata",
        "postgresql://h/db?application_name=a+b",
    ],
)
def test_it_reads_a_url_the_way_libpq_does(url: str) -> None:
    libpq = conninfo_to_dict(url)
    parsed = parse_database_url(url)
    ours = {
        "dbname": parsed["NAME"],
        "user": parsed["USER"],
        "password": parsed["PASSWORD"],
        "host": parsed["HOST"],
        "port": parsed["PORT"],
        **parsed["OPTIONS"],
    }
    expected = {key: str(value) for key, value in libpq.items()}
    # libpq leaves out what the URL does not give; DNS names are case-insensitive.
    assert {key: value for key, value in ours.items() if value != ""} == {
        key: value.lower() if key == "host" and not value.startswith("/") else value
        for key, value in expected.items()
        if value != ""
    }


@pytest.mark.parametrize(
    ("memory_mb", "expected"), [(256, 128), (4096, 1024), (24 * 1024, 6 * 1024), (128 * 1024, 8192)]
)
def test_the_embedded_buffer_cache_is_a_quarter_of_memory_within_bounds(
    monkeypatch: pytest.MonkeyPatch, memory_mb: int, expected: int
) -> None:
    pages = {"SC_PAGE_SIZE": 4096, "SC_PHYS_PAGES": memory_mb * 2**20 // 4096}
    monkeypatch.setattr(database.os, "sysconf", lambda name: pages[name])
    assert database.default_shared_buffers_mb() == expected


@pytest.mark.parametrize("url", ["postgres://h", "postgres://h/", "postgres://u:p@h:5432/"])
def test_it_requires_a_database_name(url: str) -> None:
    with pytest.raises(ImproperlyConfigured, match="DATABASE_URL must name a database"):
        parse_database_url(url)


@pytest.mark.parametrize("url", ["mysql://u:p@h/db", "sqlite:///db.sqlite3", "h/db", "http://h/db"])
def test_it_rejects_a_url_that_is_not_postgres_naming_database_url(url: str) -> None:
    with pytest.raises(ImproperlyConfigured, match="DATABASE_URL") as excinfo:
        parse_database_url(url)
    assert "scheme" in str(excinfo.value)


@pytest.mark.parametrize("url", ["postgres://h:abc/db", "postgres://h:70000/db"])
def test_it_rejects_an_invalid_port_naming_database_url(url: str) -> None:
    with pytest.raises(ImproperlyConfigured, match="DATABASE_URL has an invalid port"):
        parse_database_url(url)


# The real settings module, imported in a fresh interpreter with a given environment

# Variables mnemosyne/settings.py reads: cleared so the developer's own environment cannot leak in.
SETTINGS_VARIABLES = (
    "DEBUG",
    "SECRET_KEY",
    "ALLOWED_HOSTS",
    "PORT",
    "MCP_REQUIRE_AUTH",
    "MCP_JWT_ISSUER",
    "MCP_JWT_AUDIENCE",
    "MCP_JWT_JWKS_URL",
    "MCP_JWT_ALGORITHMS",
    "MCP_JWT_JWKS_CACHE_SECONDS",
    "MCP_ANONYMOUS_READ",
    "MCP_AUTHORIZATION_SERVERS",
    "CHUNK_STORE",
    "GRAPH_BACKEND",
    "EMBEDDING_MODEL",
    "EMBEDDING_BATCH_SIZE",
    "CHUNK_MAX_TOKENS",
    "CHUNK_OVERLAP_TOKENS",
    "INGEST_MAX_FILE_BYTES",
    "LOG_LEVEL",
    "SEARCH_HNSW_EF_SEARCH",
    "DATABASE_URL",
    "DATABASE_CONN_MAX_AGE",
    "EMBEDDED_POSTGRES_SHARED_BUFFERS_MB",
    "DJANGO_SETTINGS_MODULE",
)
# Nothing connects at import, so an unreachable server is fine.
UNREACHABLE_DATABASE = "postgres://u:p@127.0.0.1:1/x"


def import_settings(
    changes: dict[str, str | None], *, code: str = "import mnemosyne, mnemosyne.settings"
) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key not in SETTINGS_VARIABLES}
    env.update({"DATABASE_URL": UNREACHABLE_DATABASE, "DEBUG": "true"})
    for key, value in changes.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize(
    ("changes", "variable"),
    [
        ({"DEBUG": "maybe"}, "DEBUG"),
        ({"PORT": "abc"}, "PORT"),
        ({"PORT": "70000"}, "PORT"),
        ({"PORT": "0"}, "PORT"),
        ({"CHUNK_STORE": "ftp"}, "CHUNK_STORE"),
        ({"CHUNK_STORE": "s3"}, "CHUNK_STORE"),
        ({"GRAPH_BACKEND": "sqlite"}, "GRAPH_BACKEND"),
        ({"MCP_REQUIRE_AUTH": "perhaps"}, "MCP_REQUIRE_AUTH"),
        ({"MCP_JWT_ISSUER": "https://idp.example/"}, "MCP_JWT_ISSUER"),
        (
            {"MCP_JWT_ISSUER": "https://idp.example/", "MCP_JWT_AUDIENCE": "mcp", "MCP_JWT_JWKS_URL": "x"}
            | {"MCP_JWT_ALGORITHMS": "RS256,HS256"},
            "MCP_JWT_ALGORITHMS",
        ),
        ({"MCP_JWT_ALGORITHMS": "none"}, "MCP_JWT_ALGORITHMS"),
        ({"MCP_JWT_JWKS_CACHE_SECONDS": "0"}, "MCP_JWT_JWKS_CACHE_SECONDS"),
        ({"MCP_ANONYMOUS_READ": "sometimes"}, "MCP_ANONYMOUS_READ"),
        ({"LOG_LEVEL": "loud"}, "LOG_LEVEL"),
        ({"DEBUG": "false", "SECRET_KEY": None}, "SECRET_KEY"),
        ({"DEBUG": "false", "SECRET_KEY": ""}, "SECRET_KEY"),
        ({"CHUNK_MAX_TOKENS": "100", "CHUNK_OVERLAP_TOKENS": "100"}, "CHUNK_OVERLAP_TOKENS"),
        ({"CHUNK_MAX_TOKENS": "100", "CHUNK_OVERLAP_TOKENS": "150"}, "CHUNK_OVERLAP_TOKENS"),
        ({"CHUNK_MAX_TOKENS": "8"}, "CHUNK_MAX_TOKENS"),
        ({"EMBEDDING_BATCH_SIZE": "0"}, "EMBEDDING_BATCH_SIZE"),
        ({"DATABASE_CONN_MAX_AGE": "-1"}, "DATABASE_CONN_MAX_AGE"),
        ({"DATABASE_URL": "mysql://u:p@h/db"}, "DATABASE_URL"),
        # Read before the embedded server would start, so nothing starts.
        (
            {"DATABASE_URL": None, "EMBEDDED_POSTGRES_SHARED_BUFFERS_MB": "64"},
            "EMBEDDED_POSTGRES_SHARED_BUFFERS_MB",
        ),
    ],
    ids=lambda value: value if isinstance(value, str) else ",".join(f"{k}={v}" for k, v in value.items()),
)
def test_the_settings_module_refuses_a_bad_environment_naming_the_variable(
    changes: dict[str, str | None], variable: str
) -> None:
    result = import_settings(changes)
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    # the message line itself names the variable, not just some line of the traceback
    message = next(line for line in result.stderr.splitlines() if line.startswith("django.core.exceptions"))
    assert variable in message


def test_the_settings_module_imports_with_a_development_configuration() -> None:
    result = import_settings({})
    assert result.returncode == 0, result.stderr


def test_the_settings_module_imports_in_production_with_a_secret_key() -> None:
    result = import_settings({"DEBUG": "false", "SECRET_KEY": "a-real-secret"})
    assert result.returncode == 0, result.stderr


def test_the_settings_module_reads_each_value_from_the_environment() -> None:
    code = (
        "import json, mnemosyne, mnemosyne.settings as s; "
        "print(json.dumps({'port': s.PORT, 'debug': s.DEBUG, 'log': s.LOG_LEVEL, 'hosts': s.ALLOWED_HOSTS, "
        "'auth': s.MCP_REQUIRE_AUTH, 'graph': s.GRAPH_BACKEND, 'max': s.CHUNK_MAX_TOKENS, "
        "'overlap': s.CHUNK_OVERLAP_TOKENS, 'db': s.DATABASES['default']['HOST'], "
        "'age': s.DATABASES['default']['CONN_MAX_AGE']}))"
    )
    result = import_settings(
        {
            "PORT": "9000",
            "LOG_LEVEL": "Debug",
            "ALLOWED_HOSTS": "a.example, b.example",
            "MCP_REQUIRE_AUTH": "off",
            "GRAPH_BACKEND": "neo4j",
            "CHUNK_MAX_TOKENS": "100",
            "CHUNK_OVERLAP_TOKENS": "99",
            "DATABASE_CONN_MAX_AGE": "0",
        },
        code=code,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == {
        "port": 9000,
        "debug": True,
        "log": "DEBUG",
        "hosts": ["a.example", "b.example"],
        "auth": False,
        "graph": "neo4j",
        "max": 100,
        "overlap": 99,
        "db": "127.0.0.1",
        "age": 0,
    }


def test_jwt_settings_name_the_issuer_as_the_authorization_server_and_anonymous_reads_stay_off() -> None:
    code = (
        "import json, mnemosyne, mnemosyne.settings as s; "
        "print(json.dumps({'servers': s.MCP_AUTHORIZATION_SERVERS, 'algorithms': s.MCP_JWT_ALGORITHMS, "
        "'anonymous': s.MCP_ANONYMOUS_READ}))"
    )
    jwt: dict[str, str | None] = {
        "MCP_JWT_ISSUER": "https://idp.example/",
        "MCP_JWT_AUDIENCE": "https://mcp.example/mcp",
        "MCP_JWT_JWKS_URL": "https://idp.example/jwks.json",
    }
    result = import_settings(jwt, code=code)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == {
        "servers": ["https://idp.example/"],
        "algorithms": ["RS256", "ES256"],
        "anonymous": False,
    }
