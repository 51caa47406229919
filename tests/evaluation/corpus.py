"""A small library for evaluation tests: short texts, and one paged document (three pages); and
an evaluation set of seven questions over it."""

from __future__ import annotations

from mnemosyne.embedding import get_embedder
from mnemosyne.evaluation.models import EvaluationSet
from mnemosyne.evaluation.services import create_set
from mnemosyne.evaluation.set_imports import import_file
from mnemosyne.ingestion.documents import DocumentInput, ParsedDocument
from mnemosyne.ingestion.outcomes import content_hash
from mnemosyne.ingestion.pipeline import ingest_documents
from mnemosyne.library.models import Library, LibraryType
from mnemosyne.library.services import ensure_collection, ensure_library
from mnemosyne.storage import get_chunk_store

# Five short texts, each the obvious answer to its own question (tests/search/test_evaluate_command.py
# loads them as a BEIR corpus too).
SCIENCE = {
    "tides": (
        "Ocean tides",
        "Tides rise and fall twice a day because the moon's gravity pulls on the oceans.",
    ),
    "leaves": (
        "Photosynthesis",
        "Green leaves turn sunlight, water and carbon dioxide into sugar and oxygen.",
    ),
    "volcano": ("Volcanoes", "Magma rises through the crust and erupts as lava from a volcano's vent."),
    "bees": ("Pollination", "Honey bees carry pollen between flowers while they collect nectar."),
    "glacier": (
        "Glaciers",
        "Compacted snow becomes glacier ice that slowly flows downhill under its weight.",
    ),
}
TEXTS = {
    **SCIENCE,
    "formula": ('=HYPERLINK("http://x")', "A document whose title a spreadsheet would run as a formula."),
}
# Each page a section of its own (a heading): a page's words are found on that page.
FILLER = "The report goes on in ordinary words that no question here asks about. " * 10
PAGES = tuple(
    f"# {heading}\n\n{opening}\n{FILLER}\n\n"
    for heading, opening in (
        ("Balance sheet", "The balance sheet lists assets, liabilities and equity at the year's end."),
        (
            "Cash flows",
            "The cash flow statement shows cash from operating, investing and financing activities.",
        ),
        ("Income", "The income statement shows revenue, cost of sales and net income for the year."),
    )
)


def make_library(name: str = "Evaluation corpus") -> Library:
    library = ensure_library(name=name, library_type=LibraryType.RESEARCH)
    collection = ensure_collection(library=library, name="corpus")
    documents = [
        DocumentInput(
            source=source,
            parsed=ParsedDocument(title=title, item_type="text", text=text, markdown=False),
            digest=content_hash(text.encode()),
        )
        for source, (title, text) in TEXTS.items()
    ]
    text = "".join(PAGES)
    starts = tuple(sum(len(page) for page in PAGES[:index]) for index in range(len(PAGES)))
    documents.append(
        DocumentInput(
            source="report",
            parsed=ParsedDocument(
                title="Annual report", item_type="document", text=text, markdown=True, page_starts=starts
            ),
            digest=content_hash(text.encode()),
        )
    )
    for _ in ingest_documents(
        collection=collection, documents=documents, embedder=get_embedder(), store=get_chunk_store()
    ):
        pass
    return library


# Five answered by a short text, one by a page of the report, one by nothing in the library.
QUESTIONS = (
    "question,item,pages\n"
    "why do ocean tides rise and fall,tides,\n"
    "how do green leaves make sugar from sunlight,leaves,\n"
    "where does lava erupt from,volcano,\n"
    "what do honey bees carry between flowers,bees,\n"
    "how does glacier ice flow downhill,glacier,\n"
    "which statement shows cash from financing activities,report,2\n"
    "a question about nothing in this library at all,glacier,\n"
)


def science_set() -> EvaluationSet:
    """The set "Science" of QUESTIONS' seven questions, over a new make_library()."""
    made = create_set(name="Science", library=make_library())
    report = import_file(made, {"set.csv": QUESTIONS.encode()})
    assert report.added == 7, report.refused
    return made
