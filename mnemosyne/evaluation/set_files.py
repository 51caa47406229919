"""Evaluation set files read into rows, whatever their layout and encoding: the BEIR layout
`evaluate` reads (queries.jsonl and a qrels/<split>.tsv), CSV (a header row naming question, item,
and optionally pages, chunk, grade; a row per question) and JSONL (an object per line:
{"question": …, "evidence": [{"item": …, "pages": [3, 4], "chunk": …, "grade": 2}]}, or with
"item", "pages", "chunk", "grade" beside the question for one piece of evidence).

Text that is not UTF-8 is read as ingestion reads text files (text_encodings; the report says so);
a row that cannot be read is refused with where and why, the others are read (set_imports.py
checks them against the library)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from dataclasses import dataclass, field

from mnemosyne.ingestion.documents import UnreadableFile
from mnemosyne.ingestion.text_encodings import decode_text_as
from mnemosyne.library.errors import InvalidArgument

CSV_COLUMNS = ("question", "item", "pages", "chunk", "grade")
MAX_GRADE = 100


@dataclass(frozen=True)
class EvidenceRef:
    item: str
    pages: tuple[int, ...] = ()
    chunk: str = ""
    grade: int = 1


@dataclass
class Row:
    where: str
    question: str
    origin: str = ""
    evidence: list[EvidenceRef] = field(default_factory=list)
    # Cells as written (CSV), for the formula check.
    cells: list[str] = field(default_factory=list)


@dataclass
class Read:
    rows: list[Row] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def decoded(data: bytes, name: str, read: Read) -> str:
    """The file's text, read as ingestion reads text files (text_encodings: UTF-8, else the likeliest
    legacy encoding), the encoding noted when not UTF-8; InvalidArgument when it is not text."""
    try:
        text, encoding = decode_text_as(data)
    except UnreadableFile:
        raise InvalidArgument(f"{name} is not text in any encoding this import can read") from None
    if encoding != "utf-8":
        read.notes.append(f"{name} is not UTF-8; it was read as {encoding}")
    return text


def read_csv(data: bytes, name: str) -> Read:
    read = Read()
    text = decoded(data, name, read)
    try:
        dialect: type[csv.Dialect] | csv.Dialect = csv.Sniffer().sniff(text[:4096], delimiters=",;\t")
    except csv.Error:
        dialect = csv.excel
    reader = csv.reader(io.StringIO(text, newline=""), dialect)
    header = [cell.strip().lower() for cell in next(reader, [])]
    if "question" not in header or "item" not in header:
        raise InvalidArgument(
            f"{name}: the first row must name the columns, with at least question and item "
            f"(of {', '.join(CSV_COLUMNS)})"
        )
    unknown = [column for column in header if column and column not in CSV_COLUMNS]
    if unknown:
        raise InvalidArgument(
            f"{name}: unknown columns {', '.join(unknown)} (known: {', '.join(CSV_COLUMNS)})"
        )
    for number, cells in enumerate(reader, start=2):
        if not any(cell.strip() for cell in cells):
            continue
        where = f"{name} row {number}"
        values = dict(zip(header, cells, strict=False))
        try:
            evidence = [
                EvidenceRef(
                    item=values.get("item", "").strip(),
                    pages=parse_pages(values.get("pages", "")),
                    chunk=values.get("chunk", "").strip(),
                    grade=parse_grade(values.get("grade", "")),
                )
            ]
        except ValueError as exc:
            read.refused.append((where, str(exc)))
            continue
        read.rows.append(
            Row(where=where, question=values.get("question", ""), evidence=evidence, cells=cells)
        )
    return read


def read_jsonl(data: bytes, name: str) -> Read:
    read = Read()
    for number, line in enumerate(decoded(data, name, read).splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{name} line {number}"
        try:
            record = json.loads(line)
            if not isinstance(record, dict):
                raise ValueError("not a JSON object")
            given = record.get("evidence")
            if given is None:
                given = [{key: record[key] for key in ("item", "pages", "chunk", "grade") if key in record}]
            if not isinstance(given, list):
                raise ValueError('"evidence" must be a list of objects')
            evidence = [_evidence(entry) for entry in given]
            question = record.get("question")
            if not isinstance(question, str):
                raise ValueError('"question" must be text')
        except (ValueError, TypeError) as exc:
            read.refused.append(
                (where, str(exc) if not isinstance(exc, json.JSONDecodeError) else "not JSON")
            )
            continue
        read.rows.append(
            Row(where=where, question=question, origin=str(record.get("id", "")), evidence=evidence)
        )
    return read


def read_beir(queries: bytes, qrels: bytes, *, queries_name: str, qrels_name: str) -> Read:
    """A row per judged query, its relevant corpus ids (score > 0) its evidence, item by item."""
    read = Read()
    texts: dict[str, tuple[str, str]] = {}
    for number, line in enumerate(decoded(queries, queries_name, read).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            texts[str(record["_id"])] = (f"{queries_name} line {number}", str(record.get("text", "")))
        except (ValueError, KeyError, TypeError):
            read.refused.append((f"{queries_name} line {number}", "not a query ({_id, text})"))
    judged: dict[str, list[EvidenceRef]] = {}
    for number, cells in enumerate(
        csv.reader(io.StringIO(decoded(qrels, qrels_name, read)), delimiter="\t"), 1
    ):
        if not cells or cells[0] == "query-id":
            continue
        where = f"{qrels_name} line {number}"
        if len(cells) < 3:
            read.refused.append((where, "not query-id, corpus-id, score"))
            continue
        try:
            grade = parse_grade(cells[2])
        except ValueError as exc:
            read.refused.append((where, str(exc)))
            continue
        if cells[0] not in texts:
            read.refused.append((where, f"no query {cells[0]!r} in {queries_name}"))
            continue
        if grade > 0:
            judged.setdefault(cells[0], []).append(EvidenceRef(item=cells[1].strip(), grade=grade))
    for query_id, evidence in judged.items():
        where, text = texts[query_id]
        read.rows.append(Row(where=where, question=text, origin=query_id, evidence=evidence))
    unjudged = len(texts) - len(judged)
    if unjudged:
        read.notes.append(f"{unjudged} queries have no relevant judgement in {qrels_name} and were left out")
    return read


def parse_pages(text: object) -> tuple[int, ...]:
    """ "3", "3;5", "3-5", "3, 7-8" (or a JSON list of numbers) as page numbers from 1."""
    if isinstance(text, list):
        parts: Iterable[str] = [str(part) for part in text]
    else:
        parts = str(text or "").replace(",", ";").split(";")
    pages: list[int] = []
    for part in (part.strip() for part in parts):
        if not part:
            continue
        low, _, high = part.partition("-")
        if not low.strip().isdigit() or (high and not high.strip().isdigit()):
            raise ValueError(f"pages must be page numbers like 3, 3;5 or 3-5; got {part!r}")
        first, last = int(low), int(high or low)
        if first < 1 or last < first or last - first > 1000:
            raise ValueError(f"pages must be page numbers like 3, 3;5 or 3-5; got {part!r}")
        pages.extend(range(first, last + 1))
    return tuple(sorted(set(pages)))


def parse_grade(text: object) -> int:
    if text is None or (isinstance(text, str) and not text.strip()):
        return 1
    try:
        grade = int(str(text).strip())
    except ValueError:
        raise ValueError(f"grade must be a whole number from 0 to {MAX_GRADE}; got {text!r}") from None
    if not 0 <= grade <= MAX_GRADE:
        raise ValueError(f"grade must be a whole number from 0 to {MAX_GRADE}; got {text!r}")
    return grade


def _evidence(entry: object) -> EvidenceRef:
    if not isinstance(entry, dict) or not isinstance(entry.get("item"), str):
        raise ValueError('each piece of evidence needs "item": an item uid or source')
    chunk = entry.get("chunk") or ""
    if not isinstance(chunk, str):
        raise ValueError('"chunk" must be a chunk uid')
    return EvidenceRef(
        item=entry["item"].strip(),
        pages=parse_pages(entry.get("pages") or ""),
        chunk=chunk.strip(),
        grade=parse_grade(entry.get("grade")),
    )
