"""The official MCP conformance suite (@modelcontextprotocol/conformance) against the no-auth profile.

Scenarios that need the suite's own fixture tools (test_simple_text, test://static-text, …) are out
of scope; these are the ones any server must pass.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.server_fixtures import node_env, npx
from tests.servers import ROOT

pytestmark = pytest.mark.django_db(transaction=True)

SCENARIOS = [
    "server-initialize",
    "ping",
    "tools-list",
    "resources-list",
    "prompts-list",
    "dns-rebinding-protection",
    "logging-set-level",
    "completion-complete",
]


def run_scenario(url: str, scenario: str, out: Path) -> list[dict[str, object]]:
    """Run one scenario; return its checks (each with a status: SUCCESS, FAILURE, WARNING, INFO…)."""
    command = [*npx("@modelcontextprotocol/conformance"), "server", "--url", url, "--scenario", scenario]
    finished = subprocess.run(
        [*command, "-o", str(out)], cwd=ROOT, env=node_env(out), capture_output=True, text=True, timeout=120
    )
    results = list(out.rglob("checks.json"))
    assert results, f"no checks.json for {scenario}:\n{finished.stdout}\n{finished.stderr}"
    checks: list[dict[str, object]] = json.loads(results[0].read_text())
    return checks


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_conformance_scenario_passes(open_server_url: str, scenario: str, tmp_path: Path) -> None:
    checks = run_scenario(f"{open_server_url}/mcp/", scenario, tmp_path)
    failed = [check for check in checks if check.get("status") not in ("SUCCESS", "INFO")]
    assert any(check.get("status") == "SUCCESS" for check in checks), checks
    assert not failed, json.dumps(failed, indent=2)
