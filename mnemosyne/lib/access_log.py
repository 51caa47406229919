"""uvicorn's access log without query strings.

A credential sent in a URL (`?token=…`, `?access_token=…`) is refused, but uvicorn would still
write the URL to its access log; so every query string is cut from the logged path. MCP and the
admin carry nothing in query strings that the log needs.
"""

from __future__ import annotations

import logging


class NoQueryStrings(logging.Filter):
    # uvicorn.access records: args = (client address, method, full path, HTTP version, status).
    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) >= 3 and isinstance(args[2], str) and "?" in args[2]:
            path = args[2].split("?", 1)[0] + "?…"
            record.args = (*args[:2], path, *args[3:])
        return True
