"""What `make run` (serve --demo) prints: a development token and a console sign-in kept across
restarts, and client configs that parse and point at real things."""

from __future__ import annotations

import base64
import io
import json
import shlex
import sys
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

import pytest
from django.contrib.auth import authenticate as django_authenticate
from django.contrib.auth.models import User

from access import dev_token
from access.credentials import authenticate
from access.models import MCPToken
from mcp_server import client_configs
from mnemosyne.management.commands.serve import DEV_TOKEN_NAME, Command

pytestmark = pytest.mark.django_db(transaction=True)

URL = "http://127.0.0.1:8001/mcp/"


def development_token(*, new_token: bool = False) -> tuple[str, str]:
    command = Command(stdout=io.StringIO())
    raw = command._development_token(new_token=new_token)
    return raw, command.stdout.getvalue()


def test_the_development_token_survives_a_restart_until_rotated(shared_data_dir: Path) -> None:
    dev_token.path().unlink(missing_ok=True)
    first, said = development_token()
    assert "new" in said and dev_token.read() == first
    assert dev_token.path().stat().st_mode & 0o777 == 0o600
    again, said = development_token()  # the next `make run`
    assert again == first and "kept in dev-token" in said
    assert authenticate(first).ok
    rotated, _ = development_token(new_token=True)
    assert rotated != first and dev_token.read() == rotated
    assert not authenticate(first).ok, "the rotated-out token is revoked"
    assert MCPToken.objects.filter(name=DEV_TOKEN_NAME, revoked_at__isnull=True).count() == 1


def test_a_kept_token_that_no_longer_works_is_replaced(shared_data_dir: Path) -> None:
    dev_token.write("mnem_" + "q" * 43)  # e.g. the database was reset
    raw, said = development_token()
    assert raw != "mnem_" + "q" * 43 and authenticate(raw).ok and "new" in said


def test_every_printed_config_parses_and_points_at_real_things() -> None:
    lines = client_configs.describe(URL, "mnem_example")
    stdio = json.loads(lines[1])["mcpServers"]["mnemosyne"]
    assert stdio["command"] == sys.executable and Path(stdio["command"]).exists()
    assert Path(stdio["args"][0]).name == "manage.py" and Path(stdio["args"][0]).exists()
    assert stdio["args"][1:] == ["mcp_stdio"] and stdio["env"] == {"MNEMOSYNE_TOKEN": "mnem_example"}
    remote = json.loads(lines[3])["mcpServers"]["mnemosyne"]
    assert remote["args"] == ["-y", "mcp-remote", URL, "--header", "Authorization:${MNEMOSYNE_AUTH}"]
    assert remote["env"] == {"MNEMOSYNE_AUTH": "Bearer mnem_example"}
    assert shlex.split(lines[5]) == [
        "claude",
        "mcp",
        "add",
        "--transport",
        "http",
        "mnemosyne",
        URL,
        "--header",
        "Authorization: Bearer mnem_example",
    ]
    local = json.loads(client_configs.describe(URL, None)[1])["mcpServers"]["mnemosyne"]
    assert local["args"][1:] == ["mcp_stdio", "--local"] and "env" not in local
    # The one-click links carry the same configuration as the files, as each host reads it.
    cursor = urlsplit(lines[7])
    assert (cursor.scheme, cursor.netloc, cursor.path) == (
        "cursor",
        "anysphere.cursor-deeplink",
        "/mcp/install",
    )
    asked = parse_qs(cursor.query)
    assert asked["name"] == ["mnemosyne"]
    assert (
        json.loads(base64.b64decode(asked["config"][0]))
        == client_configs.cursor_config(URL, "mnem_example")["mcpServers"]["mnemosyne"]
    )
    assert lines[9].startswith("vscode:mcp/install?")
    vscode = json.loads(unquote(lines[9].removeprefix("vscode:mcp/install?")))
    assert vscode == {
        "name": "mnemosyne",
        "type": "http",
        "url": URL,
        "headers": {"Authorization": "Bearer mnem_example"},
    }


def test_the_console_sign_in_it_prints_works_and_survives_a_restart(shared_data_dir: Path) -> None:
    dev_token.path(dev_token.PASSWORD_NAME).unlink(missing_ok=True)

    def printed() -> str:
        command = Command(stdout=io.StringIO())
        command._print_console_sign_in("http://127.0.0.1:8001/console/")
        said = command.stdout.getvalue()
        assert said.startswith("Console: http://127.0.0.1:8001/console/ (sign in as 'dev' with password ")
        return said.split("with password ")[1].split(";")[0]

    first = printed()
    # The person who ran the demo reads its activity and keeps its evaluation sets.
    assert User.objects.get(username="dev").is_staff
    assert dev_token.read(dev_token.PASSWORD_NAME) == first
    assert dev_token.path(dev_token.PASSWORD_NAME).stat().st_mode & 0o777 == 0o600
    assert authenticate_user(first) and printed() == first  # the next `make run`
    User.objects.filter(username="dev").update(password="!")  # e.g. someone changed it
    replaced = printed()
    assert replaced != first and authenticate_user(replaced)


def authenticate_user(password: str) -> bool:
    return django_authenticate(username="dev", password=password) is not None
