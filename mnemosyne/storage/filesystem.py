"""ChunkStore on the local filesystem, under the data directory."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path

from mnemosyne.storage.base import ChunkNotFound, InvalidKey, StorageError, validate_key

__all__ = ["FilesystemChunkStore", "InvalidKey"]


class FilesystemChunkStore:
    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.root.mkdir(parents=True, exist_ok=True)

    def _path(self, key: str) -> Path:
        return self.root / validate_key(key)

    def put(self, key: str, data: bytes) -> None:
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # Write then rename, so a reader never sees half an object.
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        except OSError as exc:
            raise _error("write", key, exc) from None
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(tmp, path)
        except BaseException as exc:
            Path(tmp).unlink(missing_ok=True)
            if isinstance(exc, OSError):
                raise _error("write", key, exc) from None
            raise

    def get(self, key: str) -> bytes:
        try:
            return self._path(key).read_bytes()
        # A folder of other keys, or a path through a stored object, is no object either (as on S3).
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            raise ChunkNotFound(key) from None
        except OSError as exc:
            raise _error("read", key, exc) from None

    def delete(self, key: str) -> None:
        path = self._path(key)
        if path.is_dir():
            return
        with contextlib.suppress(FileNotFoundError, NotADirectoryError):
            path.unlink()

    def delete_prefix(self, prefix: str) -> int:
        directory = self._path(prefix.rstrip("/"))
        if not directory.is_dir():
            return 0
        count = sum(1 for path in directory.rglob("*") if path.is_file())
        shutil.rmtree(directory, ignore_errors=True)
        return count


def _error(action: str, key: str, exc: OSError) -> StorageError:
    """A failure named by the key, not the server's path (which callers never see)."""
    return StorageError(
        f"the filesystem chunk store cannot {action} {key}: {exc.strerror or type(exc).__name__}"
    )
