"""Stores for the contract tests: the filesystem in tmp_path, and S3 as moto's server over real HTTP."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto.server import ThreadedMotoServer

from mnemosyne.storage.base import ChunkStore
from mnemosyne.storage.filesystem import FilesystemChunkStore
from mnemosyne.storage.s3 import S3ChunkStore, build_client

S3_BUCKET = "mnemosyne-contract"
S3_REGION = "us-east-1"
# Distinctive, so a test can assert it never appears in an error message.
FAKE_ACCESS_KEY = "AKIAFAKEFORTESTS0000"
FAKE_SECRET_KEY = "fake-secret-never-in-messages"


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    """moto's S3 server on a free port of 127.0.0.1, for the whole session."""
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


def admin_client(endpoint_url: str) -> Any:
    """A client of the tests' own, to set up and inspect the bucket behind the store's back."""
    return boto3.session.Session().client(
        "s3",
        endpoint_url=endpoint_url,
        region_name=S3_REGION,
        aws_access_key_id=FAKE_ACCESS_KEY,
        aws_secret_access_key=FAKE_SECRET_KEY,
    )


@pytest.fixture(scope="session")
def s3_bucket(s3_endpoint: str) -> str:
    admin_client(s3_endpoint).create_bucket(Bucket=S3_BUCKET)
    return S3_BUCKET


def use_fake_credentials(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    """Fake credentials in the environment, and nothing from the developer's ~/.aws or IMDS."""
    for name in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", FAKE_ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", FAKE_SECRET_KEY)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(home / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(home / "no-aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


@pytest.fixture
def aws_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    use_fake_credentials(monkeypatch, tmp_path)


@pytest.fixture(scope="session")
def s3_client(s3_endpoint: str, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """One client, built like production's, for the contract tests: building one per test costs ~0.2 s."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        # The client resolves its credentials from the chain once, here.
        use_fake_credentials(monkeypatch, tmp_path_factory.mktemp("aws"))
        return build_client(
            endpoint_url=s3_endpoint, region=S3_REGION, connect_timeout=2.0, read_timeout=10.0, max_attempts=2
        )


@pytest.fixture
def s3_prefix() -> str:
    """A folder of its own per test, so tests sharing the session's bucket never see each other."""
    return f"contract/{uuid.uuid4().hex}/"


@pytest.fixture
def s3_store(s3_client: Any, s3_bucket: str, s3_prefix: str) -> S3ChunkStore:
    return S3ChunkStore(bucket=s3_bucket, prefix=s3_prefix, client=s3_client)


@pytest.fixture(params=["filesystem", "s3"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> ChunkStore:
    if request.param == "filesystem":
        return FilesystemChunkStore(tmp_path / "chunks")
    s3_store: S3ChunkStore = request.getfixturevalue("s3_store")
    return s3_store
