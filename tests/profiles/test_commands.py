"""`manage.py profile` and `manage.py synonyms`: a library's profile shown, changed with what it
changes said, its documents re-read under it; its synonym sets imported (each unreadable line
reported, the rest kept; a set refused whole changing nothing), exported, deleted; bad requests
refused in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from mnemosyne.embedding import get_embedder
from mnemosyne.ingestion.runner import ingest_paths
from mnemosyne.library.models import Item, Library
from mnemosyne.library.services import ensure_collection, ensure_library
from mnemosyne.profiles.models import SynonymSet
from tests.commands import refused, run
from tests.ingestion.test_identity import QUARTERLY_COVER, STATEMENT

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def handbook() -> Library:
    return ensure_library(name="Handbook")


def test_a_set_is_imported_line_by_line_exported_and_deleted(handbook: Library, tmp_path: Path) -> None:
    source = tmp_path / "terms.txt"
    source.write_text(
        "# our words\nlaptop, notebook computer\n=> orphan\nroa => net income\n", encoding="utf-8"
    )
    said = run("synonyms", "import", str(source), "--library", "Handbook", "--name", "kit")
    assert said.splitlines() == [
        "created: synonym set 'kit' of library 'Handbook' (2 rules)",
        "refused line 3: an empty term: '=> orphan'",
    ]
    assert run("synonyms", "list", "--library", handbook.uid) == "kit: 2 rules, the library's own"
    assert run("synonyms", "export", "--library", "Handbook", "--name", "kit") == (
        "# our words\nlaptop, notebook computer\nroa => net income"
    )
    assert run("synonyms", "delete", "--library", "Handbook", "--name", "kit") == (
        "deleted: synonym set 'kit' of library 'Handbook'"
    )
    assert not SynonymSet.objects.exists()


def test_a_set_that_cannot_be_used_is_refused_whole_and_nothing_changes(
    handbook: Library, tmp_path: Path
) -> None:
    good, circle, empty = tmp_path / "good.txt", tmp_path / "circle.txt", tmp_path / "empty.txt"
    good.write_text("a, b\n", encoding="utf-8")
    circle.write_text("a => b\nb => a\n", encoding="utf-8")
    empty.write_text("# nothing\nsolo\n", encoding="utf-8")
    run("synonyms", "import", str(good), "--library", "Handbook", "--name", "kit")
    assert refused("synonyms", "import", str(circle), "--library", "Handbook", "--name", "kit") == (
        "refused, nothing changed: the '=>' rules run in a circle: a => b => a"
    )
    assert refused("synonyms", "import", str(empty), "--library", "Handbook", "--name", "kit").startswith(
        "refused, nothing changed: no rule could be read in the set: line 2"
    )
    assert SynonymSet.objects.get().text == "a, b\n"
    assert refused("synonyms", "import", str(good), "--library", "Nowhere", "--name", "kit") == (
        "no library with the uid or name 'Nowhere'"
    )
    assert refused(
        "synonyms", "import", str(tmp_path / "missing.txt"), "--library", "Handbook", "--name", "k"
    ).startswith("cannot read")
    assert "name is 1-64 letters" in refused(
        "synonyms", "import", str(good), "--library", "Handbook", "--name", "../etc"
    )
    assert refused("synonyms", "export", "--profile", "finance").startswith("unknown profile 'finance'")
    assert run("synonyms", "export", "--profile", "filings").startswith("# The financial glossary")


def test_a_profile_change_says_what_it_changes_and_a_reread_reads_documents_again(
    handbook: Library, tmp_path: Path
) -> None:
    folder = tmp_path / "reports"
    folder.mkdir()
    (folder / "acme-q3.md").write_text(QUARTERLY_COVER + "\n\n" + STATEMENT, encoding="utf-8")
    ingest_paths(
        [folder],
        collection=ensure_collection(library=handbook, name="c"),
        report=lambda _: None,
        embedder=get_embedder(),
    )
    assert Item.objects.get().document_type == ""  # the general profile reads no filing
    assert "profile general" in run("profile", "--library", "Handbook")
    said = run("profile", "--library", "Handbook", "--set", "filings", "--reread").splitlines()
    assert said[0] == "changed: library 'Handbook' profile general → filings"
    assert "are read again by a re-read" in said[2]
    assert said[-2] == "updated reports/acme-q3.md (1 chunks)"
    assert said[-1].startswith("re-read: 0 created, 1 updated, 0 unchanged")
    item = Item.objects.get()
    assert (item.document_type, item.organisation, item.period) == ("10-Q", "Apple Inc.", "Q3 FY2023")
    assert (
        run("profile", "--library", "Handbook", "--reread")
        .splitlines()[-1]
        .startswith("re-read: 0 created, 0 updated, 1 unchanged")
    )
    assert refused("profile", "--library", "Handbook", "--set", "finance").startswith(
        "unknown profile 'finance'; expected one of general, filings"
    )
    rules = run("profile", "--library", "Handbook")
    assert "synonyms: filings-glossary" in rules and "identity: sec_filing" in rules
