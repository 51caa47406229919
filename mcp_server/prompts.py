"""Prompts: cite-sources, how to answer a question from the libraries with chunk_uid citations."""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS
from pydantic import Field

from mnemosyne.lib import blocking
from mnemosyne.library import selectors
from mnemosyne.library.errors import NotFound
from mnemosyne.library.models import Collection, Library

CITE_SOURCES = "cite-sources"


def _scope(library: str | None, collection: str | None) -> str:
    """The search arguments naming the library and collection asked for (by name or uid)."""
    try:
        found_library, found_collection = blocking.bracketed(_find, library, collection)
    except NotFound as exc:
        # An MCPError reaches the client as is; anything else would be masked as a rendering failure.
        raise MCPError(INVALID_PARAMS, f"{exc}; completion/complete lists what exists") from None
    if found_collection is not None:
        return (
            f'collection_uid="{found_collection.uid}" (the collection {found_collection.name} of the library '
            f"{found_collection.library.name})"
        )
    if found_library is not None:
        return f'library_uid="{found_library.uid}" (the library {found_library.name})'
    return "no filter (all libraries)"


def _find(library: str | None, collection: str | None) -> tuple[Library | None, Collection | None]:
    found_library = selectors.find_library(library) if library else None
    found_collection = selectors.find_collection(collection, library=found_library) if collection else None
    return found_library, found_collection


def cite_sources(
    question: Annotated[str, Field(description="The question to answer from the libraries.")],
    library: Annotated[
        str | None, Field(description="Only use this library: its name or uid (completion lists them).")
    ] = None,
    collection: Annotated[
        str | None, Field(description="Only use this collection: its name or uid (completion lists them).")
    ] = None,
) -> str:
    scope = _scope(library, collection)
    return f"""Answer the question below from the documents in Mnemosyne, citing your sources.

Question: {question}

How to work:
1. Call the `search` tool with a focused query, using {scope}. Search again with other wording \
(or `alpha` nearer 0 for exact terms) if the first results miss.
2. For each promising hit, read the surrounding text with `get_chunk` (chunk_uid, context=1 or 2) \
before relying on it.
3. Answer only from what the chunks say. After every sentence that relies on a chunk, cite it as \
[chunk_uid], e.g. [chk_2mewldfw2dq2ednw]; cite several when several support it.
4. If the chunks do not answer the question, say so plainly, and say what you did find.
5. End with a "Sources" list: one line per cited chunk_uid with its item title, section and page."""


def register(server: MCPServer) -> None:
    server.prompt(
        name=CITE_SOURCES,
        title="Answer with cited sources",
        description="Answer a question from the libraries, citing the chunk_uid of every chunk relied on; "
        "optionally only within one library or collection.",
    )(cite_sources)
