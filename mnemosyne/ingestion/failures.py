"""Why an item failed, as its users see it (list_items, upsert_item's error, the admin): the
error's type and message with server paths cut out, cut short; for a database error only its kind
(its text is PostgreSQL's, in the server log where the failure was logged); for an outage, what is
unavailable."""

from __future__ import annotations

import re

from django.db import DatabaseError

from mnemosyne.lib import outages
from mnemosyne.lib.outages import Dependency
from mnemosyne.storage import StorageError

# A failure's message is cut to this many characters in the item's embedding_error.
MAX_REASON_CHARS = 500

# An absolute path of two or more parts ("/srv/data/chunks/x"): server detail, never shown.
_SERVER_PATH = re.compile(r"(?<![\w.~/])/(?:[^\s'\"/:]+/)+[^\s'\":,]*")


def reason(exc: BaseException) -> str:
    if outages.is_database_outage(exc):
        return outages.message(Dependency.DATABASE)
    if isinstance(exc, DatabaseError):
        return f"{type(exc).__name__} (the database refused the write; the server log has the details)"
    text = _SERVER_PATH.sub("…", str(exc))
    said = f"{type(exc).__name__}: {text[:MAX_REASON_CHARS]}" if text else type(exc).__name__
    if isinstance(exc, StorageError):
        return f"{outages.message(Dependency.CHUNK_STORE)} ({said})"
    return said
