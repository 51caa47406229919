"""`manage.py ingest`: globs, bad input, pruning, background enqueueing, the summary and exit code."""

from __future__ import annotations

import socket
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django_tasks_db.models import DBTaskResult

from mnemosyne.graph.models import Mention
from mnemosyne.library.models import Chunk, Collection, Item, Posting
from mnemosyne.storage import get_chunk_store

pytestmark = pytest.mark.django_db


def _ingest(*arguments: str | Path, collection: str = "kb") -> str:
    out = StringIO()
    call_command(
        "ingest",
        *map(str, arguments),
        "--library",
        "Team",
        "--collection",
        collection,
        "--no-progress",
        stdout=out,
    )
    return out.getvalue()


def _write(root: Path, files: dict[str, str | bytes]) -> Path:
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    return root


def _sources(collection: str = "kb") -> set[str]:
    return set(Item.objects.filter(collection__name=collection).values_list("source", flat=True))


@pytest.fixture
def refused_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/gone.html"


def test_it_ingests_only_included_files_and_prints_the_summary(tmp_path: Path) -> None:
    root = _write(
        tmp_path / "kb",
        {
            "a.md": "# A\n\nAlpha notes on tides.\n",
            "guide/b.md": "# B\n\nBeta notes on moorings.\n",
            "drafts/c.md": "# C\n\nDraft notes.\n",
            "d.txt": "Plain notes on buoys.\n",
        },
    )

    output = _ingest(root, "--include", "*.md", "--exclude", "drafts/**")

    assert _sources() == {"kb/a.md", "kb/guide/b.md"}
    assert output.splitlines()[-1].startswith(
        "Team / kb: 2 created, 0 updated, 0 unchanged, 0 renamed, 0 deleted, 0 failed, 0 skipped;"
    )


def test_bad_input_is_reported_and_leaves_other_items_alone(
    tmp_path: Path, settings, refused_url: str
) -> None:
    stable = _write(tmp_path / "stable", {"keep.md": "# Keep\n\nHarbour opening hours.\n"})
    _ingest(stable)
    kept = Item.objects.get(source="stable/keep.md")
    kept_chunks = sorted(Chunk.objects.filter(item=kept).values_list("uid", flat=True))
    settings.INGEST_MAX_FILE_BYTES = 1000
    inbox = _write(
        tmp_path / "inbox",
        {
            "empty.txt": "",
            "junk.md": b"\x00\x01\xff\xfe binary junk \x00",
            "big.txt": "tide " * 400,
            "good.md": "# Good\n\nA small and valid note about ferries.\n",
        },
    )

    output = _ingest(inbox, refused_url, stable)

    assert "skipped" in output and "empty file" in output
    assert "NUL bytes" in output
    assert "2000 bytes is over INGEST_MAX_FILE_BYTES (1000)" in output
    assert f"failed {refused_url}: cannot connect to" in output
    assert "1 created, 0 updated, 1 unchanged, 0 renamed, 0 deleted, 1 failed, 3 skipped" in output
    assert _sources() == {"stable/keep.md", "inbox/good.md"}
    assert sorted(Chunk.objects.filter(item=kept).values_list("uid", flat=True)) == kept_chunks


def test_it_exits_non_zero_only_when_no_input_was_ingested(tmp_path: Path, refused_url: str) -> None:
    root = _write(tmp_path / "bad", {"empty.md": "", "good.md": "# Good\n\nFine.\n"})

    with pytest.raises(CommandError, match="no input could be ingested"):
        _ingest(root / "empty.md", refused_url)
    _ingest(root, refused_url)  # one good file is enough


