"""The demo's evaluation set: a few questions a newcomer asks of the project's own documentation
(`serve --demo` ingests it), each with the documents that answer it — so the console's evaluation
pages have a set to run and compare from the first `make run`. Made once; never changed after."""

from __future__ import annotations

import json

from mnemosyne.evaluation.models import EvaluationSet
from mnemosyne.evaluation.services import create_set
from mnemosyne.evaluation.set_imports import import_file
from mnemosyne.library.models import Item, Library

NAME = "Demo questions"
# (question, the documents that answer it, by the end of their path)
QUESTIONS = (
    ("How do I compare two evaluation runs of a set?", ("docs/console.md",)),
    ("How long are tool calls kept in the query log?", ("docs/console.md", "README.md")),
    ("How do I give a colleague access to one library only?", ("docs/operations.md",)),
    ("What breaks first when the index grows to millions of chunks?", ("docs/scaling.md",)),
    ("How do I connect Claude Desktop to the server?", ("docs/clients.md", "README.md")),
    ("Which modules may import which, and how is that checked?", ("docs/architecture.md",)),
)


def ensure_demo_set(library: Library) -> EvaluationSet | None:
    """The demo set of the library, made the first time; None when its documents are not there."""
    found = EvaluationSet.objects.filter(name=NAME).first()
    if found is not None:
        return found
    items = {
        ending: item.uid
        for ending in {ending for _, endings in QUESTIONS for ending in endings}
        for item in Item.objects.filter(collection__library=library, source__endswith=ending)[:1]
    }
    lines = [
        json.dumps({"question": question, "evidence": [{"item": items[ending]} for ending in endings]})
        for question, endings in QUESTIONS
        if all(ending in items for ending in endings)
    ]
    if not lines:
        return None
    made = create_set(
        name=NAME,
        library=library,
        description="Questions about the project's documentation, each with the documents that answer it.",
    )
    import_file(made, {"demo.jsonl": "\n".join(lines).encode()})
    return made
