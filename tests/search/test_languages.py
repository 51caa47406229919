"""Per-library language: a library's language picks the text-search configuration its chunks are
indexed with and a query is parsed with (stemming, stop words); `simple` where PostgreSQL has no
stemmer; existing libraries stay English; changing the language re-indexes."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from mnemosyne.embedding import Embedder
from mnemosyne.ingestion.runner import ingest_paths
from mnemosyne.library.errors import InvalidArgument
from mnemosyne.library.models import Chunk, Library
from mnemosyne.library.services import ensure_collection, ensure_library
from mnemosyne.search.service import SearchRequest, search

pytestmark = pytest.mark.django_db(transaction=True)

GERMAN = "# Tiere\n\nDie Katzen schlafen in den Häusern und die Hunde bellen laut im Garten.\n"
ENGLISH = "# Animals\n\nThe cats were sleeping in the houses while the dogs barked.\n"


def ingest(tmp_path: Path, embedder: Embedder, name: str, text: str, language: str | None) -> Library:
    folder = tmp_path / name
    folder.mkdir()
    (folder / f"{name}.md").write_text(text)
    library = ensure_library(name=name, language=language)
    ingest_paths(
        [folder],
        collection=ensure_collection(library=library, name="c"),
        report=lambda _: None,
        embedder=embedder,
    )
    return library


def fulltext(query: str, embedder: Embedder, library: Library | None = None) -> list[str]:
    request = SearchRequest(
        query=query, search_types=("fulltext",), library_uid=library.uid if library else None
    )
    return [hit.chunk.item.title for hit in search(request, embedder=embedder).hits]


def lexemes(library: Library) -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT DISTINCT u.lexeme FROM library_chunk c, unnest(c.search_vector) u"
            " WHERE c.library_id = %s",
            [library.pk],
        )
        return {row[0] for row in cursor.fetchall()}


def test_a_new_library_is_english_unless_told(tmp_path: Path, embedder: Embedder) -> None:
    assert ensure_library(name="Plain").language == "en"
    with pytest.raises(InvalidArgument, match="ISO 639"):
        ensure_library(name="Bad", language="english!")


def test_german_stemming_and_stop_words(tmp_path: Path, embedder: Embedder) -> None:
    german = ingest(tmp_path, embedder, "Deutsch", GERMAN, "de")
    assert {"katz", "haus", "hund"} <= lexemes(german)
    assert "und" not in lexemes(german) and "die" not in lexemes(german)  # German stop words
    # "Katze" and "Haus" find "Katzen" and "Häusern" through the German stemmer.
    assert fulltext("Katze im Haus", embedder, german) == ["Tiere"]


def test_a_language_postgresql_does_not_stem_is_matched_simply(tmp_path: Path, embedder: Embedder) -> None:
    polish = ingest(tmp_path, embedder, "Polski", "# Koty\n\nKoty śpią w domach, a psy szczekają.\n", "pl")
    assert {"koty", "domach", "psy", "a"} <= lexemes(polish)  # lower-cased, nothing stemmed or dropped
    assert fulltext("domach", embedder, polish) == ["Koty"]


def test_a_search_across_languages_parses_the_query_in_each(tmp_path: Path, embedder: Embedder) -> None:
    ingest(tmp_path, embedder, "Deutsch", GERMAN, "de")
    ingest(tmp_path, embedder, "English", ENGLISH, None)
    assert set(fulltext("Katze", embedder)) == {"Tiere"}
    assert set(fulltext("sleeping cat", embedder)) == {"Animals"}


def test_changing_a_librarys_language_reindexes_it(tmp_path: Path, embedder: Embedder) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "tiere.md").write_text(GERMAN)
    call_command("ingest", str(folder), library="Zoo", collection="c", no_progress=True, stdout=io.StringIO())
    zoo = Library.objects.get(name="Zoo")
    assert zoo.language == "en" and "katz" not in lexemes(zoo)  # English stemming left "katzen"
    out = io.StringIO()
    call_command(
        "ingest", str(folder), library="Zoo", collection="c", language="de", no_progress=True, stdout=out
    )
    assert "Re-indexed 1 chunk(s)." in out.getvalue()
    zoo.refresh_from_db()
    assert zoo.language == "de" and "katz" in lexemes(zoo)
    assert fulltext("Katze", embedder, zoo) == ["Tiere"]
    assert Chunk.objects.filter(library=zoo).count() == 1
    with pytest.raises(CommandError, match="ISO 639"):
        call_command(
            "ingest", str(folder), library="Zoo", collection="c", language="deutsch", stdout=io.StringIO()
        )
