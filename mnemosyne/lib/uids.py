"""Stable, opaque identifiers: a type prefix and 16 random base32 characters."""

from __future__ import annotations

import base64
import secrets


def new_uid(prefix: str) -> str:
    token = base64.b32encode(secrets.token_bytes(10)).decode("ascii").lower()
    return f"{prefix}_{token}"


def new_library_uid() -> str:
    return new_uid("lib")


def new_collection_uid() -> str:
    return new_uid("col")


def new_item_uid() -> str:
    return new_uid("itm")


def new_chunk_uid() -> str:
    return new_uid("chk")


def new_job_uid() -> str:
    return new_uid("job")


def new_reembed_job_uid() -> str:
    return new_uid("emb")


def new_source_uid() -> str:
    return new_uid("src")


def new_evaluation_set_uid() -> str:
    return new_uid("set")


def new_run_uid() -> str:
    return new_uid("run")
