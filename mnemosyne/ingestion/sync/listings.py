"""What listing a Source gives a sync: its files, each with a fingerprint and a way to read it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from mnemosyne.ingestion.inputs import Skipped


class SourceUnavailable(Exception):
    """The source cannot be listed (not a directory, not a git repository, …); the message says why."""


@dataclass(frozen=True)
class Listed:
    # The item's source name: the location's directory name (or bucket), "/", the path within it.
    name: str
    fingerprint: str
    read: Callable[[], bytes]
    # The file name the parser goes by, when the name does not end in one (a URL).
    filename: str = ""


@dataclass
class Listing:
    files: dict[str, Listed]
    skipped: list[Skipped]
    commit: str = ""
    # Names that exist but could not be read this time (a page that timed out): their items stay.
    unreadable: set[str] = field(default_factory=set)