def test_prune_deletes_items_whose_files_are_gone_with_their_chunks_and_objects(tmp_path: Path) -> None:
    root = _write(
        tmp_path / "kb",
        {
            "a.md": "# Alpha\n\nLighthouse maintenance schedule and lamp checks.\n",
            "sub/b.md": "# Beta\n\nFerry timetable for the winter season.\n",
            "c.md": "# Gamma\n\nHarbour master contact details.\n",
        },
    )
    other = _write(tmp_path / "notes", {"n.md": "# Notes\n\nUnrelated notes.\n"})
    _ingest(root, other)
    collection = Collection.objects.get(name="kb")
    Item.objects.create(
        collection=collection, source="https://example.com/kb/a.md", title="Web", item_type="html"
    )
    gone = list(Item.objects.filter(source__in=["kb/a.md", "kb/sub/b.md"]))
    gone_chunks = list(Chunk.objects.filter(item__in=gone))
    assert gone_chunks and Posting.objects.filter(chunk__in=gone_chunks).exists()
    assert Mention.objects.filter(chunk__in=gone_chunks).exists()
    (root / "a.md").unlink()
    (root / "sub" / "b.md").unlink()

    output = _ingest(root, "--prune")

    assert "deleted kb/a.md" in output and "deleted kb/sub/b.md" in output
    assert "0 created, 0 updated, 1 unchanged, 0 renamed, 2 deleted, 0 failed, 0 skipped" in output
    assert _sources() == {"kb/c.md", "notes/n.md", "https://example.com/kb/a.md"}
    ids = [chunk.pk for chunk in gone_chunks]
    assert not Chunk.objects.filter(pk__in=ids).exists()
    assert not Posting.objects.filter(chunk_id__in=ids).exists()
    assert not Mention.objects.filter(chunk_id__in=ids).exists()
    store = get_chunk_store()
    for chunk in gone_chunks:
        with pytest.raises(KeyError):
            store.get(chunk.storage_key)
    kept = Chunk.objects.filter(item__source="kb/c.md").first()
    assert kept is not None and store.get(kept.storage_key)


def test_prune_keeps_a_file_present_under_another_root_of_the_same_name(tmp_path: Path) -> None:
    first = _write(tmp_path / "one" / "kb", {"a.md": "# A\n\nFirst copy.\n"})
    second = _write(tmp_path / "two" / "kb", {"a.md": "# A\n\nFirst copy.\n", "b.md": "# B\n\nOnly here.\n"})
    _ingest(first, second)
    (first / "a.md").unlink()
    (second / "b.md").unlink()

    output = _ingest(first, second, "--prune")

    assert "deleted kb/b.md" in output and "deleted kb/a.md" not in output
    assert _sources() == {"kb/a.md"}


def test_prune_ignores_a_directory_that_is_missing(tmp_path: Path) -> None:
    root = _write(tmp_path / "kb", {"a.md": "# A\n\nA note.\n"})
    _ingest(root)
    moved = tmp_path / "elsewhere"
    root.rename(moved)

    with pytest.raises(CommandError):
        _ingest(root, "--prune")  # an unmounted or mistyped path must not empty the collection

    assert _sources() == {"kb/a.md"}


def test_background_enqueues_one_task_per_file_and_url_and_returns(tmp_path: Path) -> None:
    root = _write(tmp_path / "kb", {"a.md": "# A\n\nA.\n", "b.txt": "B.\n", "skip.py": "print()\n"})

    output = _ingest(root, "https://example.com/page.html", "ftp://example.com/x.pdf", "--background")

    assert "Enqueued 3 ingest task(s)" in output
    assert "python manage.py db_worker" in output
    assert "failed ftp://example.com/x.pdf: unsupported URL scheme 'ftp'" in output
    assert output.splitlines()[-1] == "Team / kb: 3 enqueued, 1 failed, 1 skipped, 0 deleted"
    assert not Item.objects.exists()
    tasks = DBTaskResult.objects.all()
    assert {task.task_path for task in tasks} == {"mnemosyne.ingestion.tasks.ingest_source"}
    jobs = {task.args_kwargs["kwargs"]["source"]: task.args_kwargs["kwargs"]["location"] for task in tasks}
    assert jobs == {
        "kb/a.md": str((root / "a.md").resolve()),
        "kb/b.txt": str((root / "b.txt").resolve()),
        "https://example.com/page.html": "https://example.com/page.html",
    }
    collection = Collection.objects.get(name="kb")
    assert {task.args_kwargs["kwargs"]["collection_id"] for task in tasks} == {collection.pk}
