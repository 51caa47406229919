"""The MCP server: our tools on the SDK's MCPServer."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

from mcp_server.tools.library import GET_CHUNK, LIST_COLLECTIONS, LIST_ITEMS, LIST_LIBRARIES
from mcp_server.tools.registry import ToolSpec, build_tool
from mcp_server.tools.search import SEARCH

SERVER_NAME = "mnemosyne"
SERVER_VERSION = "0.1.0"

TOOL_SPECS: tuple[ToolSpec, ...] = (SEARCH, GET_CHUNK, LIST_LIBRARIES, LIST_COLLECTIONS, LIST_ITEMS)

INSTRUCTIONS = (
    "Mnemosyne is a retrieval engine over the user's document libraries. It returns ranked evidence "
    "with citations; you do the synthesis. Typical flow: list_libraries to see what exists, search "
    "(optionally narrowed by library_uid or collection_uid) to find relevant chunks, get_chunk for a "
    "chunk's full text and neighbours. Cite the chunk_uid of every chunk you rely on."
)


def build_server() -> MCPServer:
    return MCPServer(
        name=SERVER_NAME,
        title="Mnemosyne",
        version=SERVER_VERSION,
        instructions=INSTRUCTIONS,
        tools=[build_tool(spec) for spec in TOOL_SPECS],
    )
