"""Instructions a profile declares a question may carry, and the question without them.

A question written for an analyst often carries instructions beside its content ("Round your
answer to two decimal places.", "Answer in USD millions.", "You are a financial analyst."). Their
words are rare in the documents and blur the vector. A profile may declare such phrases; a
question then loses a declared phrase only where the phrase is a whole segment of it — a sentence,
a clause ended by ":" or ";", or a parenthesis — so a content word is never cut: "How do I round
to the nearest integer in a spreadsheet formula?" holds no segment that is an instruction, and
keeps every word. Under a profile that declares none (the general one), nothing is ever removed.

A phrase is written as words, with `[optional words]`, `(one|or another)` and `{number}` (digits
or a number word). Pure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

_NUMBER = r"(?:\d+(?:\.\d+)?|one|two|three|four|five|six|seven|eight|nine|ten|zero)"
# A segment ends at a sentence's end, a clause's ":" or ";", a parenthesis or a line break.
_SEGMENT = re.compile(r"\([^()\n]*\)[.?!:;]*|[^.?!:;()\n]+[.?!:;]*|[.?!:;()\n]")
_SPACES = re.compile(r"\s+")
# Where a parenthesis went, the space before it is left before the sentence's end.
_BEFORE_PUNCTUATION = re.compile(r"\s+([.?!:;,])")
MAX_PHRASES = 500


class InstructionsRefused(ValueError):
    """A phrase that cannot be read; the message names its line."""


@dataclass(frozen=True)
class Instructions:
    """A profile's declared phrases, compiled; each matches a whole segment."""

    name: str
    phrases: tuple[str, ...]
    patterns: tuple[re.Pattern[str], ...]


def compile_phrases(name: str, text: str) -> Instructions:
    phrases: list[str] = []
    patterns: list[re.Pattern[str]] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        try:
            patterns.append(re.compile(rf"^\s*(?:{_pattern(line)})\s*[.?!:;]*\s*$", re.IGNORECASE))
        except (re.error, ValueError) as exc:
            raise InstructionsRefused(f"{name}, line {number}: {exc}") from None
        phrases.append(line)
    if len(phrases) > MAX_PHRASES:
        raise InstructionsRefused(f"{name}: {len(phrases)} phrases; at most {MAX_PHRASES}")
    return Instructions(name, tuple(phrases), tuple(patterns))


def _pattern(phrase: str) -> str:
    """The phrase's regular expression: its words literal, [..] optional, (a|b) alternatives."""
    out: list[str] = []
    depth = 0
    for token in re.findall(r"\{number\}|[\[\]()|]|[^\s\[\]()|{}]+|\s+|[{}]", phrase):
        if token == "{number}":
            out.append(_NUMBER)
        elif token in "{}":
            raise ValueError("'{' and '}' only in {number}")
        elif token == "[":
            out.append("(?:")
            depth += 1
        elif token == "]":
            out.append(r"\s*)?")
            depth -= 1
        elif token == "(":
            out.append("(?:")
            depth += 1
        elif token == ")":
            out.append(")")
            depth -= 1
        elif token == "|":
            out.append("|")
        elif token.isspace():
            out.append(r"\s*")
        else:
            out.append(re.escape(token) + (r"\b" if token[-1].isalnum() else ""))
        if depth < 0:
            raise ValueError("a closing bracket without its opening one")
    if depth:
        raise ValueError("an opening bracket without its closing one")
    return "".join(out)


@dataclass(frozen=True)
class Stripped:
    text: str
    # The segments removed, as the question had them.
    removed: tuple[str, ...] = ()


def strip(question: str, declared: Sequence[Instructions]) -> Stripped:
    """The question without the segments that are a declared phrase (the whole question when that
    would leave nothing to search for)."""
    if not declared:
        return Stripped(question)
    kept: list[str] = []
    removed: list[str] = []
    for segment in _SEGMENT.findall(question):
        body = segment.strip()
        after = ""
        if body.startswith("(") and ")" in body:
            # A parenthesis goes; the punctuation after it stays with the sentence it ends.
            body, after = body[1 : body.index(")")], body[body.index(")") + 1 :]
        if body and any(
            pattern.match(body) for instructions in declared for pattern in instructions.patterns
        ):
            removed.append(segment.strip()[: len(segment.strip()) - len(after)])
            kept.append(after)
        else:
            kept.append(segment)
    if not removed:
        return Stripped(question)
    text = _BEFORE_PUNCTUATION.sub(r"\1", _SPACES.sub(" ", "".join(kept))).strip(" ,;:")
    if sum(char.isalnum() for char in text) < 3:
        return Stripped(question)
    return Stripped(text, tuple(removed))
