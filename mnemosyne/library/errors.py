"""Typed errors with messages meant for the user (a CLI operator or an LLM client)."""

from __future__ import annotations


class LibraryError(Exception):
    """Base class: the message is safe and useful to show to the caller."""


class InvalidArgument(LibraryError, ValueError):
    pass


class NotFound(LibraryError, LookupError):
    def __init__(self, kind: str, uid: str) -> None:
        super().__init__(f"no {kind} with uid {uid!r}")
        self.kind = kind
        self.uid = uid
