"""Deleting items in the admin removes their stored objects too."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from mnemosyne.embedding import Embedder
from mnemosyne.library.models import Chunk, Item
from mnemosyne.storage import get_chunk_store
from tests.conftest import ingest_fixture_docs

pytestmark = pytest.mark.django_db


def test_the_admin_delete_action_removes_rows_and_stored_objects(
    admin_client: Client, embedder: Embedder
) -> None:
    ingest_fixture_docs(embedder)
    item = Item.objects.get(source="docs/backups.md")
    keys = list(Chunk.objects.filter(item=item).values_list("storage_key", flat=True))
    store = get_chunk_store()
    assert all(store.get(key) for key in keys)

    response = admin_client.post(
        reverse("admin:library_item_changelist"),
        {"action": "delete_selected", "_selected_action": [item.pk], "post": "yes"},
    )

    assert response.status_code == 302
    assert not Item.objects.filter(pk=item.pk).exists()
    for key in keys:
        with pytest.raises(KeyError):
            store.get(key)
    assert Item.objects.count() == 2
