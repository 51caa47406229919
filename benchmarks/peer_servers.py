"""The MCP retrieval servers a user would pick instead, each from PyPI in a virtualenv of its own,
embedding with the MiniLM-L6 weights this project ships, and served on 127.0.0.1.

- chroma-mcp (a persistent Chroma client; Chroma's own ONNX MiniLM pipeline). Its 0.2.6 pins
  mcp 1.6.0, which serves stdio and SSE only; mcp 1.30.0 (what mcp-server-qdrant's fastmcp pulls
  in) is installed over it for streamable HTTP, and its FastMCP code runs on it unchanged.
- mcp-server-qdrant in local mode (an on-disk Qdrant in its process; FastEmbed's MiniLM).

Neither may download anything: both find the model where their libraries keep their downloads,
written there from the ONNX graph the project exported from its bundled weights (the graph its
queries run on) and the bundled tokenizer files, and run with HF_HUB_OFFLINE=1.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psutil

from benchmarks import processes

Log = Callable[[str], None]
START_TIMEOUT_SECONDS = 300
TOKENIZER_FILES = (
    "config.json",
    "special_tokens_map.json",
    "tokenizer_config.json",
    "tokenizer.json",
    "vocab.txt",
)

# Chroma's stdio entry point with the transport changed: the same client setup, then FastMCP over
# streamable HTTP on the port given.
CHROMA_HTTP = """
import sys
from chroma_mcp import server
args = server.create_parser().parse_args(["--client-type", "persistent", "--data-dir", sys.argv[1]])
server.get_chroma_client(args)
server.mcp.settings.host = "127.0.0.1"
server.mcp.settings.port = int(sys.argv[2])
server.mcp.run(transport="streamable-http")
"""


@dataclass(frozen=True)
class Peer:
    name: str
    # pip install steps, in order (a later step may override an earlier one's pins).
    installs: tuple[tuple[str, ...], ...]
    # The MCP endpoint's path on the server.
    path: str
    search_tool: str

    @property
    def version(self) -> str:
        return self.installs[0][0].split("==", 1)[1]

    def key(self) -> str:
        pins = json.dumps([sys.version_info[:2], self.installs])
        return f"{self.name}-{hashlib.sha256(pins.encode()).hexdigest()[:12]}"


CHROMA = Peer(
    name="chroma-mcp",
    installs=(("chroma-mcp==0.2.6",), ("mcp==1.30.0",)),
    path="/mcp",
    search_tool="chroma_query_documents",
)
QDRANT = Peer(
    name="mcp-server-qdrant",
    installs=(("mcp-server-qdrant==0.8.1",),),
    path="/mcp/",
    search_tool="qdrant-find",
)
PEERS = (QDRANT, CHROMA)


@dataclass
class Running:
    name: str
    base: str
    path: str
    pid: int
    extra_processes: Callable[[], list[psutil.Process]] = field(default=lambda: [])

    @property
    def url(self) -> str:
        return self.base + self.path

    def processes(self) -> list[psutil.Process]:
        """The server's process tree."""
        try:
            parent = psutil.Process(self.pid)
            return [parent, *parent.children(recursive=True)]
        except psutil.Error:
            return []

    def database_processes(self) -> list[psutil.Process]:
        """Whatever else serves its searches (Mnemosyne's PostgreSQL; none for a peer in local mode)."""
        return self.extra_processes()


def ensure_venv(peer: Peer, cache: Path, log: Log) -> Path:
    """The peer's virtualenv (made once per set of pins); its python."""
    venv = cache / peer.key()
    python = venv / "bin" / "python"
    done = venv / ".installed"
    if done.is_file():
        return python
    shutil.rmtree(venv, ignore_errors=True)
    log(f"{peer.name}: making its virtualenv in {venv}")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    for step in peer.installs:
        subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *step],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    done.write_text(json.dumps(peer.installs))
    return python


def _place_model(target: Path, graph: Path, tokenizer_dir: Path) -> None:
    target.mkdir(parents=True, exist_ok=True)
    model = target / "model.onnx"
    if not model.is_file() or model.stat().st_size != graph.stat().st_size:
        model.unlink(missing_ok=True)
        try:
            os.link(graph, model)
        except OSError:
            shutil.copyfile(graph, model)
    for name in TOKENIZER_FILES:
        shutil.copyfile(tokenizer_dir / name, target / name)


def chroma_home(cache: Path, graph: Path, tokenizer_dir: Path) -> Path:
    """A HOME whose ~/.cache holds Chroma's MiniLM download (its ONNXMiniLM_L6_V2 checks those files)."""
    home = cache / "chroma-home"
    _place_model(
        home / ".cache" / "chroma" / "onnx_models" / "all-MiniLM-L6-v2" / "onnx", graph, tokenizer_dir
    )
    return home


def fastembed_cache(cache: Path, graph: Path, tokenizer_dir: Path) -> Path:
    """FastEmbed's cache (a Hugging Face hub cache) holding its all-MiniLM-L6-v2 source repository."""
    root = cache / "fastembed"
    repository = root / "models--Qdrant--all-MiniLM-L6-v2-onnx"
    _place_model(repository / "snapshots" / "mnemosyne", graph, tokenizer_dir)
    (repository / "refs").mkdir(parents=True, exist_ok=True)
    (repository / "refs" / "main").write_text("mnemosyne")
    return root


def _command(
    peer: Peer, python: Path, data: Path, port: int, models: Path
) -> tuple[list[str], dict[str, str]]:
    base = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HF_HUB_OFFLINE": "1",
        "ANONYMIZED_TELEMETRY": "False",
        "PYTHONUNBUFFERED": "1",
    }
    if peer is CHROMA:
        return [str(python), "-c", CHROMA_HTTP, str(data), str(port)], {**base, "HOME": str(models)}
    return [str(python.parent / "mcp-server-qdrant"), "--transport", "streamable-http"], {
        **base,
        "HOME": str(data),
        "COLLECTION_NAME": "scifact",
        "QDRANT_LOCAL_PATH": str(data / "qdrant"),
        "QDRANT_SEARCH_LIMIT": "10",
        "FASTEMBED_CACHE_PATH": str(models),
        "FASTMCP_SERVER_HOST": "127.0.0.1",
        "FASTMCP_SERVER_PORT": str(port),
        "FASTMCP_SERVER_LOG_LEVEL": "WARNING",
    }


def _ready(url: str) -> bool:
    body = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "probe", "version": "0"},
        },
    }
    headers = {"Accept": "application/json, text/event-stream"}
    try:
        return httpx.post(url, json=body, headers=headers, timeout=5).status_code == 200
    except httpx.TransportError:
        return False


@contextmanager
def serving(peer: Peer, *, python: Path, data: Path, models: Path, log_path: Path) -> Iterator[Running]:
    """The peer's server on a free port until the block ends."""
    port = processes.free_port()
    data.mkdir(parents=True, exist_ok=True)
    command, environment = _command(peer, python, data, port, models)
    with log_path.open("wb") as log_file:
        process = subprocess.Popen(
            command, env=environment, stdout=log_file, stderr=subprocess.STDOUT, cwd=data
        )
        running = Running(peer.name, f"http://127.0.0.1:{port}", peer.path, process.pid)
        try:
            deadline = time.monotonic() + START_TIMEOUT_SECONDS
            while not _ready(running.url):
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"{peer.name} did not start:\n{log_path.read_text()[-3000:]}")
                time.sleep(0.25)
            yield running
        finally:
            processes.stop(process)
