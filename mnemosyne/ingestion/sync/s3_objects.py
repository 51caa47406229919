"""An S3 source's objects (boto3): every key under the prefix with a supported suffix and matching
the patterns, fingerprinted by its ETag, read when a sync asks. Access refused, a missing bucket or
an unreachable endpoint make the source unavailable with that reason."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlsplit

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError
from django.conf import settings

from mnemosyne.ingestion.inputs import Skipped, too_large
from mnemosyne.ingestion.sync.listings import Listed, Listing, SourceUnavailable


def parse_location(location: str) -> tuple[str, str]:
    """s3://bucket/prefix → (bucket, prefix); ValueError when it is not one."""
    parts = urlsplit(location)
    if parts.scheme != "s3" or not parts.netloc:
        raise ValueError(f"not an S3 location (s3://bucket/prefix): {location!r}")
    return parts.netloc, parts.path.lstrip("/")


def s3_objects(location: str, suffixes: set[str], keep: Callable[[str], bool]) -> Listing:
    bucket, prefix = parse_location(location)
    client = _client()
    listing = Listing(files={}, skipped=[])
    try:
        for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
            for entry in page.get("Contents", []):
                key: str = entry["Key"]
                relative = key[len(prefix) :].lstrip("/")
                if not relative or key.endswith("/") or PurePosixPath(key).suffix.lower() not in suffixes:
                    continue
                if any(part.startswith(".") for part in relative.split("/")) or not keep(relative):
                    continue
                oversize = too_large(entry.get("Size", 0))
                if oversize:
                    listing.skipped.append(Skipped(Path(key), oversize))
                    continue
                name = f"{bucket}/{key}"
                read = functools.partial(_read, client, bucket, key)
                listing.files[name] = Listed(name, str(entry.get("ETag", "")).strip('"'), read)
    except ClientError as exc:
        code = exc.response.get("Error", {}).get("Code", "")
        raise SourceUnavailable(f"S3 refused listing s3://{bucket}/{prefix} ({code or 'error'})") from None
    except BotoCoreError as exc:
        raise SourceUnavailable(
            f"S3 cannot be reached for s3://{bucket}/{prefix} ({type(exc).__name__})"
        ) from None
    return listing


def _client() -> Any:
    config = Config(
        connect_timeout=settings.S3_CONNECT_TIMEOUT,
        read_timeout=settings.S3_READ_TIMEOUT,
        retries={"max_attempts": settings.S3_MAX_ATTEMPTS, "mode": "standard"},
    )
    return boto3.session.Session().client(
        "s3", endpoint_url=settings.SOURCES_S3_ENDPOINT_URL, region_name=settings.S3_REGION, config=config
    )


def _read(client: Any, bucket: str, key: str) -> bytes:
    try:
        return bytes(client.get_object(Bucket=bucket, Key=key)["Body"].read())
    except (ClientError, BotoCoreError) as exc:
        raise OSError(f"S3 refused reading {key} ({type(exc).__name__})") from None
