"""A search runs the domain rules of the libraries it reads, and only theirs: a financial glossary
fires in a filings library and never in a general one, nor in a search over both; a library's own
synonym set applies to searches of libraries that all carry it; a year names documents only where
documents are versions over time."""

from __future__ import annotations

from pathlib import Path

import pytest

from mnemosyne.embedding import get_embedder
from mnemosyne.ingestion.runner import ingest_paths
from mnemosyne.library.models import Library
from mnemosyne.library.services import ensure_collection, ensure_library
from mnemosyne.profiles.query_rules import rules_for
from mnemosyne.profiles.services import save_synonym_set
from mnemosyne.search.service import SearchRequest, search

pytestmark = pytest.mark.django_db(transaction=True)

BATTERY = "# Cells\n\nA cell's current ratio compares the charge and discharge currents at rated load.\n"
REPORT = (
    "# Annual report 2019\n\nThe balance sheets show total current assets and total current liabilities.\n"
)


def library_of(tmp_path: Path, name: str, profile: str, text: str) -> Library:
    folder = tmp_path / name
    folder.mkdir()
    (folder / f"{name}.md").write_text(text, encoding="utf-8")
    library = ensure_library(name=name, library_type=profile)
    ingest_paths(
        [folder],
        collection=ensure_collection(library=library, name="c"),
        report=lambda _: None,
        embedder=get_embedder(),
    )
    return library


def asked(query: str, library_uid: str | None = None) -> tuple[str, list[str], list[str]]:
    """The profile that ran, the terms the synonym sets added, and the instructions left out."""
    response = search(SearchRequest(query=query, explain=True, library_uid=library_uid))
    assert response.prepared is not None
    added = [term for fired in response.prepared.fired for term in fired.added]
    return response.rules.profile.name, added, list(response.prepared.stripped)


def test_the_financial_glossary_fires_in_a_filings_library_only(tmp_path: Path) -> None:
    cells = library_of(tmp_path, "Cells", "general", BATTERY)
    reports = library_of(tmp_path, "Reports", "filings", REPORT)
    question = "What is the current ratio? Round your answer to two decimal places."
    assert asked(question, library_uid=cells.uid) == ("general", [], [])
    profile, added, stripped = asked(question, library_uid=reports.uid)
    assert profile == "filings" and "total current liabilities" in added
    assert stripped == ["Round your answer to two decimal places."]
    # Over both libraries only what they share runs: no domain rule.
    assert asked(question) == ("general", [], [])


def test_a_librarys_own_set_applies_where_every_library_searched_carries_it(tmp_path: Path) -> None:
    cells = library_of(tmp_path, "Cells", "general", BATTERY)
    other = library_of(tmp_path, "Other", "general", "# Notes\n\nNothing about cells here.\n")
    save_synonym_set(library=cells, name="electrochemistry", text="cell, battery\n", actor="test")
    assert asked("battery load", library_uid=cells.uid)[1] == ["cell"]
    assert asked("battery load")[1] == []  # Other does not carry it
    save_synonym_set(library=other, name="electrochemistry", text="cell, battery\n", actor="test")
    assert asked("battery load")[1] == ["cell"]


def test_rules_of_a_scope_are_those_its_libraries_share() -> None:
    assert rules_for([], []).profile.name == "general"
    assert rules_for([1, 2], ["filings"]).profile.name == "filings"
    mixed = rules_for([1, 2], ["filings", "general"])
    assert (mixed.profile.name, mixed.profiles) == ("general", ("filings", "general"))
    assert mixed.synonym_sets == () and mixed.instructions == ()
