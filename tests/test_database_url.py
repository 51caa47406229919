"""DATABASE_URL parsing and the embedded server's buffer cache (mnemosyne.project.database)."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured
from psycopg.conninfo import conninfo_to_dict

from mnemosyne.project import database
from mnemosyne.project.database import parse_database_url

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
