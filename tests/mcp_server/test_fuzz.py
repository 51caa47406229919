"""A property-based fuzzer (hypothesis) over real HTTP: requests drawn from each tool's own JSON
schema (valid shapes, then the same names with hostile values), and arbitrary JSON-RPC methods and
params.

Whatever is sent, the answer is never a 5xx, never a stack trace, SQL or a server path, and an
error quotes at most a few hundred characters of what was sent. Example counts are bounded (see
FUZZ_EXAMPLES) so `make test` stays quick; raise them to fuzz longer.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_server.tools.catalog import TOOL_SPECS
from mnemosyne.library.models import Collection, Library
from tests.mcp_server.clients import JSON_HEADERS, rpc

pytestmark = pytest.mark.django_db(transaction=True)

FUZZ_EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "25"))
FUZZ = settings(
    max_examples=FUZZ_EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# What must never reach a client: Python and PostgreSQL internals, server paths.
LEAKS = re.compile(
    r"Traceback \(most recent|File \"/|psycopg|DETAIL:|HINT:|SQLSTATE|"
    r"syntax error at or near|/tmp/|/work/|/home/|site-packages|\.venv"
)
# A long value sent is never echoed beyond this many characters.
MAX_ECHO = 400

HOSTILE_TEXT = st.one_of(
    st.text(max_size=50),
    st.text(alphabet=st.characters(codec="utf-8"), min_size=500, max_size=3000),
    st.sampled_from(
        ["\x00", "a\x00b", "' OR 1=1 --", "../../etc/passwd", "%s%s%n", "lone \ud800 half", "💥" * 200]
    ),
)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | HOSTILE_TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)


def from_schema(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values the JSON schema accepts, for the subset pydantic writes for our tools (hypothesis-
    jsonschema 0.23, the library for this, fails on current hypothesis: 'many' has no 'more')."""
    if "anyOf" in schema:
        return st.one_of([from_schema(option) for option in schema["anyOf"]])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    if kind == "null":
        return st.none()
    if kind == "boolean":
        return st.booleans()
    if kind == "integer":
        return st.integers(min_value=schema.get("minimum"), max_value=schema.get("maximum"))
    if kind == "number":
        return st.floats(
            min_value=schema.get("minimum"),
            max_value=schema.get("maximum"),
            allow_nan=False,
            allow_infinity=False,
        )
    if kind == "string":
        return st.text(min_size=schema.get("minLength", 0), max_size=min(schema.get("maxLength", 200), 200))
    if kind == "array":
        return st.lists(from_schema(schema.get("items", {})), max_size=5)
    if kind == "object":
        properties = schema.get("properties", {})
        required = set(schema.get("required", []))
        if properties:
            return st.fixed_dictionaries(
                {name: from_schema(value) for name, value in properties.items() if name in required},
                optional={
                    name: from_schema(value) for name, value in properties.items() if name not in required
                },
            )
        extra = schema.get("additionalProperties")
        return st.dictionaries(
            st.text(max_size=20), from_schema(extra) if isinstance(extra, dict) else JSON_VALUES
        )
    return JSON_VALUES


def arguments_for(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Valid arguments from the schema, or its argument names with any JSON value, or junk."""
    names = list(schema.get("properties", {}))
    hostile = (
        st.dictionaries(st.sampled_from(names), JSON_VALUES, max_size=len(names)) if names else st.just({})
    )
    return st.one_of(from_schema(schema), hostile, JSON_VALUES)


def check(response: httpx.Response, sent: Any) -> None:
    assert response.status_code < 500, (response.status_code, response.text[:500])
    assert not LEAKS.search(response.text), response.text[:1000]
    answered = " ".join(strings_in(answer_of(response)))
    for value in strings_in(sent):
        if len(value) > MAX_ECHO:
            assert value[: MAX_ECHO + 1] not in answered, "a long value came back whole"


def answer_of(response: httpx.Response) -> Any:
    """The JSON of an answer, whether a JSON body or server-sent events; its text otherwise."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        events = [line[5:] for line in response.text.splitlines() if line.startswith("data:")]
        return [json.loads(event) for event in events if event.strip()]
    try:
        return response.json()
    except ValueError:
        return response.text


def strings_in(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for key, item in value.items() for text in [str(key), *strings_in(item)]]
    if isinstance(value, list):
        return [text for item in value for text in strings_in(item)]
    return []


def send(base: str, token: str, body: dict[str, Any]) -> tuple[httpx.Response, Any]:
    headers = {**JSON_HEADERS, "Authorization": f"Bearer {token}"}
    return httpx.post(f"{base}/mcp/", content=json.dumps(body), headers=headers, timeout=60), body


@pytest.mark.parametrize("spec", TOOL_SPECS, ids=[spec.name for spec in TOOL_SPECS])
def test_no_tool_call_fails_badly(
    live_server_url: str, corpus: tuple[Library, Collection], token: str, spec: Any
) -> None:
    @FUZZ
    @given(arguments=arguments_for(spec.input_schema))
    def one(arguments: Any) -> None:
        response, sent = send(
            live_server_url, token, rpc("tools/call", {"name": spec.name, "arguments": arguments})
        )
        check(response, sent)

    one()


METHODS = st.one_of(
    st.sampled_from(
        [
            "initialize",
            "ping",
            "tools/list",
            "tools/call",
            "resources/list",
            "resources/read",
            "resources/templates/list",
            "prompts/list",
            "prompts/get",
            "completion/complete",
            "logging/setLevel",
            "notifications/initialized",
        ]
    ),
    st.text(max_size=30),
)


def test_no_json_rpc_request_fails_badly(
    live_server_url: str, corpus: tuple[Library, Collection], token: str
) -> None:
    @settings(FUZZ, max_examples=FUZZ_EXAMPLES * 4)
    @given(
        method=METHODS,
        params=st.one_of(st.dictionaries(st.text(max_size=12), JSON_VALUES, max_size=5), JSON_VALUES),
        identifier=st.one_of(st.integers(), st.text(max_size=10), st.none(), st.booleans()),
    )
    def one(method: str, params: Any, identifier: Any) -> None:
        response, sent = send(
            live_server_url, token, {"jsonrpc": "2.0", "id": identifier, "method": method, "params": params}
        )
        check(response, sent)

    one()
