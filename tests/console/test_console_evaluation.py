"""The console's evaluation pages, in-process (Django's test client): sets made and kept by the
managers of their library (staff: every set; others: refused in words), "this hit answers the
question" from the playground, imports with their report of refused rows, a run started from the
form and run by the background task, its progress, cancel, answers as CSV, and two runs compared."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from access.library_access import Role
from access.library_grants import grant
from mnemosyne.evaluation import tasks
from mnemosyne.evaluation.models import EvaluationSet, Evidence, Run, RunStatus
from mnemosyne.library.models import Chunk
from tests.evaluation.corpus import make_library

# Searches run their legs on connections of their own: the data must be committed.
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def world(settings: Any) -> dict[str, Any]:
    settings.LIBRARY_ACCESS = "grants"
    science = make_library("Science")
    other = make_library("Other")
    people = {
        name: User.objects.create_user(name, password="a long test password") for name in ("max", "rob")
    }
    grant(library=science, role=Role.MANAGER, user=people["max"], actor="test")
    grant(library=other, role=Role.READER, user=people["max"], actor="test")
    grant(library=science, role=Role.READER, user=people["rob"], actor="test")
    clients = {}
    for name, person in people.items():
        clients[name] = Client()
        clients[name].force_login(person)
    return {"science": science, "other": other, "people": people, "clients": clients}


def text(response: Any) -> str:
    return str(response.content.decode())


def make_set(client: Client, library_uid: str, name: str = "Science questions") -> EvaluationSet:
    response = client.post("/console/evaluation/", {"name": name, "library": library_uid})
    assert response.status_code == 302, text(response)
    return EvaluationSet.objects.get(name=name)


def test_a_manager_makes_sets_for_the_libraries_they_manage_and_a_reader_is_told_no(
    world: dict[str, Any],
) -> None:
    manager, reader = world["clients"]["max"], world["clients"]["rob"]
    made = make_set(manager, world["science"].uid)
    page = text(manager.get(f"/console/evaluation/{made.uid}/"))
    assert "Science questions" in page and "No question yet" in page
    # A library they only read is not one to choose.
    refused = manager.post("/console/evaluation/", {"name": "Theirs", "library": world["other"].uid})
    assert refused.status_code == 400 and "choose one of your libraries" in text(refused)
    listed = text(manager.get("/console/evaluation/"))
    assert 'value="' + world["other"].uid + '"' not in listed
    for address in ("/console/evaluation/", f"/console/evaluation/{made.uid}/"):
        response = reader.get(address)
        assert response.status_code == 403 and "you manage none" in text(response)
    assert manager.get("/console/evaluation/set_nope/").status_code == 404


def test_a_hit_in_the_playground_answers_the_question(world: dict[str, Any]) -> None:
    manager = world["clients"]["max"]
    made = make_set(manager, world["science"].uid)
    playground = f"/console/playground/?q=cash+flow+statement+financing&library={world['science'].uid}"
    page = text(manager.get(playground))
    assert page.count("Answers the question") >= 1
    chunk = Chunk.objects.get(item__source="report", library=world["science"], page=2)
    assert f'name="chunk" value="{chunk.uid}"' in page
    answered = manager.post(
        "/console/evaluation/answers",
        {
            "set": made.uid,
            "chunk": chunk.uid,
            "question": "cash flow statement financing",
            "next": playground,
        },
    )
    assert answered.status_code == 302 and answered["Location"] == playground
    evidence = Evidence.objects.get(question__evaluation_set=made)
    assert evidence.item == chunk.item and evidence.pages == [2]
    assert "is answered by page 2 of" in text(manager.get(playground))
    # A passage of another library does not answer a question of this set; an address elsewhere
    # is not followed.
    elsewhere = Chunk.objects.filter(library=world["other"]).first()
    assert elsewhere is not None
    refused = manager.post(
        "/console/evaluation/answers",
        {"set": made.uid, "chunk": elsewhere.uid, "question": "tides", "next": "https://evil.example/"},
    )
    assert refused["Location"] == "/console/playground/"
    assert "not in the set&#x27;s library" in text(manager.get("/console/playground/"))
    # A reader is offered no set and may not post to one.
    assert "Answers the question" not in text(world["clients"]["rob"].get(playground))
    assert world["clients"]["rob"].post("/console/evaluation/answers", {"set": made.uid}).status_code == 403


def test_imports_report_the_rows_they_refused(world: dict[str, Any]) -> None:
    manager = world["clients"]["max"]
    made = make_set(manager, world["science"].uid)
    csv_file = SimpleUploadedFile(
        "set.csv",
        b"question,item\nwhere does lava erupt from,volcano\n=1+2,bees\nwhat is this,nowhere\n",
    )
    response = manager.post(f"/console/evaluation/{made.uid}/import", {"files": csv_file})
    page = text(response)
    assert response.status_code == 200 and "Added 1 question; refused 2." in page
    assert "set.csv row 3" in page and "a formula cell" in page and "unknown item &#x27;nowhere&#x27;" in page
    beir = [
        SimpleUploadedFile("queries.jsonl", b'{"_id": "q1", "text": "why do tides rise"}\n'),
        SimpleUploadedFile("corpus.jsonl", b"not read"),
        SimpleUploadedFile("train.tsv", b"query-id\tcorpus-id\tscore\nq1\ttides\t1\n"),
    ]
    response = manager.post(f"/console/evaluation/{made.uid}/import", {"files": beir, "split": "train"})
    assert "Added 1 question; refused 0." in text(response)
    assert made.questions.count() == 2
    nothing = manager.post(
        f"/console/evaluation/{made.uid}/import", {"files": SimpleUploadedFile("a.txt", b"x")}
    )
    assert nothing.status_code == 400 and "Choose a CSV or JSONL file" in text(nothing)


def test_a_run_from_the_form_is_queued_run_by_the_worker_compared_and_exported(world: dict[str, Any]) -> None:
    manager = world["clients"]["max"]
    made = make_set(manager, world["science"].uid)
    rows = "question,item,pages\nwhere does lava erupt from,volcano,\nwhy do tides rise and fall,tides,\n"
    rows += "which statement shows cash from financing activities,report,2\n"
    manager.post(
        f"/console/evaluation/{made.uid}/import", {"files": SimpleUploadedFile("s.csv", rows.encode())}
    )

    bad = manager.post(f"/console/evaluation/{made.uid}/runs", {"legs": ["fulltext"], "alpha": "2"})
    assert bad.status_code == 400 and "alpha must be between 0 and 1" in text(bad)
    started = manager.post(
        f"/console/evaluation/{made.uid}/runs", {"legs": ["fulltext"], "limit": "10", "label": "keywords"}
    )
    assert started.status_code == 302
    first = Run.objects.get(label="keywords")
    assert started["Location"] == f"/console/runs/{first.uid}/"
    assert DBTaskResult.objects.filter(args_kwargs__kwargs={"run_uid": first.uid}).exists()
    waiting = text(manager.get(f"/console/runs/{first.uid}/?part=progress"))
    assert "0 of 3 questions" in waiting and 'hx-trigger="every 1s"' in waiting

    tasks.run_evaluation.call(run_uid=first.uid)
    done = manager.get(f"/console/runs/{first.uid}/?part=progress")
    assert done["HX-Refresh"] == "true" and "3 of 3" in text(done)
    page = text(manager.get(f"/console/runs/{first.uid}/"))
    assert re.search(r"<th scope=\"col\" class=\"num\">success@1</th>", page)
    assert "which statement shows cash from financing activities" in page

    manager.post(
        f"/console/evaluation/{made.uid}/runs", {"legs": ["fulltext"], "limit": "1", "label": "one hit"}
    )
    second = Run.objects.get(label="one hit")
    # Cancelled before the worker took it: nothing runs.
    assert manager.post(f"/console/runs/{second.uid}/cancel").status_code == 302
    assert Run.objects.get(pk=second.pk).status == RunStatus.CANCELLED
    # A run whose worker went silent offers to resume; resumed, it is queued again.
    Run.objects.filter(pk=second.pk).update(
        status=RunStatus.RUNNING, heartbeat_at=timezone.now() - timedelta(minutes=5)
    )
    progress = text(manager.get(f"/console/runs/{second.uid}/?part=progress"))
    assert "No word from its worker for two minutes" in progress and "Resume the run" in progress
    assert manager.post(f"/console/runs/{second.uid}/resume").status_code == 302
    assert DBTaskResult.objects.filter(args_kwargs__kwargs={"run_uid": second.uid}).count() == 2
    tasks.run_evaluation.call(run_uid=second.uid)
    assert Run.objects.get(pk=second.pk).status == RunStatus.DONE
    manager.post(
        f"/console/evaluation/{made.uid}/runs", {"legs": ["vector"], "limit": "10", "label": "meaning"}
    )
    third = Run.objects.get(label="meaning")
    tasks.run_evaluation.call(run_uid=third.uid)

    set_page = text(manager.get(f"/console/evaluation/{made.uid}/"))
    assert "<polyline" in set_page and "keywords" in set_page and "meaning" in set_page
    compared = manager.get(
        f"/console/evaluation/{made.uid}/compare", {"a": first.uid, "b": third.uid, "show": "all"}
    )
    page = text(compared)
    assert compared.status_code == 200 and "Paired randomisation test on nDCG@10" in page
    assert page.count('class="change ') == 3
    same = manager.get(f"/console/evaluation/{made.uid}/compare", {"a": first.uid, "b": first.uid})
    assert same.status_code == 400 and "two different finished runs" in text(same)

    exported = manager.get(f"/console/runs/{first.uid}/answers.csv")
    assert exported["Content-Type"].startswith("text/csv")
    lines = b"".join(exported.streaming_content).decode().splitlines()
    assert lines[0].startswith("question,rank,ndcg@10") and len(lines) == 4
    assert world["clients"]["rob"].get(f"/console/runs/{first.uid}/").status_code == 403
