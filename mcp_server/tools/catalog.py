"""Every tool the server offers, in the order clients list them; looked up by name by every transport."""

from __future__ import annotations

from mcp_server.tools.collections import GET_COLLECTION_CONFIG, LIST_TOPICS
from mcp_server.tools.concepts import GET_CONCEPT_NEIGHBORS, LIST_CONCEPTS
from mcp_server.tools.evaluation import GET_EVALUATION_RUN, LIST_EVALUATION_SETS, RUN_EVALUATION
from mcp_server.tools.ingestion import GET_INGESTION_STATUS
from mcp_server.tools.items import DELETE_ITEM, UPSERT_ITEM
from mcp_server.tools.library import GET_CHUNK, LIST_COLLECTIONS, LIST_ITEMS, LIST_LIBRARIES
from mcp_server.tools.reembedding import REEMBED_LIBRARY
from mcp_server.tools.search import SEARCH
from mcp_server.tools.sources import SYNC_SOURCE
from mcp_server.tools.spec import ToolSpec

TOOL_SPECS: tuple[ToolSpec, ...] = (
    SEARCH,
    GET_CHUNK,
    LIST_LIBRARIES,
    LIST_COLLECTIONS,
    LIST_ITEMS,
    LIST_TOPICS,
    LIST_CONCEPTS,
    GET_CONCEPT_NEIGHBORS,
    GET_COLLECTION_CONFIG,
    UPSERT_ITEM,
    GET_INGESTION_STATUS,
    SYNC_SOURCE,
    DELETE_ITEM,
    LIST_EVALUATION_SETS,
    RUN_EVALUATION,
    GET_EVALUATION_RUN,
    REEMBED_LIBRARY,
)
TOOL_NAMES = frozenset(spec.name for spec in TOOL_SPECS)
WRITE_TOOLS = frozenset(spec.name for spec in TOOL_SPECS if spec.writes)
_BY_NAME = {spec.name: spec for spec in TOOL_SPECS}


def spec_named(name: str) -> ToolSpec | None:
    return _BY_NAME.get(name)
