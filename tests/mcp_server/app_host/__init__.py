"""An MCP Apps host for the tests, none of whose host logic is written here: MCP-UI's AppRenderer
(@mcp-ui/client, which drives the ext-apps AppBridge) in a page bundled by esbuild from host.jsx,
connected with the official TypeScript SDK client; the app runs in the MCP Inspector's sandbox
proxy (its double-iframe relay, as the Inspector ships it) served from a second origin.

The page and the proxy are served by two small local HTTP servers. The host page reaches
Mnemosyne at its own origin's /mcp/, which the browser routes to the test server (`route_mcp`), as
a host's backend would: Mnemosyne sends no CORS headers, and no page of another origin calls it.
"""

from __future__ import annotations

import contextlib
import functools
import json
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import SimpleHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import quote

from playwright.sync_api import Page, Route

from tests.json_server import QuietServer
from tests.server_fixtures import NODE_MODULES, node_bin

HERE = Path(__file__).parent
SANDBOX_PROXY = (
    NODE_MODULES / "@modelcontextprotocol" / "inspector" / "clients" / "web" / "static" / "sandbox_proxy.html"
)


def bundle(into: Path) -> Path:
    """host.html and host.js (React, MCP-UI and the SDK client in one script) in `into`."""
    into.mkdir(parents=True, exist_ok=True)
    script = (
        "require('esbuild').buildSync({entryPoints: [process.argv[1]], outfile: process.argv[2],"
        " bundle: true, format: 'iife', jsx: 'automatic', minify: true, logLevel: 'error',"
        " define: {'process.env.NODE_ENV': '\"production\"'}})"
    )
    subprocess.run(
        [str(node_bin() / "node"), "-e", script, str(HERE / "host.jsx"), str(into / "host.js")],
        cwd=NODE_MODULES.parent,
        check=True,
        timeout=120,
    )
    (into / "host.html").write_bytes((HERE / "host.html").read_bytes())
    return into


class _Files(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextlib.contextmanager
def _serving(directory: Path, host: str) -> Iterator[str]:
    server = QuietServer(("127.0.0.1", 0), functools.partial(_Files, directory=str(directory)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://{host}:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@dataclass(frozen=True)
class Host:
    url: str
    sandbox_url: str

    def open(
        self, page: Page, mcp_url: str, token: str, tool: str, arguments: dict[str, Any], theme: str = "light"
    ) -> None:
        """Render `tool`'s result with its app, as the host does after the model called it."""
        route_mcp(page, self.url, mcp_url)
        fragment = "&".join(
            f"{key}={quote(value, safe='')}"
            for key, value in {
                "server": f"{self.url}/mcp/",
                "token": token,
                "tool": tool,
                "arguments": json.dumps(arguments),
                "sandbox": f"{self.sandbox_url}/sandbox_proxy.html",
                "theme": theme,
            }.items()
        )
        page.goto(f"{self.url}/host.html#{fragment}")


@contextlib.contextmanager
def app_host(workdir: Path) -> Iterator[Host]:
    """The host page on 127.0.0.1 and the sandbox proxy on localhost: two origins, as the
    double-iframe design requires."""
    pages = bundle(workdir / "host")
    sandbox = workdir / "sandbox"
    sandbox.mkdir(parents=True, exist_ok=True)
    (sandbox / "sandbox_proxy.html").write_bytes(SANDBOX_PROXY.read_bytes())
    with _serving(pages, "127.0.0.1") as url, _serving(sandbox, "localhost") as sandbox_url:
        yield Host(url=url, sandbox_url=sandbox_url)


def route_mcp(page: Page, host_url: str, mcp_url: str) -> None:
    """The host page's /mcp/ goes to the Mnemosyne under test (the request itself unchanged)."""

    def forward(route: Route) -> None:
        route.continue_(url=route.request.url.replace(f"{host_url}/mcp/", f"{mcp_url}/mcp/", 1))

    page.route(f"{host_url}/mcp/**", forward)
