"""The client configurations `make run` prints (and docs/clients.md shows): Claude Desktop over
stdio with this checkout's own Python (no Node.js), Claude Desktop through `mcp-remote` for a
server elsewhere, Claude Code over HTTP, and Cursor's and VS Code's one-click install links; the
console adds Cursor's and VS Code's configuration files."""

from __future__ import annotations

import base64
import json
import shlex
import sys
from typing import Any
from urllib.parse import quote

from django.conf import settings


def stdio_config(token: str | None) -> dict[str, Any]:
    """Claude Desktop starts `manage.py mcp_stdio` itself; the token in its environment (or, with
    authentication off, the local operator)."""
    server: dict[str, Any] = {
        "command": sys.executable,
        "args": [str(settings.BASE_DIR / "manage.py"), "mcp_stdio", *([] if token else ["--local"])],
    }
    if token:
        server["env"] = {"MNEMOSYNE_TOKEN": token}
    return {"mcpServers": {"mnemosyne": server}}


def remote_config(url: str, token: str | None) -> dict[str, Any]:
    """Claude Desktop reaching a running server over HTTP through mcp-remote (needs Node.js)."""
    server: dict[str, Any] = {"command": "npx", "args": ["-y", "mcp-remote", url]}
    if token:
        server["args"] += ["--header", "Authorization:${MNEMOSYNE_AUTH}"]
        server["env"] = {"MNEMOSYNE_AUTH": f"Bearer {token}"}
    return {"mcpServers": {"mnemosyne": server}}


def claude_code_command(url: str, token: str | None) -> str:
    words = ["claude", "mcp", "add", "--transport", "http", "mnemosyne", url]
    if token:
        words += ["--header", f"Authorization: Bearer {token}"]
    return shlex.join(words)


def cursor_config(url: str, token: str | None) -> dict[str, Any]:
    """Cursor (.cursor/mcp.json): streamable HTTP by URL, the token as a header."""
    server: dict[str, Any] = {"url": url}
    if token:
        server["headers"] = {"Authorization": f"Bearer {token}"}
    return {"mcpServers": {"mnemosyne": server}}


def vscode_config(url: str, token: str | None) -> dict[str, Any]:
    """VS Code (.vscode/mcp.json): an HTTP server with the token as a header."""
    server: dict[str, Any] = {"type": "http", "url": url}
    if token:
        server["headers"] = {"Authorization": f"Bearer {token}"}
    return {"servers": {"mnemosyne": server}}


def cursor_install_link(url: str, token: str | None) -> str:
    """Cursor's one-click install: its deep link, the server's configuration base64-encoded."""
    config = json.dumps(cursor_config(url, token)["mcpServers"]["mnemosyne"]).encode()
    return f"cursor://anysphere.cursor-deeplink/mcp/install?name=mnemosyne&config={quote(base64.b64encode(config))}"


def vscode_install_link(url: str, token: str | None) -> str:
    """VS Code's one-click install: `vscode:mcp/install?` and the server's configuration as JSON."""
    server = {"name": "mnemosyne", **vscode_config(url, token)["servers"]["mnemosyne"]}
    return f"vscode:mcp/install?{quote(json.dumps(server), safe='')}"


def describe(url: str, token: str | None) -> list[str]:
    return [
        "Claude Desktop (claude_desktop_config.json), over stdio with this checkout's Python:",
        json.dumps(stdio_config(token), indent=2),
        "Claude Desktop, reaching this server over HTTP instead (needs Node.js; for a remote server):",
        json.dumps(remote_config(url, token), indent=2),
        "Claude Code:",
        claude_code_command(url, token),
        "Cursor, one click (open the link):",
        cursor_install_link(url, token),
        "VS Code, one click (open the link):",
        vscode_install_link(url, token),
    ]
