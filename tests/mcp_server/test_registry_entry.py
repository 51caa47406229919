"""The MCP Registry entry `manage.py server_json` writes, validated against the registry's published
schema (2025-12-11, as skillsaw bundles it byte for byte from the registry's static assets); bad
names and addresses refused with a clear message."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import jsonschema
import pytest
from django.core.management import CommandError, call_command

from mcp_server.registry_entry import SCHEMA
from mcp_server.server import SERVER_VERSION

PUBLISHED = resources.files("skillsaw.schemas.mcp_registry.v2025_12_11").joinpath("server.schema.json")


def _published() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(PUBLISHED.read_text(encoding="utf-8"))
    assert schema["$id"] == SCHEMA
    return schema


def _written(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    call_command("server_json", *args)
    entry: dict[str, Any] = json.loads(capsys.readouterr().out)
    return entry


@pytest.mark.parametrize("url", [None, "https://mnemosyne.example.org/mcp/"])
def test_the_entry_is_valid_against_the_published_schema(
    capsys: pytest.CaptureFixture[str], url: str | None
) -> None:
    args = ["--name", "io.github.example-user/mnemosyne", *(["--url", url] if url else [])]
    entry = _written(capsys, *args)
    validator = jsonschema.Draft7Validator(
        _published(), format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER
    )
    assert list(validator.iter_errors(entry)) == []
    assert entry["version"] == SERVER_VERSION and entry["$schema"] == SCHEMA
    (remote,) = entry["remotes"]
    assert remote["type"] == "streamable-http" and remote["url"] == (url or "https://{host}/mcp/")
    (header,) = remote["headers"]
    # The token is asked for as a secret, never written into the entry.
    assert header["isSecret"] is True and header["value"] == "Bearer {token}"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--name", "mnemosyne"], "<namespace>/<name>"),
        (["--name", "io.github.a/b/c"], "<namespace>/<name>"),
        (["--name", "io.github.a/mnemosyne", "--url", "ftp://host/mcp/"], "http(s) address"),
    ],
)
def test_a_bad_name_or_address_is_refused_saying_why(args: list[str], said: str) -> None:
    with pytest.raises(CommandError) as raised:
        call_command("server_json", *args)
    assert said in str(raised.value)
