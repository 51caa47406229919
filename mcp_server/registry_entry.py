"""The MCP Registry's entry for a Mnemosyne deployment (`server.json`, schema 2025-12-11), and the
one-click installs hosts offer (Cursor's and VS Code's install links).

A registry entry names its server in the publisher's namespace (reverse DNS, or `io.github.<user>`,
which the registry verifies when it is published), so it is made for a deployment:
`manage.py server_json --name <namespace>/mnemosyne --url https://host/mcp/`. Without `--url` the
address is a template whose `{host}` the person installing it fills in. Either way the token is
asked for as a secret (`Authorization: Bearer {token}`), never written into the entry.
"""

from __future__ import annotations

import re
from typing import Any

SCHEMA = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
# The schema's own pattern for `name`: one slash between the namespace and the server's name.
NAME = re.compile(r"^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$")
URL = re.compile(r"^https?://[^\s]+$")
DESCRIPTION = "Hybrid search over your document libraries: ranked evidence cited to the page and box."


class BadEntry(ValueError):
    """A name or address the registry would refuse: say which and why."""


def server_json(*, name: str, version: str, title: str, url: str | None = None) -> dict[str, Any]:
    if not NAME.match(name) or len(name) > 200:
        raise BadEntry(
            f"--name {name[:80]!r}: the registry wants <namespace>/<name> (letters, digits, '.', '-' "
            "in the namespace; '.', '_', '-' in the name), e.g. io.github.your-user/mnemosyne"
        )
    remote: dict[str, Any] = {"type": "streamable-http", "url": url or "https://{host}/mcp/"}
    if url is None:
        remote["variables"] = {
            "host": {
                "description": "Where the Mnemosyne server answers, e.g. mnemosyne.example.org",
                "isRequired": True,
            }
        }
    elif not URL.match(url):
        raise BadEntry(f"--url {url[:80]!r}: an http(s) address of the server's /mcp/ endpoint")
    remote["headers"] = [
        {
            "name": "Authorization",
            "description": "A Mnemosyne token (mnem_…), from the console's Tokens page",
            "value": "Bearer {token}",
            "isRequired": True,
            "isSecret": True,
            "variables": {"token": {"description": "The token", "isRequired": True, "isSecret": True}},
        }
    ]
    return {
        "$schema": SCHEMA,
        "name": name,
        "title": title,
        "description": DESCRIPTION,
        "version": version,
        "remotes": [remote],
    }
