"""The wire's models (the tools' pydantic arguments and results, whose names MCP clients see in
the output schemas) and the engine's types never share a name, so a reader always knows which
side of the MCP surface a class is on."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

from pydantic import BaseModel

import mcp_server.tools
import mnemosyne

ENGINE_PACKAGES = ("search", "ingestion", "library", "graph", "storage", "evaluation")


def _classes(package_name: str) -> dict[str, str]:
    package = importlib.import_module(package_name)
    found: dict[str, str] = {}
    for info in pkgutil.walk_packages(package.__path__, f"{package_name}."):
        if ".migrations" in info.name:
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if inspect.isclass(value) and value.__module__ == info.name:
                found[name] = info.name
    return found


def test_no_wire_model_shares_a_name_with_an_engine_type() -> None:
    wire = {
        name: module
        for name, module in _classes(mcp_server.tools.__name__).items()
        if issubclass(getattr(importlib.import_module(module), name), BaseModel)
    }
    assert {"SearchHit", "UpsertResult", "SearchResult"} <= set(wire)
    engine: dict[str, str] = {}
    for package in ENGINE_PACKAGES:
        engine |= _classes(f"{mnemosyne.__name__}.{package}")
    assert "RankedHit" in engine and "Upserted" in engine
    shared = {name: (wire[name], engine[name]) for name in set(wire) & set(engine)}
    assert shared == {}
