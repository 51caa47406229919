"""What a document is, given by a person: `ingest --meta`, kept at every re-ingest, corrected in the
admin (its chunks' context follows); and tables whatever their format keep their titles."""

from __future__ import annotations

import datetime as dt
import tracemalloc
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client
from django_tasks_db.models import DBTaskResult

from mnemosyne.embedding import Embedder
from mnemosyne.ingestion import identity_corrections
from mnemosyne.ingestion.parsing import parse_bytes
from mnemosyne.ingestion.planning import plan_chunks
from mnemosyne.library.models import Item
from mnemosyne.search.service import SearchRequest, search
from tests.filings import quarterly_report

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def ingest(path: Path, *meta: str) -> str:
    out = StringIO()
    options = [arg for pair in meta for arg in ("--meta", pair)]
    call_command(
        "ingest",
        str(path),
        "--library",
        "Team",
        "--library-type",
        "filings",  # whose readers know a quarterly report's cover
        "--collection",
        "kb",
        "--no-progress",
        *options,
        stdout=out,
    )
    return out.getvalue()


def test_given_metadata_wins_over_the_cover_and_is_kept_by_a_later_ingest(tmp_path: Path) -> None:
    report = tmp_path / "report.pdf"
    report.write_bytes(
        quarterly_report(
            "Acme Corporation", "ACME", dt.date(2023, 6, 30), 2, "5,794", discussion="Revenue grew."
        )
    )
    ingest(report, "organisation=Acme Holdings", "period=q2 fy2024")
    item = Item.objects.get()
    assert (item.organisation, item.period, item.document_type) == ("Acme Holdings", "Q2 FY2024", "10-Q")
    assert item.metadata["identity"]["given"] == ["organisation", "period"]
    # The same bytes and metadata: nothing to do. Other metadata: the item is written again.
    assert "1 unchanged" in ingest(report, "organisation=Acme Holdings", "period=Q2 FY2024")
    assert "1 updated" in ingest(report, "organisation=Acme Holdings", "period=Q3 FY2024")
    assert Item.objects.get().period == "Q3 FY2024"


@pytest.mark.parametrize(
    ("pair", "message"),
    [
        ("colour=red", "unknown metadata key 'colour'"),
        ("date=30/06/2023", "metadata date must be YYYY-MM-DD"),
        ("period", "--meta 'period': expected KEY=VALUE"),
    ],
)
def test_bad_metadata_is_refused_in_one_line_and_nothing_is_ingested(
    tmp_path: Path, pair: str, message: str
) -> None:
    note = tmp_path / "note.md"
    note.write_text("# Note\n\nSome text.")
    with pytest.raises(CommandError, match=message):
        ingest(note, pair)
    assert not Item.objects.exists()


def test_a_correction_in_the_admin_is_kept_and_the_chunks_are_found_by_it(
    tmp_path: Path, embedder: Embedder
) -> None:
    report = tmp_path / "report.pdf"
    report.write_bytes(
        quarterly_report(
            "Acme Corporation", "ACME", dt.date(2023, 6, 30), 2, "5,794", discussion="Revenue grew."
        )
    )
    ingest(report)
    item = Item.objects.get()
    User.objects.create_superuser("admin", "admin@example.com", "secret")
    client = Client()
    client.login(username="admin", password="secret")
    form = client.get(f"/admin/library/item/{item.pk}/change/").context["adminform"].form
    data = {name: value for name, value in form.initial.items() if value is not None}
    data |= {"organisation": "Initech", "document_date": "2023-06-30", "metadata": '{"path": "x"}'}
    response = client.post(f"/admin/library/item/{item.pk}/change/", data)
    assert response.status_code == 302
    # The context refresh is handed to a background worker; here it runs inline, as the worker would.
    (queued,) = DBTaskResult.objects.filter(task_path__endswith="refresh_context")
    assert queued.args_kwargs["kwargs"] == {"item_uid": item.uid}
    identity_corrections.refresh(item.uid)
    item.refresh_from_db()
    assert item.organisation == "Initech" and "organisation" in item.metadata["identity"]["given"]
    found = search(SearchRequest(query="Initech cash and cash equivalents", limit=3)).hits
    assert found and found[0].chunk.item.id == item.pk and found[0].document_score
    # A later ingest of the same file keeps the correction.
    report.write_bytes(report.read_bytes() + b"\n")
    ingest(report)
    assert Item.objects.get().organisation == "Initech"


def test_a_spreadsheet_tables_title_and_unit_head_every_part_of_it(embedder: Embedder) -> None:
    rows = ["Balance sheet", "(in millions)", "Line,2023,2022"] + [
        f"Item {n},{n},{n + 1}" for n in range(10_000)
    ]
    data = "\n".join(rows).encode()
    tracemalloc.start()
    parsed = parse_bytes(data, filename="sheet.csv")
    chunks = plan_chunks(
        parsed,
        max_tokens=200,
        overlap_tokens=40,
        count_tokens=embedder.count_tokens,
        locate_tokens=embedder.token_starts,
        section_tokens=400,
    )
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(chunks) > 100
    assert all(chunk.span.token_count <= 200 for chunk in chunks)
    assert all(
        chunk.span.text.startswith("Balance sheet\n(in millions)\n| Line | 2023 | 2022 |") for chunk in chunks
    )
    # A 10,000-row table is chunked in bounded memory (measured: 26 MB at the peak, most of it the
    # tokenizer's offsets of the whole text).
    assert peak < 64 * 1024 * 1024
