"""The console in Chromium (Playwright), against uvicorn over real HTTP, under LIBRARY_ACCESS=grants.

A person follows a search hit's `url` from an MCP client, signs in, and lands on the PDF page with
the passage boxed: every drawn box is where get_chunk's `locations` say, and the PDF's own text
under it (read with pypdfium2) is the chunk's. They browse libraries → collection → item → chunks
and see only the library they were granted; everything of another library answers 404 exactly like
an unknown uid. Untrusted titles, text and file names render as text; a token made in the console
works until it is revoked there. axe-core on every page. Uploads, the worker reading them and
deletions: test_console_uploads_browser.py.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pypdfium2 as pdfium
import pytest
from django.contrib.auth.models import User

from access.library_access import Role
from access.library_grants import grant
from access.models import OAuthClient, OAuthGrant
from access.services import create_token
from mnemosyne.embedding import Embedder
from mnemosyne.ingestion.runner import ingest_paths
from mnemosyne.library.models import Chunk, Collection, Item, Source
from mnemosyne.library.services import ensure_collection, ensure_library
from tests.browser import axe_violations, chromium, in_thread, screenshot, sign_in
from tests.conftest import FIXTURES
from tests.mcp_server.clients import call_all, post, rpc

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

PASSWORD = "a console password 4 tests"
QUESTION = "Which ASN.1 type is not handled at all?"


def _ingest(directory: Path, library: str, collection: str, embedder: Embedder) -> Collection:
    found = ensure_collection(library=ensure_library(name=library), name=collection)
    ingest_paths([directory], collection=found, report=lambda line: None, embedder=embedder)
    return found


def keys_state(page: Any) -> Any:
    """The signed-in session of `page`, for another browser context (another screen size)."""
    return page.context.storage_state()


def _tab_to(page: Any, selector: str, presses: int = 80) -> None:
    """Press Tab until the element `selector` names has the focus (as a person without a mouse)."""
    target = page.locator(selector).first
    for _ in range(presses):
        page.keyboard.press("Tab")
        if target.evaluate("element => element === document.activeElement"):
            return
    raise AssertionError(f"Tab never reached {selector}")


def _dialogs(page: Any) -> list[str]:
    """What any alert() a page runs would say (none may run: documents' text is never code)."""
    seen: list[str] = []

    def record(dialog: Any) -> None:
        seen.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", record)
    return seen


def _words(text: str) -> list[str]:
    return re.findall(r"[A-Za-z]{3,}", text)


def test_a_hit_opens_at_its_passage_and_a_person_sees_only_their_libraries(
    console_url: tuple[str, Path], embedder: Embedder, tmp_path: Path, settings: Any
) -> None:
    base, data_dir = console_url
    settings.MNEMOSYNE_DATA_DIR = data_dir  # the server's chunk store: page pictures need the originals
    manuals_dir, secret_dir = tmp_path / "manuals", tmp_path / "secret"
    manuals_dir.mkdir()
    secret_dir.mkdir()
    shutil.copy(FIXTURES / "pdfs" / "libtasn1.pdf", manuals_dir / "libtasn1.pdf")
    (secret_dir / "salaries.md").write_text("# Salaries\n\nThe salary bands of 2026, by grade.\n")
    manuals = _ingest(manuals_dir, "Manuals", "debian", embedder)
    secret = _ingest(secret_dir, "Payroll", "private", embedder)
    rita = User.objects.create_user("rita", password=PASSWORD)
    grant(library=manuals.library, role=Role.READER, user=rita, actor="test")
    _, raw = create_token(user=rita, name="rita's client", actor="test")

    (found,) = call_all(base, raw, [("search", {"query": QUESTION, "limit": 5})])
    hits = found.structured_content["results"]
    answer = next(hit for hit in hits if hit["page"] == 5)
    assert all(hit["url"] == f"{base}/console/chunks/{hit['chunk_uid']}#passage" for hit in hits)
    assert answer["url"] in found.content[0].text  # the text a client shows carries the link too
    (chunk,) = call_all(base, raw, [("get_chunk", {"chunk_uid": answer["chunk_uid"]})])
    expected = chunk.structured_content
    assert expected["url"] == answer["url"]
    hidden = Chunk.objects.filter(library=secret.library).select_related("item", "collection").first()
    assert hidden is not None
    source = Source.objects.create(collection=secret, kind=Source.Kind.DIRECTORY, location=str(secret_dir))
    # Every console address that names a library's content (GET), and every change (POST).
    hidden_paths = [
        f"libraries/{secret.library.uid}/",
        f"collections/{secret.uid}/",
        f"collections/{secret.uid}/jobs",
        f"items/{hidden.item.uid}/",
        f"items/{hidden.item.uid}/original",
        f"items/{hidden.item.uid}/pages/1.png",
        f"items/{hidden.item.uid}/delete",
        f"chunks/{hidden.uid}",
    ]
    hidden_changes = [
        f"items/{hidden.item.uid}/delete",
        f"collections/{secret.uid}/retry-failed",
        f"collections/{secret.uid}/uploads",
        f"sources/{source.uid}/sync",
    ]
    pdf = Item.objects.get(collection=manuals)

    with chromium() as browser:
        page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
        dialogs = _dialogs(page)
        # The link from the client: sign in first, then the passage.
        page.goto(answer["url"])
        assert "/console/sign-in/" in page.url
        assert axe_violations(page) == []
        screenshot(page, "console-sign-in")
        sign_in(page, "rita", PASSWORD)
        assert page.url.startswith(f"{base}/console/chunks/{answer['chunk_uid']}")
        boxes = page.locator("rect.highlight").evaluate_all(
            "rects => rects.map(r => [Number(r.dataset.page), ...r.dataset.box.split(',').map(Number)])"
        )
        stored = [[b["page"], b["x0"], b["y0"], b["x1"], b["y1"]] for b in expected["locations"]]
        assert boxes and sorted(boxes) == sorted(stored)
        # The PDF's own text under each box is the chunk's (the pages' own words, not ours).
        chunk_words = set(_words(expected["text"]))
        for page_number, *box in boxes:
            under = _pdf_words_under(manuals_dir / "libtasn1.pdf", page_number, box)
            assert under and sum(word in chunk_words for word in under) >= 0.9 * len(under), under
        assert page.locator("figure.page").count() == expected["page_end"] - expected["page"] + 1
        assert page.locator("nav.crumbs li").all_inner_texts()[:4] == [
            "Libraries",
            "Manuals",
            "debian",
            pdf.title,
        ]
        assert axe_violations(page) == []
        screenshot(page, "console-citation", full_page=False)
        picture = page.request.get(base + (page.locator("svg image").first.get_attribute("href") or ""))
        assert picture.status == 200 and picture.headers["content-type"] == "image/png"

        # Browse: only the granted library; its collection, the item and its chunks.
        page.goto(f"{base}/console/")
        assert page.locator("main table tbody th").all_inner_texts() == ["Manuals"]
        assert axe_violations(page) == []
        screenshot(page, "console-libraries")
        # Each click navigates: wait for the next page to load before reading it.
        page.click("text=Manuals")
        page.wait_for_url(re.compile(r"/console/libraries/[^/]+/$"))
        assert axe_violations(page) == []
        page.click("main table >> text=debian")
        page.wait_for_url(re.compile(r"/console/collections/[^/]+/$"))
        assert page.locator("#items tbody tr").count() == 1
        page.fill("#q", "no such title")
        page.wait_for_selector("#items >> text=No items match")
        # htmx swapped the rows and kept the address shareable.
        assert parse_qs(urlsplit(page.url).query)["q"] == ["no such title"]
        page.fill("#q", "")
        page.wait_for_selector("#items tbody tr")
        assert axe_violations(page) == []
        screenshot(page, "console-collection")
        page.click(f"#items >> text={pdf.title}")
        page.wait_for_url(re.compile(r"/console/items/[^/]+/$"))
        assert page.locator("table.chunks tbody tr").count() == pdf.chunk_count
        assert axe_violations(page) == []
        screenshot(page, "console-item", full_page=False)
        page.click("text=Read the text with the chunk boundaries drawn")
        page.wait_for_selector(".inspected .boundary")
        assert page.locator(".inspected .boundary").count() == min(pdf.chunk_count, 100)
        assert page.locator(".inspected .overlap").count() > 0  # chunks overlap by CHUNK_OVERLAP_TOKENS
        assert axe_violations(page) == []
        screenshot(page, "console-item-text", full_page=False)
        download = page.request.get(f"{base}/console/items/{pdf.uid}/original")
        assert download.status == 200 and download.body() == (manuals_dir / "libtasn1.pdf").read_bytes()
        assert download.headers["content-disposition"] == 'attachment; filename="libtasn1.pdf"'
        assert download.headers["x-content-type-options"] == "nosniff"

        # Another library's every address answers as an unknown uid does.
        for path in hidden_paths:
            unknown = re.sub(r"/(lib|col|itm|chk)_\w+", r"/\1_unknown00000000", f"/{path}")
            refused = page.request.get(f"{base}/console/{path}")
            missing = page.request.get(f"{base}/console{unknown}")
            assert (refused.status, missing.status) == (404, 404), path
            assert "Payroll" not in refused.text() and "salar" not in refused.text().lower()
        csrf = next(cookie["value"] for cookie in page.context.cookies() if cookie["name"] == "csrftoken")
        forged = page.request.post(f"{base}/console/items/{pdf.uid}/delete", form={"confirm": "delete"})
        assert forged.status == 403 and "CSRF" in forged.text()  # no token: refused before anything else
        for path in hidden_changes:
            unknown = re.sub(r"/(itm|col|src)_\w+/", r"/\1_unknown00000000/", f"/{path}")
            form: dict[str, str | float | bool] = {"csrfmiddlewaretoken": csrf, "confirm": "delete"}
            refused = page.request.post(f"{base}/console/{path}", form=form)
            missing = page.request.post(f"{base}/console{unknown}", form=form)
            assert (refused.status, missing.status) == (404, 404), path
        assert dialogs == []

        # Readable on a phone: nothing wider than the screen but the tables' own scrolling boxes.
        phone = browser.new_context(viewport={"width": 390, "height": 844}, storage_state=keys_state(page))
        small = phone.new_page()
        for path in (f"collections/{manuals.uid}/", f"items/{pdf.uid}/", f"chunks/{answer['chunk_uid']}"):
            small.goto(f"{base}/console/{path}")
            assert small.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1"), path
        screenshot(small, "console-phone", full_page=False)

        # The same way from the keyboard alone: sign in, then Tab and Enter down to a chunk's passage.
        keys = browser.new_context().new_page()
        keys.goto(f"{base}/console/")
        _tab_to(keys, "#id_username")
        keys.keyboard.type("rita")
        keys.keyboard.press("Tab")
        keys.keyboard.type(PASSWORD)
        keys.keyboard.press("Enter")
        keys.wait_for_url(f"{base}/console/")
        for link in ("Manuals", "debian", pdf.title, "Read the text with the chunk boundaries drawn"):
            _tab_to(keys, f"a:text-is('{link}')")
            left = keys.url
            keys.keyboard.press("Enter")
            keys.wait_for_url(_elsewhere(left))  # the next page, loaded
        _tab_to(keys, "a.boundary#chunk-3")
        keys.keyboard.press("Enter")
        keys.wait_for_selector("rect.highlight")
        assert "/console/chunks/" in keys.url


def _elsewhere(left: str) -> Callable[[str], bool]:
    """For wait_for_url: any address but the page just left."""
    return lambda url: url != left


def test_untrusted_titles_text_and_file_names_render_as_text(
    console_url: tuple[str, Path], embedder: Embedder, tmp_path: Path, settings: Any
) -> None:
    base, data_dir = console_url
    settings.MNEMOSYNE_DATA_DIR = data_dir
    name = '"><svg onload=alert(3)>.md'
    (tmp_path / name).write_text(
        "# <script>alert(1)</script> Release notes\n\n"
        "The parser now accepts <img src=x onerror=alert(2)> in captions.\n"
    )
    collection = _ingest(tmp_path, "Notes", "<b>unsafe</b>", embedder)
    User.objects.create_superuser("sam", "sam@example.com", PASSWORD)
    item = Item.objects.get(collection=collection)
    chunk = Chunk.objects.filter(item=item).first()
    assert chunk is not None

    with chromium() as browser:
        page = browser.new_context().new_page()
        dialogs = _dialogs(page)
        page.goto(f"{base}/console/sign-in/")
        sign_in(page, "sam", PASSWORD)
        for path in (f"collections/{collection.uid}/", f"items/{item.uid}/", f"chunks/{chunk.uid}"):
            page.goto(f"{base}/console/{path}")
            text = page.locator("main").inner_text()
            assert "<script>alert(1)</script>" in page.locator("h1").inner_text() or path.startswith("coll")
            assert page.locator("main script, main svg[onload], main img").count() == 0
            assert axe_violations(page) == []
        assert "<img src=x onerror=alert(2)>" in text
        assert "<img src=x onerror=alert(2)>" in page.locator("mark#passage").inner_text()
        page.goto(f"{base}/console/items/{item.uid}/")
        assert name in page.locator("main").inner_text()
        assert dialogs == []


def test_the_console_asks_who_is_looking(console_url: tuple[str, Path]) -> None:
    base, _ = console_url
    with chromium() as browser:
        page = browser.new_context().new_page()
        response = page.request.get(f"{base}/console/items/itm_unknown00000000/", max_redirects=0)
        assert response.status == 302
        assert response.headers["location"].startswith("/console/sign-in/?next=")
        page.goto(f"{base}/console/sign-in/")
        csp = page.request.get(f"{base}/console/sign-in/").headers["content-security-policy"]
        assert "unsafe-inline" not in csp and "frame-ancestors 'none'" in csp
        page.fill("#id_username", "nobody")
        page.fill("#id_password", "wrong")
        page.click("main button[type=submit]")
        assert (
            page.locator("[role=alert]").inner_text().startswith("Your username and password did not match")
        )


def _pdf_words_under(pdf: Path, page_number: int, box: list[float]) -> list[str]:
    document = pdfium.PdfDocument(str(pdf))
    try:
        text_page = document[page_number - 1].get_textpage()
        return _words(text_page.get_text_bounded(box[0], box[1], box[2], box[3]))
    finally:
        document.close()


def test_a_token_made_in_the_console_works_until_it_is_revoked_there(
    console_url: tuple[str, Path], embedder: Embedder, tmp_path: Path, settings: Any
) -> None:
    base, data_dir = console_url
    settings.MNEMOSYNE_DATA_DIR = data_dir
    (tmp_path / "guide.md").write_text("# Guide\n\nRestore the database from last night's backup.\n")
    guides = _ingest(tmp_path, "Guides", "main", embedder)
    rita = User.objects.create_user("rita", password=PASSWORD)
    mona = User.objects.create_user("mona", password=PASSWORD)
    grant(library=guides.library, role=Role.READER, user=rita, actor="test")
    grant(library=guides.library, role=Role.MANAGER, user=mona, actor="test")
    client = OAuthClient.objects.create(client_id="https://desk.example/client.json", name="Desk AI")
    connected = OAuthGrant.objects.create(user=rita, client=client, scopes=["read"], resource=f"{base}/mcp")

    with chromium() as browser:
        page = browser.new_context().new_page()
        page.goto(f"{base}/console/tokens/")
        sign_in(page, "rita", PASSWORD)
        page.fill("#id_name", "laptop Claude")
        page.check("text=Guides")
        page.click("text=Create the token")
        raw = page.locator("#new-token").inner_text()
        assert raw.startswith("mnem_")
        shown = page.request.get(f"{base}/console/tokens/")
        assert "no-store" in shown.headers["cache-control"]
        configs = page.locator("section.created pre").all_inner_texts()
        assert len(configs) == 5 and all(raw in config for config in configs)
        assert f"{base}/mcp/" in configs[0]
        assert axe_violations(page) == []
        screenshot(page, "console-tokens")
        # The page shows it once: a reload has no secret in it.
        page.goto(f"{base}/console/tokens/")
        assert raw not in page.content()
        assert page.locator("tbody th").all_inner_texts() == ["laptop Claude", "Desk AI"]

        (listed,) = in_thread(lambda: call_all(base, raw, [("list_libraries", {})]))
        assert [row["name"] for row in listed.structured_content["libraries"]] == ["Guides"]

        # Mona manages Guides: she sees rita's token and may revoke it; rita's own page then says so.
        other = browser.new_context().new_page()
        other.goto(f"{base}/console/tokens/")
        sign_in(other, "mona", PASSWORD)
        other.click("button[aria-label='Revoke laptop Claude']")
        other.wait_for_load_state()
        assert axe_violations(other) == []
        other.click("button[aria-label='Disconnect Desk AI of rita']")
        other.wait_for_load_state()
        page.reload()
        assert page.locator("text=revoked").count() == 1
    refused = post(base, rpc("tools/call", {"name": "list_libraries", "arguments": {}}), raw)
    assert refused.status_code == 401 and "revoked" in refused.text
    connected.refresh_from_db()
    assert connected.revoked_at is not None
