"""A question names a document by the words that are the document's: an organisation whose name
only its own passages use does; a word of a copyright holder's name that every other passage uses
too ("cancer", among abstracts about cancer) does not, and moves nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from mnemosyne.library.models import Item, Library
from mnemosyne.search.filters import Filters
from mnemosyne.search.named_documents import named_documents
from mnemosyne.search.service import search
from mnemosyne.search.types import SearchRequest, SearchResponse

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

TOPICS = ["smokers", "children", "radiotherapy", "screening", "diet", "exercise"]


def test_only_the_words_that_are_a_documents_own_name_it(tmp_path: Path) -> None:
    for number, topic in enumerate(TOPICS):
        text = f"# Cancer and {topic}\n\nCancer risk among {topic} was followed for ten years.\n"
        if number == 0:
            text += "\n© 1992 Cancer Research Campaign. All rights reserved.\n"
        (tmp_path / f"abstract-{number}.md").write_text(text, encoding="utf-8")
    (tmp_path / "globex.md").write_text(
        "# Annual review\n\nGlobex sold more widgets this year.\n\n© 2020 Globex Corporation\n",
        encoding="utf-8",
    )
    call_command("ingest", str(tmp_path), "--library", "Papers", "--collection", "c", "--no-progress")
    holder = Item.objects.get(organisation="Cancer Research Campaign")
    globex = Item.objects.get(organisation="Globex Corporation")
    filters = Filters(library_id=Library.objects.get(name="Papers").pk)

    about_cancer = named_documents("cancer risk among smokers", filters, latest=False)
    assert holder.pk not in about_cancer.scores
    assert about_cancer.content == "cancer risk among smokers"  # nothing taken out of the question

    naming = named_documents("how many widgets did Globex sell", filters, latest=False)
    assert naming.scores == {globex.pk: 1.0}


def test_a_library_without_identified_documents_spends_no_statement_on_them(tmp_path: Path) -> None:
    for topic in TOPICS[:2]:
        (tmp_path / f"{topic}.md").write_text(f"# {topic}\n\nWidgets and {topic}.\n", encoding="utf-8")
    call_command("ingest", str(tmp_path), "--library", "Notes", "--collection", "c", "--no-progress")
    library = Library.objects.get(name="Notes")
    request = SearchRequest(query="how many widgets did Globex sell", library_uid=library.uid)

    with CaptureQueriesContext(connection) as unnamed:
        found = search(request)
    assert found.hits and found.named is not None and not found.named.scores
    assert not [query for query in unnamed.captured_queries if "identity_vector @@" in query["sql"]]

    # Its first document with an identity is looked for at the next search: nothing is remembered.
    (tmp_path / "globex.md").write_text(
        "# Annual review\n\nGlobex sold more widgets this year.\n\n© 2020 Globex Corporation\n",
        encoding="utf-8",
    )
    call_command("ingest", str(tmp_path), "--library", "Notes", "--collection", "c", "--no-progress")
    globex = Item.objects.get(organisation="Globex Corporation")
    assert _named(search(request)) == {globex.pk: 1.0}
    # A collection's search asks the same of its own documents.
    collection = SearchRequest(query=request.query, collection_uid=globex.collection.uid)
    assert _named(search(collection)) == {globex.pk: 1.0}


def _named(response: SearchResponse) -> dict[int, float]:
    assert response.named is not None
    return response.named.scores
