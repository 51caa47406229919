"""Search reads on a real streaming replica (pg_basebackup of the test database's server), over
HTTP: searches are answered from the replica, from the primary while the replica lags, and from the
primary when the replica goes away — never an error."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from mnemosyne.embedding import Embedder
from mnemosyne.ingestion.runner import ingest_paths
from mnemosyne.library.models import Chunk
from mnemosyne.library.services import delete_item
from mnemosyne.search.service import SearchRequest, search
from mnemosyne.storage import get_chunk_store
from tests.conftest import ingest_fixture_docs
from tests.mcp_server.clients import post, rpc, sse_payload
from tests.replica_server import Replica, streaming_replica
from tests.servers import uvicorn_server

pytestmark = pytest.mark.django_db(transaction=True)

MAX_LAG_SECONDS = 2
RARE = "quokkaviaduct"


def searched(base: str, query: str) -> list[str]:
    answer = post(base, rpc("tools/call", {"name": "search", "arguments": {"query": query, "limit": 5}}))
    assert answer.status_code == 200, answer.text
    result: dict[str, Any] = sse_payload(answer)["result"]
    assert not result.get("isError"), result
    return [hit["chunk_uid"] for hit in result["structuredContent"]["results"]]


def transactions(replica: Replica) -> int:
    return int(replica.sql("SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"))


def wait_for(condition: Any, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.2)


def test_searches_read_the_replica_and_fall_back_to_the_primary(
    embedder: Embedder, shared_data_dir: Path, tmp_path: Path
) -> None:
    _, collection, _ = ingest_fixture_docs(embedder)
    question = "how do glaciers carve valleys"
    expected = [hit.chunk.uid for hit in search(SearchRequest(query=question, limit=5)).hits]
    env = {
        "MCP_REQUIRE_AUTH": "false",
        "DATABASE_REPLICA_MAX_LAG_SECONDS": str(MAX_LAG_SECONDS),
        "TUNING": "replica_retry_seconds=2",
    }
    with streaming_replica() as replica:
        env["DATABASE_REPLICA_URLS"] = replica.url
        with uvicorn_server(shared_data_dir, env=env, log_name="replica") as base:
            # 1. The replica answers, the same as the primary would.
            before = transactions(replica)
            for _ in range(5):
                assert searched(base, question) == expected
            assert transactions(replica) - before >= 5, "the searches were not read from the replica"

            # 2. Replay paused: the replica falls behind; a document written since is still found,
            # from the primary, once the lag is over the limit.
            replica.sql("SELECT pg_wal_replay_pause()")
            note = tmp_path / "viaduct.md"
            note.write_text(f"# Viaducts\n\nThe {RARE} spans the gorge on nine stone arches.\n")
            ingest_paths([note], collection=collection, report=lambda line: None, embedder=embedder)
            assert (
                replica.sql(f"SELECT count(*) FROM library_chunk WHERE text_preview LIKE '%{RARE}%'") == "0"
            )
            time.sleep(MAX_LAG_SECONDS + 1.5)
            new_uid = Chunk.objects.get(text_preview__contains=RARE).uid
            assert new_uid in searched(base, RARE)

            # Replay resumed: caught up, the replica answers again.
            replica.sql("SELECT pg_wal_replay_resume()")
            wait_for(
                lambda: replica.sql("SELECT pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn()") == "t"
            )
            time.sleep(1.5)
            before = transactions(replica)
            assert new_uid in searched(base, RARE)
            assert transactions(replica) > before

            # 3. The replica goes away: every search is still answered, by the primary.
            replica.stop()
            expected = [hit.chunk.uid for hit in search(SearchRequest(query=question, limit=5)).hits]
            for _ in range(5):
                assert searched(base, question) == expected
    logged = "\n".join(path.read_text() for path in shared_data_dir.glob("replica-*.log"))
    assert "search reads leave replica replica_0" in logged


def graph_hits(base: str, query: str, *, include_images: bool) -> list[str]:
    arguments = {"query": query, "search_types": ["graph"], "include_images": include_images, "limit": 5}
    answer = post(base, rpc("tools/call", {"name": "search", "arguments": arguments}))
    result: dict[str, Any] = sse_payload(answer)["result"]
    assert not result.get("isError"), result
    return [hit["chunk_uid"] for hit in result["structuredContent"]["results"]]


def test_every_leg_of_a_search_reads_the_replica_it_was_routed_to(
    embedder: Embedder, shared_data_dir: Path
) -> None:
    """The concept graph (and the graph leg's own type filter) is read from the replica the search
    went to, as the other legs are: one search sees one snapshot. Shown by deleting a document on
    the primary while the replica's replay is paused — the replica still has it, so a search
    routed there still finds it through the graph."""
    ingest_fixture_docs(embedder)
    question = "sticky sessions"
    expected = [hit.chunk.uid for hit in search(SearchRequest(query=question, search_types=["graph"])).hits][
        :5
    ]
    assert expected
    env = {"MCP_REQUIRE_AUTH": "false", "DATABASE_REPLICA_MAX_LAG_SECONDS": "3600"}
    with streaming_replica() as replica:
        env["DATABASE_REPLICA_URLS"] = replica.url
        with uvicorn_server(shared_data_dir, env=env, log_name="replica-graph") as base:
            wait_for(lambda: graph_hits(base, question, include_images=True) == expected)
            replica.sql("SELECT pg_wal_replay_pause()")
            for item_uid in set(Chunk.objects.filter(uid__in=expected).values_list("item__uid", flat=True)):
                delete_item(item_uid=item_uid, dry_run=False, store=get_chunk_store())
            assert not search(SearchRequest(query=question, search_types=["graph"])).hits
            assert graph_hits(base, question, include_images=True) == expected
            assert graph_hits(base, question, include_images=False) == expected
            replica.sql("SELECT pg_wal_replay_resume()")
