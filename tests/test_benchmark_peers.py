"""The peers part: reading each server's ranking from its answer, the peers' model files, and the report."""

from __future__ import annotations

import json
import math
from pathlib import Path

from benchmarks import peer_servers, peers
from benchmarks.load_results import LoadRun
from benchmarks.peers_results import PeerRun, PeersResult, SystemFigures, section


def test_mnemosyne_ranking_is_its_hits_sources_each_document_once() -> None:
    answer = {"structuredContent": {"results": [{"source": "12"}, {"source": "7"}, {"source": "12"}]}}
    assert peers.mnemosyne_ranked(answer) == ["12", "7"]


def test_qdrant_ranking_is_read_from_the_metadata_of_its_entries() -> None:
    # mcp-server-qdrant 0.8.1's answer as it came over the wire: one text, a JSON list of entries.
    entries = [
        "Results for the query 'feline noises'",
        '<entry><content>cats purr</content><metadata>{"doc_id": "a"}</metadata></entry>',
        '<entry><content>a <metadata> in a text</content><metadata>{"doc_id": "c"}</metadata></entry>',
    ]
    answer = {"content": [{"type": "text", "text": json.dumps(entries, indent=2)}], "isError": False}
    assert peers.qdrant_ranked(answer) == ["a", "c"]


def test_chroma_ranking_is_its_first_querys_ids_structured_or_as_text() -> None:
    found = {"ids": [["b", "a"]], "documents": [["dogs bark", "cats purr"]], "distances": [[0.9, 1.0]]}
    assert peers.chroma_ranked({"structuredContent": {"result": found}}) == ["b", "a"]
    assert peers.chroma_ranked({"content": [{"type": "text", "text": json.dumps(found)}]}) == ["b", "a"]


def test_the_peers_find_the_model_where_their_libraries_keep_downloads(tmp_path: Path) -> None:
    graph = tmp_path / "graph.onnx"
    graph.write_bytes(b"onnx")
    tokenizer = tmp_path / "tokenizer"
    tokenizer.mkdir()
    for name in peer_servers.TOKENIZER_FILES:
        (tokenizer / name).write_text(name)
    home = peer_servers.chroma_home(tmp_path / "cache", graph, tokenizer)
    chroma = home / ".cache" / "chroma" / "onnx_models" / "all-MiniLM-L6-v2" / "onnx"
    cache = peer_servers.fastembed_cache(tmp_path / "cache", graph, tokenizer)
    repository = cache / "models--Qdrant--all-MiniLM-L6-v2-onnx"
    snapshot = repository / "snapshots" / (repository / "refs" / "main").read_text()
    for folder in (chroma, snapshot):
        assert (folder / "model.onnx").read_bytes() == b"onnx"
        assert {path.name for path in folder.iterdir()} == {"model.onnx", *peer_servers.TOKENIZER_FILES}
    # Placed again over itself, nothing changes.
    peer_servers.chroma_home(tmp_path / "cache", graph, tokenizer)
    assert (chroma / "model.onnx").read_bytes() == b"onnx"


def test_a_peers_virtualenv_is_keyed_by_its_pins() -> None:
    assert peer_servers.CHROMA.key() != peer_servers.QDRANT.key()
    assert peer_servers.CHROMA.version == "0.2.6"
    assert peer_servers.QDRANT.version == "0.8.1"


def _system(name: str, rates: tuple[float, float], cpu: float, database: float = 0.0) -> SystemFigures:
    figures = SystemFigures(
        name=name, version="1", call="search", documents=10, load_seconds=1.0, ndcg_at_10=0.7
    )
    for number, rate in enumerate(rates, start=1):
        for clients in (1, 50):
            run = LoadRun(
                label="", workers=1, clients=clients, seconds=10.0, latencies_ms=[10.0] * int(rate * 10)
            )
            figures.runs.append(
                PeerRun(round=number, run=run, cpu_ms_per_search=cpu, database_ms_per_search=database)
            )
    return figures


def test_the_report_gives_medians_over_rounds_and_the_ratio_to_the_best_peer() -> None:
    result = PeersResult(
        commit="abc",
        corpus="SciFact",
        queries=809,
        rounds=2,
        one_seconds=20,
        many_seconds=30,
        many_clients=50,
    )
    result.systems = [
        _system("Mnemosyne", (100.0, 120.0), 9.0, database=3.0),
        _system("peer-one", (50.0, 60.0), 20.0),
        _system("peer-two", (5.0, 5.0), 90.0),
    ]
    assert result.systems[0].median(50, "calls_per_second") == 110.0
    assert result.ratio_to_best_peer(50) == 2.0
    text = "\n".join(section(result))
    assert "| Mnemosyne 1 | 0.7000 | 110.0, 10.0 | 9.0 | 110.0, 10 / 10, 0 | 9.0 (PostgreSQL 3.0) |" in text
    assert "| peer-one 1 | 0.7000 | 55.0, 10.0 | 20.0 | 55.0, 10 / 10, 0 | 20.0 |" in text
    assert "**2.00×**" in text
    empty = SystemFigures(name="none", version="1", call="", documents=0, load_seconds=0.0)
    assert math.isnan(empty.median(50, "calls_per_second"))
