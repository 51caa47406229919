"""The ChunkStore contract, run against every backend; then what only the S3 store promises."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from mnemosyne.storage import get_chunk_store
from mnemosyne.storage.base import ChunkNotFound, ChunkStore, InvalidKey, StorageError
from mnemosyne.storage.s3 import S3ChunkStore
from tests.storage.conftest import FAKE_ACCESS_KEY, FAKE_SECRET_KEY, S3_REGION, admin_client

INVALID_KEYS = ["", "/abs", "a/../b", "..", "a/./b", ".", "a//b", "a\\b", "a/b/"]
OPERATIONS: dict[str, Callable[[ChunkStore, str], object]] = {
    "put": lambda store, key: store.put(key, b"x"),
    "get": lambda store, key: store.get(key),
    "delete": lambda store, key: store.delete(key),
    "delete_prefix": lambda store, key: store.delete_prefix(key),
}
# A prefix is a folder, so its trailing "/" is dropped before validation: "a/b/" is a fine prefix.
INVALID_CASES = [
    (operation, key)
    for operation in OPERATIONS
    for key in INVALID_KEYS
    if not (operation == "delete_prefix" and key == "a/b/")
]


def put_many(store: ChunkStore, keys: list[str]) -> None:
    # moto answers in ~10 ms; 8 threads (botocore pools 10 connections) bring 1,001 puts to ~6 s.
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(lambda key: store.put(key, b"."), keys))


def record_s3_delete_batches(store: ChunkStore) -> list[int]:
    """The size of every DeleteObjects request the store sends from now on (S3 only)."""
    sizes: list[int] = []
    if isinstance(store, S3ChunkStore):

        def record(params: dict, **_: object) -> None:
            sizes.append(len(params["Delete"]["Objects"]))

        store.client.meta.events.register("provide-client-params.s3.DeleteObjects", record)
    return sizes


# --- the contract, for every backend ---


@pytest.mark.parametrize(
    "data",
    [bytes(range(256)) * 4, b"", os.urandom(5 * 1024 * 1024)],
    ids=["binary", "empty", "5MB"],
)
def test_it_returns_the_bytes_it_was_given(store: ChunkStore, data: bytes) -> None:
    store.put("docs/1/chunk-0", data)
    assert store.get("docs/1/chunk-0") == data


def test_it_overwrites_an_existing_key(store: ChunkStore) -> None:
    store.put("docs/1/chunk-0", b"first")
    store.put("docs/1/chunk-0", b"second")
    assert store.get("docs/1/chunk-0") == b"second"


def test_it_raises_chunk_not_found_for_a_missing_key(store: ChunkStore) -> None:
    with pytest.raises(ChunkNotFound):
        store.get("docs/never/stored")


def test_a_folder_of_keys_or_a_path_through_a_key_is_not_an_object(store: ChunkStore) -> None:
    store.put("docs/1/chunk-0", b"x")
    for not_an_object in ("docs/1", "docs/1/chunk-0/more"):
        with pytest.raises(ChunkNotFound):
            store.get(not_an_object)
        store.delete(not_an_object)
    assert store.get("docs/1/chunk-0") == b"x"


def test_delete_removes_the_key_and_is_idempotent(store: ChunkStore) -> None:
    store.put("docs/1/chunk-0", b"x")
    store.delete("docs/1/chunk-0")
    store.delete("docs/1/chunk-0")
    store.delete("docs/never/stored")
    with pytest.raises(ChunkNotFound):
        store.get("docs/1/chunk-0")


@pytest.mark.parametrize("prefix", ["items/ab", "items/ab/"])
def test_delete_prefix_deletes_exactly_the_folder_and_counts(store: ChunkStore, prefix: str) -> None:
    inside = ["items/ab/1", "items/ab/2", "items/ab/deep/er/3"]
    siblings = ["items/abc/1", "items/ab-1", "items/a/b", "other/items/ab/1", "ab/1"]
    for key in inside + siblings:
        store.put(key, key.encode())

    assert store.delete_prefix(prefix) == len(inside)

    for key in inside:
        with pytest.raises(ChunkNotFound):
            store.get(key)
    for key in siblings:
        assert store.get(key) == key.encode()
    assert store.delete_prefix(prefix) == 0


def test_delete_prefix_of_an_empty_folder_deletes_nothing(store: ChunkStore) -> None:
    assert store.delete_prefix("items/none") == 0


@pytest.mark.slow
def test_delete_prefix_deletes_more_than_one_batch(store: ChunkStore) -> None:
    put_many(store, [f"big/{n:04d}" for n in range(1001)])
    store.put("bigger/0", b"sibling")
    batch_sizes = record_s3_delete_batches(store)

    assert store.delete_prefix("big") == 1001
    assert store.delete_prefix("big") == 0
    assert store.get("bigger/0") == b"sibling"
    if isinstance(store, S3ChunkStore):
        # DeleteObjects takes at most 1,000 keys a request.
        assert sorted(batch_sizes) == [1, 1000]


@pytest.mark.parametrize(("operation", "key"), INVALID_CASES)
def test_it_rejects_an_invalid_key_on_every_operation(store: ChunkStore, operation: str, key: str) -> None:
    with pytest.raises(InvalidKey):
        OPERATIONS[operation](store, key)


@pytest.mark.parametrize("prefix", ["", "/", "//"])
def test_delete_prefix_refuses_to_delete_everything(store: ChunkStore, prefix: str) -> None:
    store.put("docs/1/chunk-0", b"x")
    with pytest.raises(InvalidKey):
        store.delete_prefix(prefix)
    assert store.get("docs/1/chunk-0") == b"x"


def test_it_stores_unicode_keys(store: ChunkStore) -> None:
    key = "docs/naïve café/日本語/🙂 chunk+1=%20.txt"
    store.put(key, "ünïcödé".encode())
    assert store.get(key) == "ünïcödé".encode()
    assert store.delete_prefix("docs/naïve café") == 1
    with pytest.raises(ChunkNotFound):
        store.get(key)


# --- S3 only ---


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def silent_server() -> Iterator[str]:
    """A TCP port that accepts connections (the kernel's backlog) and never answers."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"


def test_s3_objects_live_under_the_prefix_on_the_server(s3_store: S3ChunkStore, s3_endpoint: str) -> None:
    s3_store.put("docs/1/chunk-0", b"over http")

    listing = admin_client(s3_endpoint).list_objects_v2(Bucket=s3_store.bucket, Prefix=s3_store.prefix)
    assert [item["Key"] for item in listing["Contents"]] == [s3_store.prefix + "docs/1/chunk-0"]
    # Plain HTTP to the server sees the object, so nothing was intercepted in-process.
    url = admin_client(s3_endpoint).generate_presigned_url(
        "get_object", Params={"Bucket": s3_store.bucket, "Key": s3_store.prefix + "docs/1/chunk-0"}
    )
    assert httpx.get(url).content == b"over http"


@pytest.mark.parametrize("prefix", ["tenant", "tenant/", "tenant//"])
def test_s3_prefix_is_a_folder_with_or_without_a_slash(prefix: str) -> None:
    assert S3ChunkStore("bucket", prefix, client=object()).prefix == "tenant/"


def test_s3_client_has_our_timeouts_retries_and_path_style(s3_endpoint: str) -> None:
    store = S3ChunkStore(
        "bucket", "p/", s3_endpoint, S3_REGION, connect_timeout=1.5, read_timeout=2.5, max_attempts=4
    )
    config = store.client.meta.config
    assert (config.connect_timeout, config.read_timeout) == (1.5, 2.5)
    # botocore's "max_attempts" counts retries only; "total_max_attempts" counts the first try too.
    assert config.retries == {"total_max_attempts": 4, "mode": "standard"}
    assert config.s3 == {"addressing_style": "path"}
    assert store.client.meta.endpoint_url == s3_endpoint
    assert store.client.meta.region_name == S3_REGION


@pytest.mark.parametrize("operation", list(OPERATIONS))
def test_s3_refused_connection_raises_storage_error_within_seconds(
    aws_credentials: None, operation: str
) -> None:
    store = S3ChunkStore(
        "bucket", "p/", f"http://127.0.0.1:{closed_port()}", S3_REGION, 0.5, 0.5, max_attempts=2
    )
    attempts: list[object] = []
    store.client.meta.events.register("before-send.s3", lambda **_: attempts.append(1))
    started = time.monotonic()
    with pytest.raises(StorageError, match=r"s3://bucket/p/docs/1") as raised:
        OPERATIONS[operation](store, "docs/1")
    assert time.monotonic() - started < 5
    assert "EndpointConnectionError" in str(raised.value)
    assert len(attempts) == 2


def test_s3_server_that_never_answers_raises_storage_error_after_the_read_timeout(
    aws_credentials: None, silent_server: str
) -> None:
    store = S3ChunkStore("bucket", "p/", silent_server, S3_REGION, 0.5, 0.5, max_attempts=2)
    started = time.monotonic()
    with pytest.raises(StorageError, match="ReadTimeoutError"):
        store.get("docs/1")
    assert time.monotonic() - started < 5


def test_s3_error_names_bucket_and_key_but_no_credentials(s3_endpoint: str, aws_credentials: None) -> None:
    store = S3ChunkStore("no-such-bucket", "p/", s3_endpoint, S3_REGION, 2.0, 5.0, 1)
    with pytest.raises(StorageError) as raised:
        store.put("docs/1", b"x")
    message = str(raised.value)
    assert "s3://no-such-bucket/p/docs/1" in message
    assert "NoSuchBucket" in message
    assert FAKE_SECRET_KEY not in message
    assert FAKE_ACCESS_KEY not in message


def test_get_chunk_store_builds_the_s3_store_from_settings(
    settings, s3_endpoint: str, s3_bucket: str, s3_prefix: str, aws_credentials: None
) -> None:
    settings.CHUNK_STORE = "s3"
    settings.S3_BUCKET = s3_bucket
    settings.S3_PREFIX = s3_prefix
    settings.S3_ENDPOINT_URL = s3_endpoint
    settings.S3_REGION = S3_REGION
    settings.S3_CONNECT_TIMEOUT = 1.0
    settings.S3_READ_TIMEOUT = 4.0
    settings.S3_MAX_ATTEMPTS = 2

    store = get_chunk_store()

    s3 = store.inner  # type: ignore[attr-defined]  # get_chunk_store's watcher around it
    assert isinstance(s3, S3ChunkStore)
    assert store is get_chunk_store()
    assert s3.client.meta.config.read_timeout == 4.0
    store.put("docs/1/chunk-0", b"configured")
    assert store.get("docs/1/chunk-0") == b"configured"
    head = admin_client(s3_endpoint).head_object(Bucket=s3_bucket, Key=s3_prefix + "docs/1/chunk-0")
    assert head["ContentLength"] == len(b"configured")

    settings.S3_READ_TIMEOUT = 6.0
    assert get_chunk_store() is not store
