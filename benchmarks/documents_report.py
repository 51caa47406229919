"""The Markdown sections of the real-document parts of a run: the manuals, the PDF extractors, the
formats' samples, a synced directory, OCR (pure)."""

from __future__ import annotations

from statistics import median

from benchmarks.cells import number, verdict
from benchmarks.documents_results import DocumentsResult, ExtractorRun, FormatAnswer, OcrRun, SyncResult


def documents(documents: DocumentsResult) -> list[str]:
    lines = [
        f"### Real documents ({len(documents.manuals)} Debian PDF manuals, {documents.pages} pages)",
        "",
        "| manual | pages | bookmarks | text chunks | under 50 chars | with a ligature "
        "| run-together words | without a section |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for m in documents.manuals:
        unsectioned = "—" if m.bookmarks else str(m.without_section)
        lines.append(
            f"| {m.name} | {m.pages} | {'yes' if m.bookmarks else 'no'} | {m.chunks} | {m.under_50_chars} "
            f"| {m.with_ligature} | {m.run_together} | {unsectioned} |"
        )
    lines += [
        "",
        f"Questions answered on the cited pages of the first three hits (success@3): "
        f"**{documents.found_at_3} of {documents.questions}** ({documents.success_at_3:.0%}).",
        "",
    ]
    if documents.misses:
        lines += ["Missed:", "", *(f"- {miss}" for miss in documents.misses), ""]
    if documents.stages is not None:
        stages = documents.stages
        lines += [
            f"Ingest of all the manuals (`ingest_paths`): {number(documents.ingest_seconds)} s for "
            f"{documents.ingest_chunks:,} chunks ({number(documents.pages / documents.ingest_seconds)} "
            f"pages/s, {number(documents.ingest_chunks / documents.ingest_seconds)} chunks/s). "
            "Each stage alone, side by side, medians of three rounds:",
            "",
            "| parsing (text, layout, tables) | chunking | embedding | parsing / embedding |",
            "|---|---|---|---|",
            f"| {number(stages.parse, 2)} s | {number(stages.chunk, 2)} s | {number(stages.embed, 2)} s "
            f"| {number(stages.layout_share * 100, 1)} % (target ≤ 20 %: "
            f"{verdict(stages.layout_share <= 0.2)}) |",
            "",
        ]
    return lines


def extractors(runs: list[ExtractorRun]) -> list[str]:
    manuals = sorted({run.manual for run in runs})
    lines = [
        f"### PDF text extraction, plain, without layout analysis ({len(manuals)} manuals)",
        "",
        "| library | pages/s, median over the manuals | slowest manual, pages/s "
        "| tokens over 25 letters (words run together) | ligature characters left |",
        "|---|---|---|---|---|",
    ]
    for library in dict.fromkeys(run.library for run in runs):
        mine = [run for run in runs if run.library == library]
        rates = [run.pages / run.seconds for run in mine if run.seconds > 0]
        lines.append(
            f"| {library} | {number(median(rates), 0)} | {number(min(rates), 0)} "
            f"| {sum(run.run_together for run in mine):,} | {sum(run.ligatures for run in mine):,} |"
        )
    return [*lines, ""]


def formats(answers: list[FormatAnswer]) -> list[str]:
    lines = [
        "### Real samples of the formats (tests/fixtures/formats), one question each",
        "",
        "| file | parsed as | question | rank of the file | cited section | chunk | text |",
        "|---|---|---|---|---|---|---|",
    ]
    escaped_bar = "\\|"
    lines += [
        f"| `{a.filename}` | {a.item_type} | {a.question} | {a.rank or '**not in 10**'} | {a.section or '—'} "
        f"| `{a.chunk_uid}` | {a.preview.replace('|', escaped_bar)} |"
        for a in answers
    ]
    return [*lines, ""]


def sync(sync: SyncResult) -> list[str]:
    return [
        f"### Sources kept in sync ({sync.files:,} Markdown files, a directory source)",
        "",
        "| sync | seconds | share of the full ingest |",
        "|---|---|---|",
        f"| first (the full ingest, {sync.files:,} files added) | {number(sync.full_seconds, 1)} | 100 % |",
        f"| after {sync.changed} files ({sync.changed / sync.files:.0%}) changed "
        f"({sync.incremental_updated} updated) | {number(sync.incremental_seconds, 2)} "
        f"| {sync.incremental_seconds / sync.full_seconds:.1%} |",
        f"| nothing changed | {number(sync.noop_seconds, 2)} | {sync.noop_seconds / sync.full_seconds:.1%} |",
        "",
        f"`sync --watch`, edit on disk → searchable, over {sync.watch_edits} edits: p50 "
        f"{number(sync.watch_p50_seconds, 2)} s, max {number(sync.watch_max_seconds, 2)} s.",
        "",
    ]


def ocr(runs: list[OcrRun]) -> list[str]:
    lines = [
        "### OCR of scanned pages (rendered from the manuals, image-only PDFs)",
        "",
        "| dpi | pages | word accuracy | median page | worst page | pages/s | before splitting run-together "
        "words: word accuracy | run-together words, before → after |",
        "|---|---|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {run.dpi} | {run.pages} | {run.word_accuracy:.1%} | {run.median_page:.1%} "
        f"| {run.worst_page:.1%} | {number(run.pages_per_second, 2)} | {run.word_accuracy_unsplit:.1%} "
        f"| {run.run_together_unsplit:.2%} → {run.run_together:.2%} |"
        for run in runs
    ]
    return [*lines, ""]
