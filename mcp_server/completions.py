"""Completions (completion/complete) for prompt arguments and resource template variables.

cite-sources: `library` completes to library names, `collection` to collection names (within the
library already chosen, when there is one). Templates: library_uid, item_uid and chunk_uid to uids.
Only what lies inside the caller's libraries is offered (selectors honour the library boundary).
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp.types import Completion as CompletionResult
from mcp.types import (
    CompletionArgument,
    CompletionContext,
    PromptReference,
    ResourceTemplateReference,
)

from mcp_server.prompts import CITE_SOURCES
from mnemosyne.lib import blocking
from mnemosyne.library import selectors
from mnemosyne.library.errors import NotFound
from mnemosyne.library.models import Chunk, Item, Library

MAX_VALUES = 100  # the spec's cap per response


def _names(queryset_names: list[str], partial: str) -> CompletionResult:
    """Names starting with `partial` first, then those containing it (case-insensitive)."""
    needle = partial.strip().lower()
    starting = [n for n in queryset_names if n.lower().startswith(needle)]
    containing = [n for n in queryset_names if needle in n.lower() and n not in starting]
    values = starting + containing
    return CompletionResult(values=values[:MAX_VALUES], total=len(values), has_more=len(values) > MAX_VALUES)


def _uids(model: type[Library] | type[Item] | type[Chunk], partial: str) -> CompletionResult:
    values, total = selectors.uids_starting_with(model, partial, limit=MAX_VALUES)
    return CompletionResult(values=values, total=total, has_more=total > len(values))


def _collection_names(partial: str, library: str | None) -> CompletionResult:
    queryset = selectors.collections()
    if library:
        try:
            queryset = queryset.filter(library=selectors.find_library(library))
        except NotFound:
            return CompletionResult(values=[], total=0, has_more=False)
    return _names(list(dict.fromkeys(queryset.order_by("name").values_list("name", flat=True))), partial)


def suggest(
    ref: PromptReference | ResourceTemplateReference,
    argument: CompletionArgument,
    context: CompletionContext | None,
) -> CompletionResult | None:
    """What to offer for one argument; None when it is not one we complete."""
    chosen = (context.arguments or {}) if context is not None else {}
    partial = argument.value
    if isinstance(ref, PromptReference):
        if ref.name != CITE_SOURCES:
            return None
        if argument.name == "library":
            return _names(list(selectors.libraries().values_list("name", flat=True)), partial)
        if argument.name == "collection":
            return _collection_names(partial, chosen.get("library"))
        return None
    if argument.name == "library_uid":
        return _uids(Library, partial)
    if argument.name == "item_uid":
        return _uids(Item, partial)
    if argument.name == "chunk_uid":
        return _uids(Chunk, partial)
    return None


def register(server: MCPServer) -> None:
    @server.completion()
    async def complete(
        ref: PromptReference | ResourceTemplateReference,
        argument: CompletionArgument,
        context: CompletionContext | None,
    ) -> CompletionResult | None:
        return await blocking.run(suggest, ref, argument, context)
