"""What listing a Source gives a sync: its files, each with a fingerprint and a way to read it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mnemosyne.ingestion.sources import Skipped


class SourceUnavailable(Exception):
    """The source cannot be listed (not a directory, not a git repository, …); the message says why."""


@dataclass(frozen=True)
class Listed:
    # The item's source name: the location's directory name (or bucket), "/", the path within it.
    name: str
    fingerprint: str
    read: Callable[[], bytes]


@dataclass
class Listing:
    files: dict[str, Listed]
    skipped: list[Skipped]
    commit: str = ""
