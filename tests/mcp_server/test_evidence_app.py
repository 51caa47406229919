"""The evidence app (MCP Apps) in Chromium, inside a host no one here wrote: MCP-UI's AppRenderer
with the official TypeScript SDK client and the MCP Inspector's sandbox proxy
(tests/mcp_server/app_host), against uvicorn over streamable HTTP with a token confined to one
library. A search renders the app; each drawn box is one of get_chunk's locations, where it says;
next and previous, open in the console and copy work; a hostile title and passage stay text; the
app, however it is made to ask, gets nothing of another library; axe-core on the app."""

from __future__ import annotations

import base64
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from mcp.types import BlobResourceContents
from playwright.sync_api import Frame, Page

from access.services import create_token
from mnemosyne.embedding import Embedder
from mnemosyne.ingestion.runner import ingest_paths
from mnemosyne.library.models import Chunk, Library
from mnemosyne.library.services import ensure_collection, ensure_library
from tests.browser import axe_violations, chromium, screenshot
from tests.conftest import FIXTURES
from tests.mcp_server.app_host import Host, app_host
from tests.mcp_server.clients import call_all, mcp_session, run
from tests.servers import uvicorn_server

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

QUERY = "Which ASN.1 type is not handled at all?"
# A page whose title and text are markup, read as text: the app must show them as text.
HOSTILE_PAGE = """<!doctype html><html><head><title>&lt;img src=x onerror="document.body.dataset.pwned=1"&gt;
Quarantine notes</title></head><body><h1>Quarantine notes</h1>
<p>&lt;script&gt;document.body.dataset.pwned = 2&lt;/script&gt; Vessels arriving from an infected port wait
at the quarantine anchorage until the port health officer grants free pratique to the crew.</p>
<p>&lt;img src=x onerror="document.body.dataset.pwned=3"&gt; The pilot boards only after pratique.</p>
</body></html>"""


@pytest.fixture(scope="module")
def server(
    django_db_setup: None, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, Path]]:
    data_dir = tmp_path_factory.mktemp("evidence-app")
    with django_db_blocker.unblock(), uvicorn_server(data_dir, log_name="evidence-app") as url:
        yield url, data_dir


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Host]:
    with app_host(tmp_path_factory.mktemp("app-host")) as found:
        yield found


def _ingest(name: str, files: dict[str, Path | str], embedder: Embedder, where: Path) -> Library:
    folder = where / name
    folder.mkdir()
    for file_name, content in files.items():
        if isinstance(content, Path):
            shutil.copy(content, folder / file_name)
        else:
            (folder / file_name).write_text(content, encoding="utf-8")
    library = ensure_library(name=name)
    collection = ensure_collection(library=library, name="documents")
    ingest_paths([folder], collection=collection, report=lambda line: None, embedder=embedder)
    return library


def _confined_token(library: Library) -> str:
    user = User.objects.create(username=f"reader-{library.uid}")
    _, raw = create_token(user=user, name="app", scopes=["read"], libraries=[library])
    return raw


def _app(page: Page) -> Frame:
    """The app's own document: the frame inside the sandbox proxy, once it shows a hit."""
    page.wait_for_function("() => window.host && (window.host.ready || window.host.failed)", timeout=60_000)
    assert not page.evaluate("() => window.host.failed"), page.evaluate("() => window.host.failed")
    for _ in range(300):
        frames = [frame for frame in page.frames if frame.url == "about:srcdoc"]
        if frames and frames[0].evaluate("() => !document.getElementById('hit')?.hidden"):
            return frames[0]
        page.wait_for_timeout(100)
    raise AssertionError("the app never showed a hit")


def _drawn(app: Frame, pages: int = 1) -> list[dict[str, Any]]:
    """Each box on each of the `pages` pages shown, with where it is on the picture (0-1 of its
    width and height), once all are drawn."""
    app.wait_for_function(
        "(pages) => [...document.querySelectorAll('.page img')].filter((i) => i.complete).length === pages",
        arg=pages,
    )
    drawn: list[dict[str, Any]] = app.evaluate(
        """() => [...document.querySelectorAll('.page')].flatMap((page) => {
            const img = page.querySelector('img').getBoundingClientRect();
            return [...page.querySelectorAll('.box')].map((box) => {
                const r = box.getBoundingClientRect();
                const at = (key) => Number(box.dataset[key]);
                return {page: Number(page.dataset.page),
                        x0: at('x0'), y0: at('y0'), x1: at('x1'), y1: at('y1'),
                        left: (r.left - img.left) / img.width, top: (r.top - img.top) / img.height,
                        right: (r.right - img.left) / img.width, bottom: (r.bottom - img.top) / img.height};
            });
        })"""
    )
    return drawn


