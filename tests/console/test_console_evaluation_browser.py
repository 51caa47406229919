"""Evaluation in the console, in Chromium (Playwright) against uvicorn and the background worker
over real HTTP, under LIBRARY_ACCESS=grants: a manager builds a set of ten questions from the
playground, runs it, changes alpha, runs it again, compares the two runs and reads the questions
that changed; imports a BEIR directory and a CSV; and a person who manages another library reads
none of this library's query log. axe-core on each page; the docs' screenshots."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Page

from access.library_access import Role
from access.library_grants import grant
from access.services import create_token
from mnemosyne.embedding import Embedder
from tests.browser import axe_violations, chromium, screenshot, sign_in
from tests.evaluation.corpus import make_library
from tests.mcp_server.clients import post, rpc
from tests.servers import db_worker, uvicorn_server

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

PASSWORD = "an evaluation password 4 tests"
# Ten questions, each with the title (and page) of the hit that answers it. The last shares its
# words with the wrong pages ("statement shows"): full text puts them first, meaning its own.
QUESTIONS = [
    ("why do ocean tides rise and fall", "Ocean tides", None),
    ("how do green leaves make sugar", "Photosynthesis", None),
    ("where does lava come out of a volcano", "Volcanoes", None),
    ("what do honey bees carry between flowers", "Pollination", None),
    ("how does glacier ice move downhill", "Glaciers", None),
    ("what does the balance sheet list", "Annual report", 1),
    ("which statement shows cash from financing activities", "Annual report", 2),
    ("where are revenue and net income reported", "Annual report", 3),
    ("which title would a spreadsheet run as a formula", '=HYPERLINK("http://x")', None),
    ("which statement shows the company's assets", "Annual report", 1),
]


@pytest.fixture(scope="module")
def server(django_db_setup: None, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    data_dir = tmp_path_factory.mktemp("evaluation")
    with (
        django_db_blocker.unblock(),
        uvicorn_server(data_dir, env={"LIBRARY_ACCESS": "grants"}, log_name="evaluation") as url,
    ):
        yield url, data_dir


def answer_from_the_playground(
    page: Page, base: str, library_uid: str, question: str, title: str, number: Any
) -> None:
    page.goto(f"{base}/console/playground/?{urlencode({'q': question, 'library': library_uid})}")
    hit = page.locator("li.hit").filter(has=page.locator(".hit-head a", has_text=title))
    if number is not None:
        hit = hit.filter(has_text=f"p. {number}")
    hit.first.locator("form.answers button").click()
    assert "is answered by" in page.locator(".messages").inner_text()


def run_and_wait(page: Page, *, label: str, alpha: str) -> None:
    page.fill("#label", label)
    page.fill("#alpha", alpha)
    page.click("form[aria-labelledby=new-run] button[type=submit]")
    page.wait_for_selector("#progress")
    # The worker runs it; the page follows its progress and shows the measures when it is done.
    page.wait_for_selector("table.measures", timeout=120_000)
    assert "done" in page.locator("#progress .badge").inner_text()


def test_a_manager_builds_a_set_in_the_playground_runs_it_twice_and_compares(
    server: tuple[str, Path], embedder: Embedder, settings: Any, django_db_blocker: Any, tmp_path: Path
) -> None:
    base, data_dir = server
    settings.MNEMOSYNE_DATA_DIR = data_dir
    science = make_library("Science")
    other = make_library("Other")
    max_, rob = (User.objects.create_user(name, password=PASSWORD) for name in ("max", "rob"))
    grant(library=science, role=Role.MANAGER, user=max_, actor="test")
    grant(library=other, role=Role.MANAGER, user=rob, actor="test")
    grant(library=science, role=Role.READER, user=rob, actor="test")
    reader = User.objects.create_user("ria", password=PASSWORD)
    grant(library=science, role=Role.READER, user=reader, actor="test")
    # Calls over MCP on both libraries: the query log each manager may read.
    _, token = create_token(user=rob, name="desk", scopes=["read"])
    for query, library in (
        ("salaries of the science team", science),
        ("the other library's own query", other),
    ):
        arguments = {"query": query, "library_uid": library.uid, "search_types": ["fulltext"]}
        post(base, rpc("tools/call", {"name": "search", "arguments": arguments}), token)
    beir = tmp_path / "tiny"
    (beir / "qrels").mkdir(parents=True)
    (beir / "queries.jsonl").write_text(
        "\n".join(json.dumps({"_id": f"q{n}", "text": text}) for n, (text, _, _) in enumerate(QUESTIONS[:5]))
    )
    (beir / "corpus.jsonl").write_text("")
    sources = ["tides", "leaves", "volcano", "bees", "glacier"]
    (beir / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"q{n}\t{source}\t1\n" for n, source in enumerate(sources))
    )
    csv_file = tmp_path / "questions.csv"
    csv_file.write_text(
        "question,item,pages\nwhat is on page two,report,2\n=SUM(A1:A9),report,1\n", encoding="cp1252"
    )

    with (
        django_db_blocker.unblock(),
        db_worker(data_dir, log_name="evaluation-worker"),
        chromium() as browser,
    ):
        page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
        page.goto(f"{base}/console/evaluation/")
        sign_in(page, "max", PASSWORD)
        page.fill("#name", "Science questions")
        page.select_option("#library", label="Science")
        page.click("form[aria-labelledby=new-set] button[type=submit]")
        page.wait_for_selector("h1:has-text('Science questions')")
        set_url = page.url

        for question, title, number in QUESTIONS:
            answer_from_the_playground(page, base, science.uid, question, title, number)
        assert axe_violations(page) == []
        screenshot(page, "console-playground-answers")

        page.goto(set_url)
        assert "10 questions" in page.locator("main p.muted").first.inner_text()
        assert page.locator("table[aria-labelledby=questions] tbody tr").count() == 10
        run_and_wait(page, label="keywords first", alpha="0.1")
        first = page.locator("table.measures").inner_text()
        assert "success@1" in first and "ndcg@10" in first
        assert axe_violations(page) == []
        screenshot(page, "console-evaluation-run")

        page.goto(set_url)
        run_and_wait(page, label="meaning first", alpha="0.9")
        page.goto(set_url)
        assert page.locator("figure.chart circle").count() == 4  # two runs, two measures each
        assert axe_violations(page) == []
        screenshot(page, "console-evaluation-set")

        # The two runs compared: the newest against the one before, as the page chooses them.
        page.click("text=Compare the two chosen runs")
        page.wait_for_selector("#verdicts")
        verdicts = page.locator("#verdicts").inner_text()
        assert "better on" in verdicts and "p = " in verdicts
        deltas = page.locator("table[aria-labelledby=deltas]").inner_text()
        assert "ndcg@10" in deltas and "latency p95 (ms)" in deltas
        changed = page.locator("li.change")
        assert changed.count() >= 1
        # The question whose words point at the wrong pages is answered first when meaning counts more.
        assets = changed.filter(has_text="which statement shows the company's assets")
        assert assets.count() == 1 and "better" in assets.locator(".badge").inner_text()
        assert "rank 3 → 1" in assets.inner_text()
        assert assets.locator("h3").all_inner_texts() == ["A", "B"]
        assert "✓" in assets.locator("div.compare > div").nth(1).locator("li").first.inner_text()
        assert axe_violations(page) == []
        screenshot(page, "console-evaluation-compare")

        # Imports: a BEIR directory (its corpus not read) and a CSV in another encoding.
        page.goto(f"{base}/console/evaluation/")
        page.fill("#name", "Imported")
        page.select_option("#library", label="Science")
        page.click("form[aria-labelledby=new-set] button[type=submit]")
        page.wait_for_selector("h1:has-text('Imported')")
        page.set_input_files("#import-directory", beir)
        page.click("text=Import the directory")
        assert "Added 5 questions; refused 0." in page.locator("[role=status]").last.inner_text()
        page.set_input_files("#import-file", csv_file)
        page.click("text=Import the file")
        report = page.locator("div.note[role=status]").inner_text()
        assert "Added 1 question; refused 1." in report and "a formula cell" in report
        assert "questions.csv row 3" in report
        assert axe_violations(page) == []
        screenshot(page, "console-evaluation-import")

        # Someone who manages another library reads that library's calls only; a reader, none.
        other_manager = browser.new_context().new_page()
        other_manager.goto(f"{base}/console/activity/")
        sign_in(other_manager, "rob", PASSWORD)
        logged = other_manager.locator("table[aria-labelledby=recent]").inner_text()
        assert "the other library's own query" in logged and "salaries of the science team" not in logged
        other_manager.goto(f"{base}/console/evaluation/")
        assert "Science questions" not in other_manager.content()
        only_reads = browser.new_context().new_page()
        only_reads.goto(f"{base}/console/activity/")
        sign_in(only_reads, "ria", PASSWORD)
        assert "you manage none" in only_reads.locator("body").inner_text()
        assert "salaries of the science team" not in only_reads.content()
