"""Grants are only raised by someone granting: `manage.py grant`, the admin, the console, the explicit
policy switch (and `serve --demo` for its own development user). Every other write of a grant is
refused by the model, and no other module of the product reaches the one function that writes."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from django.contrib.auth.models import User

from access.library_access import Role
from access.library_grants import grant
from access.models import GrantWriteRefused, LibraryGrant
from mnemosyne.library.services import ensure_library

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("access", "console", "mcp_server", "mnemosyne")
# The doors through which a person grants (and the one module that writes the rows).
GRANTING_DOORS = {
    "access/admin.py",
    "access/management/commands/grant.py",
    "access/policy_switch.py",
    # `serve --demo`: its own development user reads the demo library it just made.
    "mnemosyne/management/commands/serve.py",
}


def test_a_grant_written_any_other_way_is_refused(db: None) -> None:
    library = ensure_library(name="Handbook", library_type="documentation")
    alice = User.objects.create(username="alice")
    with pytest.raises(GrantWriteRefused):
        LibraryGrant.objects.create(library=library, user=alice, role="reader")
    with pytest.raises(GrantWriteRefused):
        LibraryGrant.objects.get_or_create(library=library, user=alice, defaults={"role": "manager"})
    with pytest.raises(GrantWriteRefused):
        LibraryGrant.objects.bulk_create([LibraryGrant(library=library, user=alice, role="reader")])
    assert not LibraryGrant.objects.exists()
    grant(library=library, role=Role.READER, user=alice, actor="test")
    row = LibraryGrant.objects.get()
    row.role = "manager"
    with pytest.raises(GrantWriteRefused):
        row.save()
    with pytest.raises(GrantWriteRefused):
        LibraryGrant.objects.filter(pk=row.pk).update(role="manager")
    assert LibraryGrant.objects.get().role == "reader"
    row.delete()  # taking away is not guarded
    assert not LibraryGrant.objects.exists()


def _modules() -> list[tuple[str, ast.Module]]:
    found = []
    for package in PRODUCT:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            found.append((path.relative_to(ROOT).as_posix(), ast.parse(path.read_text(), str(path))))
    return found


def test_only_library_grants_opens_the_door_and_only_the_granting_doors_call_it() -> None:
    opening, calling = set(), set()
    for name, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                called = node.func
                if (isinstance(called, ast.Name) and called.id == "granting") or (
                    isinstance(called, ast.Attribute) and called.attr == "granting"
                ):
                    opening.add(name)
            if (
                isinstance(node, ast.ImportFrom)
                and node.module == "access.library_grants"
                and any(alias.name == "grant" for alias in node.names)
            ):
                calling.add(name)
            if isinstance(node, ast.Attribute) and node.attr == "grant":
                value = node.value
                if isinstance(value, ast.Name) and value.id == "library_grants":
                    calling.add(name)
    assert opening == {"access/library_grants.py"}
    assert calling == GRANTING_DOORS
