"""ChunkStore: full chunk text, originals and images, by key."""

from __future__ import annotations

from typing import Protocol


class ChunkNotFound(KeyError):
    """No object is stored under the key."""


class InvalidKey(ValueError):
    """The key is not a relative, '/'-separated path without '.' or '..' segments."""


class StorageError(Exception):
    """The storage backend failed (unreachable, denied, misconfigured); the message names bucket and key."""


def validate_key(key: str) -> str:
    """Return `key` if it is safe on every backend, else raise InvalidKey.

    Keys are relative paths: no leading '/', no backslash, no empty, '.' or '..' segment, so a key
    can never escape the filesystem root or alias another key on S3.
    """
    if (
        not key
        or key.startswith("/")
        or "\\" in key
        or any(part in ("", ".", "..") for part in key.split("/"))
    ):
        raise InvalidKey(f"invalid storage key {key!r}")
    return key


class ChunkStore(Protocol):
    def put(self, key: str, data: bytes) -> None: ...

    def get(self, key: str) -> bytes:
        """Return the object; raise ChunkNotFound when there is none."""
        ...

    def delete(self, key: str) -> None:
        """Delete the object; deleting a missing key is not an error."""
        ...

    def delete_prefix(self, prefix: str) -> int:
        """Delete every object under the directory `prefix`; return how many went.

        The prefix is a directory: "items/ab" and "items/ab/" both delete the keys starting with
        "items/ab/", never "items/abc/…" and never the key "items/ab" itself.
        """
        ...
