"""ChunkStore: full chunk text, originals and images, by key."""

from __future__ import annotations

from typing import Protocol


class ChunkNotFound(KeyError):
    """No object is stored under the key."""


class ChunkStore(Protocol):
    def put(self, key: str, data: bytes) -> None: ...

    def get(self, key: str) -> bytes: ...

    def delete(self, key: str) -> None:
        """Delete the object; deleting a missing key is not an error."""
        ...

    def delete_prefix(self, prefix: str) -> int:
        """Delete every object whose key starts with `prefix`; return how many went."""
        ...