def _ask_host(app: Frame, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """What the host answers the app's frame for `method`: as any script in the app could ask."""
    answer: dict[str, Any] = app.evaluate(
        """([method, params]) => new Promise((resolve) => {
            const id = 9000 + Math.floor(Math.random() * 1000);
            addEventListener('message', function listen(event) {
                if (event.data && event.data.id === id) {
                    removeEventListener('message', listen);
                    resolve(event.data);
                }
            });
            parent.postMessage({jsonrpc: '2.0', id, method, params}, '*');
        })""",
        [method, params],
    )
    return answer


def test_a_search_renders_each_hit_on_its_page_with_get_chunks_boxes(
    server: tuple[str, Path], host: Host, embedder: Embedder, settings: Any, tmp_path: Path
) -> None:
    base, data_dir = server
    settings.MNEMOSYNE_DATA_DIR = data_dir
    library = _ingest("Manuals", {"libtasn1.pdf": FIXTURES / "pdfs" / "libtasn1.pdf"}, embedder, tmp_path)
    token = _confined_token(library)
    arguments = {"query": QUERY, "library_uid": library.uid, "limit": 5}
    (found,) = call_all(base, token, [("search", arguments)])
    hits = found.structured_content["results"]
    chunks = call_all(base, token, [("get_chunk", {"chunk_uid": hit["chunk_uid"]}) for hit in hits[:2]])
    locations = [chunk.structured_content["locations"] for chunk in chunks]
    assert locations[0] and locations[1]
    item_uid = hits[0]["item"]["uid"]
    sizes = _page_sizes(base, token, item_uid, {box["page"] for boxes in locations for box in boxes})

    with chromium() as browser:
        page = browser.new_context(viewport={"width": 440, "height": 1160}).new_page()
        host.open(page, base, token, "search", arguments)
        app = _app(page)
        assert app.text_content("#count") == f"1 of {len(hits)}"
        assert app.text_content("#title") == hits[0]["item"]["title"]
        crumbs = app.eval_on_selector_all("#crumbs li", "items => items.map(li => li.textContent)")
        assert crumbs[:2] == [library.name, hits[0]["item"]["title"]]

        for number, expected in enumerate(locations):
            if number:
                app.click("#next")
                app.wait_for_function(
                    f"() => document.getElementById('count').textContent.startsWith('{number + 1} ')"
                )
                app.wait_for_function(
                    "(uid) => document.getElementById('where').textContent.includes(uid)",
                    arg=hits[number]["chunk_uid"],
                )
            drawn = _drawn(app, len({box["page"] for box in expected}))
            # Every location is drawn, once, on its page, and nothing else.
            keys = sorted((box["page"], box["x0"], box["y0"], box["x1"], box["y1"]) for box in drawn)
            assert keys == sorted(
                (box["page"], box["x0"], box["y0"], box["x1"], box["y1"]) for box in expected
            )
            for box in drawn:
                width, height = sizes[box["page"]]
                # Where it is drawn is where the location says (PDF points from the bottom left).
                assert box["left"] == pytest.approx(box["x0"] / width, abs=0.004)
                assert box["right"] == pytest.approx(box["x1"] / width, abs=0.004)
                assert box["top"] == pytest.approx(1 - box["y1"] / height, abs=0.004)
                assert box["bottom"] == pytest.approx(1 - box["y0"] / height, abs=0.004)
            assert app.text_content("#passage") == chunks[number].structured_content["text"]

        app.click("#previous")
        app.wait_for_function("() => document.getElementById('count').textContent.startsWith('1 ')")
        assert app.is_disabled("#previous") and not app.is_disabled("#next")
        app.click("#open")
        page.wait_for_function("() => window.host.opened.length === 1")
        assert page.evaluate("() => window.host.opened") == [hits[0]["url"]]
        app.click("#copy")
        app.wait_for_function("() => document.getElementById('status').textContent !== ''")
        status = app.text_content("#status")
        if status == "Copy the citation below.":
            # The host's frame may not grant the clipboard: the citation is shown to copy instead.
            assert hits[0]["chunk_uid"] in app.input_value("#copy-text")
        else:
            assert status == "The citation is copied."

        serious = [v for v in axe_violations(app) if v["impact"] in ("serious", "critical")]
        assert serious == []
        screenshot(page, "mcp-app-evidence", full_page=False)

        # get_chunk's result renders the same way: its one passage, on its pages, with its boxes.
        single = browser.new_context(viewport={"width": 440, "height": 1160}).new_page()
        host.open(single, base, token, "get_chunk", {"chunk_uid": hits[1]["chunk_uid"]})
        one = _app(single)
        assert one.text_content("#count") == "1 of 1" and one.is_disabled("#next")
        drawn = _drawn(one, len({box["page"] for box in locations[1]}))
        keys = sorted((box["page"], box["x0"], box["y0"], box["x1"], box["y1"]) for box in drawn)
        assert keys == sorted(
            (box["page"], box["x0"], box["y0"], box["x1"], box["y1"]) for box in locations[1]
        )
        dark = browser.new_context(viewport={"width": 440, "height": 1160}, color_scheme="dark").new_page()
        host.open(dark, base, token, "search", arguments, theme="dark")
        dark_app = _app(dark)
        _drawn(dark_app)
        assert dark_app.evaluate("() => document.documentElement.dataset.theme") == "dark"
        assert [v for v in axe_violations(dark_app) if v["impact"] in ("serious", "critical")] == []
        screenshot(dark, "mcp-app-evidence-dark", full_page=False)


def _page_sizes(base: str, token: str, item_uid: str, numbers: set[int]) -> dict[int, tuple[float, float]]:
    """Each page's size in points, as the page resource gives it (`_meta.page`), with its picture."""

    async def scenario() -> dict[int, tuple[float, float]]:
        sizes: dict[int, tuple[float, float]] = {}
        async with mcp_session(base, token, "streamable-http") as session:
            for number in numbers:
                read = await session.read_resource(f"mnemosyne://item/{item_uid}/page/{number}")
                (contents,) = read.contents
                assert isinstance(contents, BlobResourceContents) and contents.mime_type == "image/png"
                assert base64.b64decode(contents.blob).startswith(b"\x89PNG")
                meta = (contents.meta or {})["page"]
                assert meta["number"] == number
                sizes[number] = (meta["width"], meta["height"])
        return sizes

    return run(scenario)


def test_hostile_text_stays_text_and_the_app_gets_nothing_of_another_library(
    server: tuple[str, Path], host: Host, embedder: Embedder, settings: Any, tmp_path: Path
) -> None:
    base, data_dir = server
    settings.MNEMOSYNE_DATA_DIR = data_dir
    mine = _ingest("Harbour notes", {"quarantine.html": HOSTILE_PAGE}, embedder, tmp_path)
    other = _ingest("Private berths", {"berths.pdf": FIXTURES / "pdfs" / "berths.pdf"}, embedder, tmp_path)
    theirs = Chunk.objects.filter(item__collection__library=other).select_related("item").first()
    assert theirs is not None and theirs.page
    token = _confined_token(mine)
    arguments = {"query": "when may the pilot board a vessel in quarantine", "library_uid": mine.uid}
    (found,) = call_all(base, token, [("search", arguments)])
    hit = found.structured_content["results"][0]
    assert "<img" in hit["item"]["title"]

    with chromium() as browser:
        page = browser.new_context(viewport={"width": 440, "height": 900}).new_page()
        host.open(page, base, token, "search", arguments)
        app = _app(page)
        app.wait_for_function("() => !document.getElementById('passage').textContent.startsWith('Waiting')")
        # The markup is shown as the characters it is; none of it became an element or ran.
        assert app.text_content("#title") == hit["item"]["title"]
        page.wait_for_timeout(500)
        assert "<script>" in (app.text_content("#passage") or "")
        assert app.evaluate("() => document.body.dataset.pwned") is None
        assert app.evaluate("() => document.querySelectorAll('img, iframe, object, embed').length") == 0
        assert app.evaluate("() => document.scripts.length") == 1

        # A script in the app asking the host for another library's chunk, page or search gets the
        # answer a uid that exists nowhere gets: nothing of what is there.
        refused = _ask_host(app, "tools/call", {"name": "get_chunk", "arguments": {"chunk_uid": theirs.uid}})
        nowhere = _ask_host(
            app, "tools/call", {"name": "get_chunk", "arguments": {"chunk_uid": "chk_nowhere00000000"}}
        )
        assert refused["result"]["isError"] is True and nowhere["result"]["isError"] is True
        assert _text(refused).replace(theirs.uid, "UID") == _text(nowhere).replace(
            "chk_nowhere00000000", "UID"
        )
        page_uri = f"mnemosyne://item/{theirs.item.uid}/page/{theirs.page}"
        unseen = _ask_host(app, "resources/read", {"uri": page_uri})
        unknown = _ask_host(app, "resources/read", {"uri": "mnemosyne://item/itm_nowhere00000000/page/1"})
        assert "result" not in unseen and "result" not in unknown
        assert unseen["error"]["message"].replace(theirs.item.uid, "UID") == unknown["error"][
            "message"
        ].replace("itm_nowhere00000000", "UID")
        searched = _ask_host(
            app, "tools/call", {"name": "search", "arguments": {"query": "berth", "library_uid": other.uid}}
        )
        assert other.name not in str(searched) and theirs.uid not in str(searched)
        beyond = _ask_host(
            app, "resources/read", {"uri": f"mnemosyne://item/{hit['item']['uid']}/page/99999"}
        )
        assert "result" not in beyond
        for answer in (refused, unseen, searched, beyond):
            assert (
                "Traceback" not in str(answer) and "/work" not in str(answer) and "SELECT" not in str(answer)
            )


def _text(answer: dict[str, Any]) -> str:
    return " ".join(part["text"] for part in answer["result"]["content"] if part["type"] == "text")
