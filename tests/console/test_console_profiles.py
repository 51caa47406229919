"""A library's profile and synonym sets in the console (Django's test client): shown to whoever reads
the library, kept by its managers only; a set saved with each unreadable line reported and the rest
kept, a set refused whole changing nothing; the profile changed with what it changes said and a
re-read queued; the playground shows what the rules did to the question."""

from __future__ import annotations

import re
from html import unescape
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from access.library_access import Role
from access.library_grants import grant
from mnemosyne.embedding import get_embedder
from mnemosyne.library.models import Library
from mnemosyne.profiles.models import SynonymSet
from tests.conftest import ingest_fixture_docs

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def people(settings: Any) -> tuple[Library, Client, Client]:
    """Handbook, with a manager and a reader of it, under grants."""
    settings.LIBRARY_ACCESS = "grants"
    handbook, _, _ = ingest_fixture_docs(get_embedder())
    clients = []
    for name, role in (("mona", Role.MANAGER), ("rita", Role.READER)):
        person = User.objects.create_user(name, password="a long test password")
        grant(library=handbook, role=role, user=person, actor="test")
        client = Client()
        client.force_login(person)
        clients.append(client)
    return handbook, clients[0], clients[1]


def said(response: Any) -> list[str]:
    """The messages a page shows (Django's messages, rendered by the console's base page)."""
    page = response.content.decode()
    listed = re.search(r'<ul class="messages">(.*?)</ul>', page, re.S)
    return [
        unescape(text).strip()
        for text in re.findall(r"<li[^>]*>(.*?)</li>", listed.group(1) if listed else "", re.S)
    ]


def test_everyone_who_reads_sees_the_rules_and_only_a_manager_changes_them(
    people: tuple[Library, Client, Client],
) -> None:
    handbook, manager, reader = people
    page = reader.get(f"/console/libraries/{handbook.uid}/").content.decode()
    assert "Profile: Manuals and documentation" in page and "manuals and guides: product and version" in page
    assert "Save the set" not in page and "Change the profile" not in page
    refused = reader.post(f"/console/libraries/{handbook.uid}/synonyms", {"name": "x", "text": "a, b"})
    assert refused.status_code == 403
    assert (
        reader.post(f"/console/libraries/{handbook.uid}/profile", {"profile": "filings"}).status_code == 403
    )
    assert "Save the set" in manager.get(f"/console/libraries/{handbook.uid}/").content.decode()


def test_a_set_keeps_what_it_can_read_and_a_bad_one_changes_nothing(
    people: tuple[Library, Client, Client],
) -> None:
    handbook, manager, _ = people
    url = f"/console/libraries/{handbook.uid}/synonyms"
    saved = manager.post(
        url, {"name": "tools", "text": "restore, recover\nsolo\nbackup => dump\n"}, follow=True
    )
    messages = said(saved)
    assert messages[0] == "created: synonym set 'tools' of library 'Handbook' (2 rules)"
    assert messages[1].startswith("refused line 2: one term alone")
    assert SynonymSet.objects.get(library=handbook, name="tools").text == "restore, recover\nbackup => dump\n"
    circle = manager.post(url, {"name": "tools", "text": "a => b\nb => a\n"}, follow=True)
    assert said(circle) == ["Refused, nothing changed: the '=>' rules run in a circle: a => b => a."]
    assert SynonymSet.objects.get(library=handbook, name="tools").rule_count == 2
    exported = manager.get(f"/console/libraries/{handbook.uid}/synonyms/tools.txt")
    assert exported.content.decode() == "restore, recover\nbackup => dump\n"
    assert manager.post(f"/console/libraries/{handbook.uid}/synonyms/tools/delete").status_code == 302
    assert not SynonymSet.objects.filter(library=handbook).exists()


def test_changing_the_profile_says_what_it_changes_and_queues_a_reread(
    people: tuple[Library, Client, Client],
) -> None:
    handbook, manager, _ = people
    changed = manager.post(
        f"/console/libraries/{handbook.uid}/profile", {"profile": "filings", "reread": "on"}, follow=True
    )
    messages = said(changed)
    assert messages[0] == "changed: library 'Handbook' profile documentation → filings"
    assert any("are read again by a re-read" in message for message in messages)
    assert messages[-1].startswith("Queued a re-read of its")
    assert Library.objects.get(pk=handbook.pk).library_type == "filings"
    unknown = manager.post(f"/console/libraries/{handbook.uid}/profile", {"profile": "finance"}, follow=True)
    assert said(unknown)[0].startswith("Not changed: unknown profile 'finance'")


def test_the_playground_shows_what_the_synonyms_added(people: tuple[Library, Client, Client]) -> None:
    handbook, manager, _ = people
    manager.post(
        f"/console/libraries/{handbook.uid}/synonyms", {"name": "tools", "text": "restore, recover\n"}
    )
    page = manager.get(f"/console/playground/?q=how+to+recover+the+database&library={handbook.uid}")
    text = unescape(page.content.decode())
    assert "Synonyms (tools)" in text and "“recover” also searched as restore" in text
