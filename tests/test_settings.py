"""The real settings module, imported in a fresh interpreter with a given environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # starts processes

ROOT = Path(__file__).resolve().parent.parent


# Variables mnemosyne/project/settings.py (and its two parts) reads: cleared so the developer's own
# environment cannot leak in.
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
    "NEO4J_URI",
    "NEO4J_USER",
    "NEO4J_PASSWORD",
    "NEO4J_DATABASE",
    "EMBEDDING_MODEL",
    "EMBEDDING_BATCH_SIZE",
    "CHUNK_MAX_TOKENS",
    "CHUNK_OVERLAP_TOKENS",
    "INGEST_MAX_FILE_BYTES",
    "LOG_LEVEL",
    "LOG_FORMAT",
    "HTTPS_ONLY",
    "TUNING",
    "SEARCH_HNSW_EF_SEARCH",
    "DATABASE_URL",
    "DATABASE_CONN_MAX_AGE",
    "EMBEDDED_POSTGRES_SHARED_BUFFERS_MB",
    "DJANGO_SETTINGS_MODULE",
    "MNEMOSYNE_ENV_FILE",
)
# Nothing connects at import, so an unreachable server is fine.
UNREACHABLE_DATABASE = "postgres://u:p@127.0.0.1:1/x"


def import_settings(
    changes: dict[str, str | None], *, code: str = "import mnemosyne, mnemosyne.project.settings"
) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key not in SETTINGS_VARIABLES}
    env.update({"DATABASE_URL": UNREACHABLE_DATABASE, "DEBUG": "true", "MNEMOSYNE_ENV_FILE": "off"})
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
        ({"TUNING": "bm25_k1=eleven"}, "TUNING: bm25_k1"),
        ({"TUNING": "hnsw_ef_search=5000"}, "TUNING: hnsw_ef_search"),
        ({"TUNING": "ef_search=100"}, "TUNING"),
        # A variable a tuning key replaced is refused, saying what to write instead.
        ({"SEARCH_HNSW_EF_SEARCH": "1000"}, "set TUNING=hnsw_ef_search=1000 instead"),
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
        "import json, mnemosyne, mnemosyne.project.settings as s; "
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
            "NEO4J_URI": "bolt://graph.internal:7687",
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
        "import json, mnemosyne, mnemosyne.project.settings as s; "
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


def test_a_blank_value_means_the_default_so_nothing_fails_open() -> None:
    # `MCP_REQUIRE_AUTH=` (as left by a template .env) once read as false and switched auth off.
    code = (
        "import json, mnemosyne, mnemosyne.project.settings as s; "
        "print(json.dumps({'auth': s.MCP_REQUIRE_AUTH, 'log': s.LOG_LEVEL, 'store': s.CHUNK_STORE, "
        "'hosts': s.ALLOWED_HOSTS, 'algorithms': s.MCP_JWT_ALGORITHMS, 'port': s.PORT}))"
    )
    blanks: dict[str, str | None] = {
        "MCP_REQUIRE_AUTH": "",
        "LOG_LEVEL": "  ",
        "CHUNK_STORE": "",
        "ALLOWED_HOSTS": "",
        "MCP_JWT_ALGORITHMS": "",
        "PORT": " ",
    }
    result = import_settings(blanks, code=code)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == {
        "auth": True,
        "log": "INFO",
        "store": "filesystem",
        "hosts": ["127.0.0.1", "localhost", "[::1]"],
        "algorithms": ["RS256", "ES256"],
        "port": 8001,
    }


def test_jwt_algorithms_are_named_in_any_case() -> None:
    code = "import json, mnemosyne, mnemosyne.project.settings as s; print(json.dumps(s.MCP_JWT_ALGORITHMS))"
    result = import_settings({"MCP_JWT_ALGORITHMS": "rs256, eddsa,Es384"}, code=code)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == ["RS256", "EdDSA", "ES384"]
    refused = import_settings({"MCP_JWT_ALGORITHMS": "hs256"})
    assert refused.returncode != 0 and "MCP_JWT_ALGORITHMS" in refused.stderr


def test_check_deploy_is_clean_under_the_documented_production_settings() -> None:
    production: dict[str, str | None] = {
        "DEBUG": "false",
        "SECRET_KEY": "k" * 20 + "-a-long-and-random-production-secret-key-" + "z" * 20,
        "HTTPS_ONLY": "true",
        "ALLOWED_HOSTS": "mnemosyne.example.com",
        "TRUST_X_FORWARDED_PROTO": "true",
        "CSRF_TRUSTED_ORIGINS": "https://mnemosyne.example.com",
    }
    code = (
        "import sys, mnemosyne, django; from django.core.management import call_command; "
        "import os; os.environ['DJANGO_SETTINGS_MODULE'] = 'mnemosyne.project.settings'; django.setup(); "
        "call_command('check', deploy=True, fail_level='WARNING')"
    )
    result = import_settings(production, code=code)
    assert result.returncode == 0, result.stderr
    assert "System check identified no issues" in result.stdout + result.stderr
    # Without HTTPS_ONLY the same check names what is missing.
    insecure = import_settings({**production, "HTTPS_ONLY": None}, code=code)
    assert insecure.returncode != 0 and "SESSION_COOKIE_SECURE" in insecure.stderr


def test_a_fresh_checkout_gets_a_local_settings_file_that_later_runs_reuse(tmp_path: Path) -> None:
    env_file = tmp_path / "checkout" / ".env"
    code = (
        "import json, mnemosyne, mnemosyne.project.settings as s; print(json.dumps([s.DEBUG, s.SECRET_KEY]))"
    )
    nothing_exported: dict[str, str | None] = {"DEBUG": None, "MNEMOSYNE_ENV_FILE": str(env_file)}
    first = import_settings(nothing_exported, code=code)
    assert first.returncode == 0, first.stderr
    debug, secret = json.loads(first.stdout.strip().splitlines()[-1])
    assert debug is True and len(secret) >= 50 and "insecure" not in secret
    assert env_file.stat().st_mode & 0o777 == 0o600
    again = import_settings(nothing_exported, code=code)
    assert json.loads(again.stdout.strip().splitlines()[-1]) == [True, secret], "the same key next time"
    exported = import_settings({**nothing_exported, "SECRET_KEY": "from-the-environment"}, code=code)
    assert json.loads(exported.stdout.strip().splitlines()[-1])[1] == "from-the-environment"


def test_tuning_in_the_local_settings_file_sets_every_tuned_setting(tmp_path: Path) -> None:
    """TUNING in `.env` counts as if exported, for the knobs of every part of the settings."""
    env_file = tmp_path / ".env"
    env_file.write_text(
        "DEBUG=true\nSECRET_KEY=from-the-file\nTUNING=hnsw_ef_search=321,replica_retry_seconds=77\n"
    )
    code = (
        "import json, mnemosyne, mnemosyne.project.settings as s; "
        "print(json.dumps([s.SEARCH_HNSW_EF_SEARCH, s.DATABASE_REPLICA_RETRY_SECONDS]))"
    )
    result = import_settings({"DEBUG": None, "MNEMOSYNE_ENV_FILE": str(env_file)}, code=code)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == [321, 77]


def test_a_production_start_without_a_key_refuses_in_one_line_and_writes_nothing(tmp_path: Path) -> None:
    env_file = tmp_path / ".env"
    changes: dict[str, str | None] = {
        "DEBUG": "false",
        "SECRET_KEY": None,
        "MNEMOSYNE_ENV_FILE": str(env_file),
    }
    env = {key: value for key, value in os.environ.items() if key not in SETTINGS_VARIABLES}
    env.update({"DATABASE_URL": UNREACHABLE_DATABASE, "DEBUG": "false", "MNEMOSYNE_ENV_FILE": str(env_file)})
    del changes
    command = [sys.executable, "manage.py", "create_mcp_token", "--user", "alice", "--name", "laptop"]
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode != 0
    assert result.stderr.strip().splitlines() == [
        "configuration error: SECRET_KEY is required when DEBUG is false: export it, "
        "or set it in the local settings file (.env)"
    ]
    assert not env_file.exists()


def test_any_command_names_a_bad_variable_in_one_line() -> None:
    env = {key: value for key, value in os.environ.items() if key not in SETTINGS_VARIABLES}
    env.update(
        {"DATABASE_URL": UNREACHABLE_DATABASE, "DEBUG": "true", "MNEMOSYNE_ENV_FILE": "off", "PORT": "abc"}
    )
    result = subprocess.run(
        [sys.executable, "manage.py", "list_mcp_tokens"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("configuration error: PORT")
