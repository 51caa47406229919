"""The raw token is shown once and then exists nowhere: no table, no log line, no dump."""

from __future__ import annotations

import logging
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection

from tests.mcp_server.clients import post, rpc

pytestmark = pytest.mark.django_db(transaction=True)


def rows_mentioning(secret: str) -> list[str]:
    """Tables with a row whose text form contains `secret`."""
    found = []
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names():
            quoted = connection.ops.quote_name(table)
            cursor.execute(f"SELECT count(*) FROM {quoted} t WHERE t::text LIKE %s", [f"%{secret}%"])
            row = cursor.fetchone()
            if row and row[0]:
                found.append(table)
    return found


def test_the_raw_token_is_in_no_table_log_or_dump(
    in_process_url: str, shared_data_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    out = StringIO()
    call_command(
        "create_mcp_token",
        "--user=keeper",
        "--name=secret",
        "--scopes=read,write",
        "--rate-limit=100",
        stdout=out,
    )
    raw = out.getvalue().strip().splitlines()[-1]
    secret = raw[len("mnem_") :]
    call = rpc("tools/call", {"name": "list_libraries", "arguments": {}})
    assert post(in_process_url, call, raw).status_code == 200
    write = rpc("tools/call", {"name": "delete_item", "arguments": {"item_uid": "itm_none"}})
    assert post(in_process_url, write, raw).status_code == 200
    call_command("list_mcp_tokens", stdout=StringIO())
    dump = StringIO()
    call_command("dumpdata", stdout=dump)
    assert secret not in dump.getvalue()
    assert rows_mentioning(secret) == []
    assert all(secret not in record.getMessage() for record in caplog.records)
    for log in shared_data_dir.glob("*.log"):
        assert secret not in log.read_text(errors="replace")
