"""ChunkStore on S3 or an S3-compatible server (MinIO, R2), with bounded timeouts and retries."""

from __future__ import annotations

from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from mnemosyne.storage.base import ChunkNotFound, StorageError, validate_key

__all__ = ["S3ChunkStore"]

# DeleteObjects accepts at most this many keys per request.
DELETE_BATCH_SIZE = 1000
_MISSING_CODES = frozenset({"NoSuchKey", "404", "NotFound"})


def build_client(
    *,
    endpoint_url: str | None,
    region: str,
    connect_timeout: float,
    read_timeout: float,
    max_attempts: int,
) -> Any:
    """An S3 client that gives up within seconds, not botocore's 60 s timeouts."""
    config = Config(
        connect_timeout=connect_timeout,
        read_timeout=read_timeout,
        # total_max_attempts counts the first try; botocore's "max_attempts" would mean retries.
        retries={"total_max_attempts": max_attempts, "mode": "standard"},
        # MinIO and R2 serve buckets by path, not by virtual-host subdomain.
        s3={"addressing_style": "path"} if endpoint_url else None,
    )
    # A session of our own: boto3's default session is shared global state.
    session = boto3.session.Session()
    return session.client("s3", region_name=region, endpoint_url=endpoint_url, config=config)


class S3ChunkStore:
    def __init__(
        self,
        bucket: str,
        prefix: str = "",
        endpoint_url: str | None = None,
        region: str = "us-east-1",
        connect_timeout: float = 3.0,
        read_timeout: float = 5.0,
        max_attempts: int = 3,
        client: Any = None,
    ) -> None:
        if not bucket:
            raise ValueError("S3ChunkStore needs a bucket")
        self.bucket = bucket
        # "mnemosyne" and "mnemosyne/" mean the same folder; "" is the bucket root.
        self.prefix = prefix.rstrip("/") + "/" if prefix.strip("/") else ""
        if client is None:
            client = build_client(
                endpoint_url=endpoint_url,
                region=region,
                connect_timeout=connect_timeout,
                read_timeout=read_timeout,
                max_attempts=max_attempts,
            )
        self.client = client

    def _object_key(self, key: str) -> str:
        return self.prefix + validate_key(key)

    def _error(self, action: str, object_key: str, error: Exception) -> StorageError:
        if isinstance(error, ClientError):
            details = error.response.get("Error", {})
            reason = f"{details.get('Code', 'error')}: {details.get('Message', '')}".rstrip(": ")
        else:
            reason = f"{type(error).__name__}: {error}"
        return StorageError(f"S3 {action} failed for s3://{self.bucket}/{object_key}: {reason}")

    def put(self, key: str, data: bytes) -> None:
        object_key = self._object_key(key)
        try:
            self.client.put_object(Bucket=self.bucket, Key=object_key, Body=data)
        except (BotoCoreError, ClientError) as error:
            raise self._error("put", object_key, error) from error

    def get(self, key: str) -> bytes:
        object_key = self._object_key(key)
        try:
            response = self.client.get_object(Bucket=self.bucket, Key=object_key)
            body: bytes = response["Body"].read()
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") in _MISSING_CODES:
                raise ChunkNotFound(key) from None
            raise self._error("get", object_key, error) from error
        except BotoCoreError as error:
            raise self._error("get", object_key, error) from error
        return body

    def delete(self, key: str) -> None:
        # S3 answers 204 for a missing key too, so this is idempotent without a lookup.
        object_key = self._object_key(key)
        try:
            self.client.delete_object(Bucket=self.bucket, Key=object_key)
        except (BotoCoreError, ClientError) as error:
            raise self._error("delete", object_key, error) from error

    def delete_prefix(self, prefix: str) -> int:
        folder = self._object_key(prefix.rstrip("/")) + "/"
        deleted = 0
        try:
            pages = self.client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=folder)
            # Delete page by page: continuation tokens are key-based, so deleting listed keys is safe.
            for page in pages:
                keys = [item["Key"] for item in page.get("Contents", [])]
                for start in range(0, len(keys), DELETE_BATCH_SIZE):
                    deleted += self._delete_batch(keys[start : start + DELETE_BATCH_SIZE])
        except (BotoCoreError, ClientError) as error:
            raise self._error("delete_prefix", folder, error) from error
        return deleted

    def _delete_batch(self, keys: list[str]) -> int:
        response = self.client.delete_objects(
            Bucket=self.bucket,
            Delete={"Objects": [{"Key": key} for key in keys], "Quiet": True},
        )
        # DeleteObjects answers 200 even when single keys fail; those come back in Errors.
        errors = response.get("Errors", [])
        if errors:
            first = errors[0]
            raise StorageError(
                f"S3 delete_prefix failed for {len(errors)} of {len(keys)} objects in s3://{self.bucket}, "
                f"first {first.get('Key')}: {first.get('Code')}: {first.get('Message')}"
            )
        return len(keys)
