"""backup and restore, round trip: a library backed up from the filesystem store, restored into a
new database with the chunk store on S3 (moto's server over HTTP), searched there through MCP with
the same answers and texts; backed up again from S3, with the same objects."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from django.contrib.auth.models import User
from django.db import connection
from moto.server import ThreadedMotoServer

from access.services import create_token
from mnemosyne.embedding import Embedder
from tests.conftest import ingest_fixture_docs
from tests.mcp_server.clients import post, rpc, sse_payload
from tests.servers import FAKE_AWS_ENV, create_bucket, database_url, uvicorn_server
from tests.servers import run_manage as manage

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

S3 = {
    **FAKE_AWS_ENV,
    "S3_REGION": "us-east-1",
}


@pytest.fixture(scope="module")
def s3_env() -> Iterator[dict[str, str]]:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    create_bucket(endpoint, "restored")
    try:
        yield {**S3, "CHUNK_STORE": "s3", "S3_BUCKET": "restored", "S3_ENDPOINT_URL": endpoint}
    finally:
        server.stop()


@pytest.fixture
def other_database() -> Iterator[str]:
    """A new, empty database on the test server; its URL."""
    name = f"restored_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(database_url(), autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    test_database = connection.settings_dict["NAME"]
    try:
        yield database_url().replace(f"/{test_database}", f"/{name}", 1)
    finally:
        with psycopg.connect(database_url(), autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def answers(base: str, token: str) -> list[tuple[str, str]]:
    """The uids of a search's hits, with the full text get_chunk gives for each."""
    found = sse_payload(
        post(
            base,
            rpc("tools/call", {"name": "search", "arguments": {"query": "backup and restore", "limit": 5}}),
            token,
        )
    )
    hits = found["result"]["structuredContent"]["results"]
    texts = []
    for hit in hits:
        chunk = sse_payload(
            post(
                base,
                rpc("tools/call", {"name": "get_chunk", "arguments": {"chunk_uid": hit["chunk_uid"]}}),
                token,
            )
        )
        texts.append((hit["chunk_uid"], chunk["result"]["structuredContent"]["text"]))
    return texts


def objects(directory: Path) -> dict[str, bytes]:
    root = directory / "chunks"
    return {
        path.relative_to(root).as_posix(): path.read_bytes() for path in root.rglob("*") if path.is_file()
    }


def test_a_backup_restores_into_a_new_database_and_store_and_searches_the_same(
    embedder: Embedder,
    shared_data_dir: Path,
    live_server_url: str,
    other_database: str,
    s3_env: dict[str, str],
    tmp_path: Path,
) -> None:
    ingest_fixture_docs(embedder)
    _, token = create_token(user=User.objects.create(username="keeper"), name="k")
    original = answers(live_server_url, token)
    assert original, "the fixture documents answer the query"

    first = tmp_path / "backup-1"
    made = manage(shared_data_dir, database_url(), "backup", str(first))
    assert made.returncode == 0, made.stderr
    manifest = json.loads((first / "manifest.json").read_text())
    assert manifest["items"] > 0 and manifest["missing_objects"] == []
    assert manifest["objects"] == len(objects(first)) > 0

    restored_dir = tmp_path / "restored"
    restored_dir.mkdir()
    loaded = manage(restored_dir, other_database, "restore", str(first), env=s3_env)
    assert loaded.returncode == 0, loaded.stderr
    assert f"Restored {manifest['items']} items" in loaded.stdout

    # A database that holds items is not overwritten unless asked.
    again = manage(restored_dir, other_database, "restore", str(first), env=s3_env)
    assert again.returncode != 0 and "--replace" in again.stderr and "Traceback" not in again.stderr
    replaced = manage(restored_dir, other_database, "restore", str(first), "--replace", env=s3_env)
    assert replaced.returncode == 0, replaced.stderr

    with uvicorn_server(
        restored_dir, env={"DATABASE_URL": other_database, **s3_env}, log_name="restored"
    ) as base:
        assert answers(base, token) == original

    second = tmp_path / "backup-2"
    made_again = manage(restored_dir, other_database, "backup", str(second), env=s3_env)
    assert made_again.returncode == 0, made_again.stderr
    assert objects(second) == objects(first)


def test_backup_refuses_a_directory_in_use_and_restore_one_that_is_not_a_backup(
    shared_data_dir: Path, tmp_path: Path
) -> None:
    used = tmp_path / "used"
    used.mkdir()
    (used / "notes.txt").write_text("mine")
    refused = manage(shared_data_dir, database_url(), "backup", str(used))
    assert refused.returncode != 0 and "new or empty" in refused.stderr and "Traceback" not in refused.stderr
    not_a_backup = manage(shared_data_dir, database_url(), "restore", str(used))
    assert not_a_backup.returncode != 0 and "not a complete backup" in not_a_backup.stderr
