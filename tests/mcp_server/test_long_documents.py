"""Long documents in versions, through the official MCP client over HTTP: filings know what they
are, a question naming a version finds it, statements are tables with their titles, numbers are
found as typed, and search takes document filters and groups by page."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from mcp.shared.exceptions import MCPError

from mnemosyne.embedding import Embedder
from mnemosyne.ingestion.runner import ingest_paths
from mnemosyne.library.services import ensure_collection, ensure_library
from tests.filings import quarterly_report
from tests.mcp_server.clients import call_all

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

DISCUSSION = (
    "Revenue grew on strong demand for widgets in every region, and the company kept its costs in "
    "check while it opened two new factories and hired engineers for its research programmes."
)
# Acme's quarters of fiscal 2023, each with its own cash figure; Globex's second quarter.
FILINGS = {
    "acme-q1.pdf": ("Acme Corporation", "ACME", dt.date(2023, 3, 31), 1, "5,100"),
    "acme-q2.pdf": ("Acme Corporation", "ACME", dt.date(2023, 6, 30), 2, "5,794"),
    "acme-q3.pdf": ("Acme Corporation", "ACME", dt.date(2023, 9, 30), 3, "6,010"),
    "globex-q2.pdf": ("Globex Industries, Inc.", "GLBX", dt.date(2023, 6, 30), 2, "9,999"),
}


def ingest_filings(embedder: Embedder, folder: Path) -> str:
    folder.mkdir()
    for name, (organisation, ticker, end, quarter, cash) in FILINGS.items():
        (folder / name).write_bytes(
            quarterly_report(organisation, ticker, end, quarter, cash, discussion=DISCUSSION)
        )
    (folder / "notes.md").write_text("# Widgets\n\nWidgets are small devices that grow in demand.\n")
    library = ensure_library(name="Filings", library_type="filings")
    collection = ensure_collection(library=library, name="sec")
    summary = ingest_paths([folder], collection=collection, report=lambda line: None, embedder=embedder)
    assert summary.counts()["created"] == len(FILINGS) + 1
    return library.uid


def hits(result: Any) -> list[dict[str, Any]]:
    return result.structured_content["results"]


def test_filings_are_found_by_what_they_are(
    live_server_url: str, token: str, embedder: Embedder, tmp_path: Path
) -> None:
    library = ingest_filings(embedder, tmp_path / "filings")
    search = lambda **arguments: ("search", {"library_uid": library, "limit": 5, **arguments})  # noqa: E731
    (
        items,
        named,
        latest,
        figure,
        quarter_only,
        organisation_only,
        from_july,
        grouped,
        unknown_key,
        reversed_range,
        bad_period,
    ) = call_all(
        live_server_url,
        token,
        [
            ("list_items", {"library_uid": library}),
            search(query="In Acme's Q2 2023 10-Q, why did revenue grow?", return_metadata=["explain"]),
            search(query="What cash did Acme hold according to its most recent 10-Q?"),
            search(query="Acme cash and cash equivalents of 5794", return_metadata=["text"]),
            search(query="revenue grew", documents={"period": "Q1 FY2023"}),
            search(query="revenue grew", documents={"organisation": "globex"}),
            search(query="revenue grew", documents={"date_from": "2023-07-01"}),
            search(query="Acme revenue and cash", group_by="page", limit=10),
            search(query="revenue", documents={"colour": "red"}),
            search(query="revenue", documents={"date_from": "2023-09-01", "date_to": "2023-01-01"}),
            search(query="revenue", documents={"period": "spring"}),
        ],
    )
    listed = {item["title"]: item for item in items.structured_content["items"]}
    q2 = listed["Acme Corporation Form 10-Q for the quarter ended June 30, 2023"]
    assert (q2["organisation"], q2["doc_type"], q2["period"], q2["date"]) == (
        "Acme Corporation",
        "10-Q",
        "Q2 FY2023",
        "2023-06-30",
    )
    assert listed["Widgets"]["organisation"] == "" and listed["Widgets"]["period"] == ""
    # The passage is the same in every version: the version the question names comes first.
    first = hits(named)[0]
    others = [hit["explain"]["document"] or 0 for hit in hits(named) if hit["item"]["uid"] != q2["uid"]]
    assert first["item"]["uid"] == q2["uid"] and first["explain"]["document"] > max(others, default=0)
    assert hits(latest)[0]["item"]["title"].endswith("September 30, 2023")
    # The balance sheet without rules is a table under its title, unit and column headers, and
    # "5794" finds "$ 5,794".
    sheet = hits(figure)[0]
    assert sheet["item"]["uid"] == q2["uid"] and sheet["page"] == 2
    assert sheet["section"].endswith("CONDENSED CONSOLIDATED BALANCE SHEETS")
    assert (
        "(In millions)" in sheet["text"]
        and "| Cash and cash equivalents | $ 5,794 | $ 4,225 |" in sheet["text"]
    )
    assert "June 30, 2023" in sheet["text"].split("\n")[1]
    assert {hit["item"]["title"] for hit in hits(quarter_only)} == {
        "Acme Corporation Form 10-Q for the quarter ended March 31, 2023"
    }
    assert {hit["item"]["title"].split(" Form")[0] for hit in hits(organisation_only)} == {
        "Globex Industries, Inc."
    }
    assert {hit["item"]["title"] for hit in hits(from_july)} == {
        "Acme Corporation Form 10-Q for the quarter ended September 30, 2023"
    }
    pages = [(hit["item"]["uid"], hit["page"]) for hit in hits(grouped)]
    assert len(pages) == len(set(pages)) > 1
    assert isinstance(unknown_key, MCPError) and "colour" in str(unknown_key)
    # Schema errors are the protocol's; a range that reads but cannot hold is the tool's.
    assert reversed_range.is_error and "date_from (2023-09-01) is after" in reversed_range.content[0].text
    assert isinstance(bad_period, MCPError) and "period" in str(bad_period)


def test_an_upload_says_what_it_is_and_a_bad_value_is_refused(live_server_url: str, token: str) -> None:
    library = ensure_library(name="Uploads")
    collection = ensure_collection(library=library, name="notes")
    text = "# Quarterly letter\n\nWe grew revenue in the second quarter on strong demand for widgets."
    upload = {"collection_uid": collection.uid, "title": "Letter to shareholders", "text": text}
    created, refused, listed = call_all(
        live_server_url,
        token,
        [
            (
                "upsert_item",
                {**upload, "document": {"organisation": "Acme Corporation", "period": "Q2 FY2023"}},
            ),
            ("upsert_item", {**upload, "external_id": "other", "document": {"period": "second quarter"}}),
            ("list_items", {"library_uid": library.uid}),
        ],
    )
    assert created.structured_content["status"] == "created"
    assert isinstance(refused, MCPError) and "period" in str(refused)
    (item,) = listed.structured_content["items"]
    assert (item["title"], item["organisation"], item["period"]) == (
        "Letter to shareholders",
        "Acme Corporation",
        "Q2 FY2023",
    )
