"""Synonym sets in the Solr / Elasticsearch synonym file format, and what they add to a question.

    # a comment
    laptop, notebook computer, portable computer     equivalents: each brings the others
    roa, return on assets => net income, total assets   one way: the left brings the right

Terms are words or phrases, matched whole and without regard to case ("&" belongs to a word:
"p&l", "r&d"; "\\," is a comma inside a term). A question keeps every word it has: a set only
adds terms to what the full-text leg reads and the vector leg embeds (`expand`), and says which
rule fired. Lines that cannot be read are refused one by one, with their number and why, and the
rest kept (`parse`); a set whose rules would expand a term into more than MAX_EXPANSION terms, or
whose `=>` rules run in a circle, is refused whole (`compile_rules`): nothing half-applied. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

# A term expands into at most this many terms (its equivalents and what `=>` adds, followed on).
MAX_EXPANSION = 40
MAX_TERM_CHARS = 100
MAX_TERMS_PER_LINE = 40
MAX_LINES = 20_000
_WORD = re.compile(r"[^\W_]+(?:&[^\W_]+)*|&", re.UNICODE)
_SPLIT = re.compile(r"(?<!\\),")

Term = tuple[str, ...]


def words(text: str) -> Term:
    """A term or a question as the lower-case words sets are matched on."""
    return tuple(match.group(0) for match in _WORD.finditer(text.lower()))


@dataclass(frozen=True)
class Rule:
    line: int
    left: tuple[Term, ...]
    # Empty: the line is a list of equivalents (left).
    right: tuple[Term, ...] = ()

    @property
    def one_way(self) -> bool:
        return bool(self.right)

    def __str__(self) -> str:
        left = ", ".join(" ".join(term) for term in self.left)
        return f"{left} => {', '.join(' '.join(term) for term in self.right)}" if self.right else left


@dataclass(frozen=True)
class Refused:
    line: int
    text: str
    reason: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}: {self.text[:80]!r}"


@dataclass(frozen=True)
class Parsed:
    rules: tuple[Rule, ...]
    refused: tuple[Refused, ...] = ()


class SynonymSetRefused(ValueError):
    """A set that cannot be used as a whole (a circle of `=>`, a term expanding too far, too long)."""


def parse(text: str) -> Parsed:
    """The rules of a synonym file, and each line that could not be read."""
    rules: list[Rule] = []
    refused: list[Refused] = []
    lines = text.splitlines()
    if len(lines) > MAX_LINES:
        raise SynonymSetRefused(f"the set has {len(lines)} lines; at most {MAX_LINES}")
    for number, raw in enumerate(lines, start=1):
        line = raw.split(" #", 1)[0].strip() if not raw.lstrip().startswith("#") else ""
        if not line:
            continue
        problem, rule = _rule(number, line)
        if rule is None:
            refused.append(Refused(number, raw.strip(), problem))
        else:
            rules.append(rule)
    return Parsed(tuple(rules), tuple(refused))


def _rule(number: int, line: str) -> tuple[str, Rule | None]:
    sides = line.split("=>")
    if len(sides) > 2:
        return "more than one '=>'", None
    parsed: list[tuple[Term, ...]] = []
    for side in sides:
        terms: list[Term] = []
        for raw in _SPLIT.split(side):
            text = raw.replace("\\,", ",").strip()
            if not text:
                return "an empty term", None
            if len(text) > MAX_TERM_CHARS:
                return f"a term longer than {MAX_TERM_CHARS} characters", None
            term = words(text)
            if not term:
                return f"{text[:30]!r} has no word in it", None
            terms.append(term)
        if len(terms) > MAX_TERMS_PER_LINE:
            return f"more than {MAX_TERMS_PER_LINE} terms on one line", None
        parsed.append(tuple(dict.fromkeys(terms)))
    if len(parsed) == 1:
        if len(parsed[0]) < 2:
            return "one term alone: nothing to be a synonym of (write 'a, b' or 'a => b')", None
        return "", Rule(number, parsed[0])
    left, right = parsed
    return "", Rule(number, left, right)


def render(rules: Iterable[Rule]) -> str:
    """Rules back in the file format (what `export` writes)."""
    return "".join(f"{rule}\n" for rule in rules)


@dataclass(frozen=True)
class Fired:
    """One rule that added terms to a question: the set, the words matched, what they brought."""

    set_name: str
    matched: str
    added: tuple[str, ...]


@dataclass(frozen=True)
class Compiled:
    """A set's rules as: term → the terms it brings (its equivalents, and the right side of each
    `=>` rule with the term on its left). Rules are applied once, not followed on, as Solr does."""

    name: str
    expansions: dict[Term, tuple[Term, ...]] = field(default_factory=dict)
    longest: int = 0


def compile_rules(name: str, rules: Sequence[Rule]) -> Compiled:
    """Each term's expansion; SynonymSetRefused for a circle of `=>` or a term expanding too far."""
    group = _equivalence_groups(rules)
    members: dict[int, list[Term]] = {}
    for term, root in group.items():
        members.setdefault(root, []).append(term)
    brings: dict[Term, list[Term]] = {term: list(members[root]) for term, root in group.items()}
    edges: dict[int, set[int]] = {}
    for rule in rules:
        if not rule.one_way:
            continue
        for left in rule.left:
            brings[left].extend(rule.right)
            for right in rule.right:
                if group[left] != group[right]:
                    edges.setdefault(group[left], set()).add(group[right])
    _refuse_circles(edges, group)
    expansions: dict[Term, tuple[Term, ...]] = {}
    for term, brought in brings.items():
        others = [other for other in dict.fromkeys(brought) if other != term]
        if len(others) > MAX_EXPANSION:
            raise SynonymSetRefused(
                f"{' '.join(term)!r} would expand into {len(others)} terms; a term may bring at most "
                f"{MAX_EXPANSION} (split the set into narrower rules)"
            )
        if others:
            expansions[term] = tuple(others)
    return Compiled(name, expansions, max((len(term) for term in expansions), default=0))


def _equivalence_groups(rules: Sequence[Rule]) -> dict[Term, int]:
    """Each term's group: equivalents on one line, and lines of equivalents sharing a term, are one
    group."""
    parent: dict[Term, Term] = {}

    def root(term: Term) -> Term:
        parent.setdefault(term, term)
        while parent[term] != term:
            parent[term] = parent[parent[term]]
            term = parent[term]
        return term

    for rule in rules:
        for term in (*rule.left, *rule.right):
            root(term)
        if not rule.one_way:
            first = root(rule.left[0])
            for other in rule.left[1:]:
                other_root = root(other)
                if other_root != first:
                    parent[other_root] = first
    roots: dict[Term, int] = {}
    return {term: roots.setdefault(root(term), len(roots)) for term in list(parent)}


def _refuse_circles(edges: dict[int, set[int]], group: dict[Term, int]) -> None:
    """A chain of `=>` that comes back where it started (a => b, b => a) is a mistake: two terms that
    bring each other are equivalents, written "a, b"."""
    names: dict[int, str] = {}
    for term, node in group.items():
        names.setdefault(node, " ".join(term))
    state: dict[int, int] = {}  # 1: on the path being followed, 2: done

    def visit(node: int, path: list[int]) -> None:
        state[node] = 1
        for following in sorted(edges.get(node, ())):
            if state.get(following) == 1:
                circle = (
                    [*path[path.index(following) :], node, following] if following in path else [node, node]
                )
                shown = " => ".join(names[step] for step in circle)
                raise SynonymSetRefused(f"the '=>' rules run in a circle: {shown}")
            if following not in state:
                visit(following, [*path, node])
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node, [])


def expand(question: str, sets: Sequence[Compiled]) -> tuple[str, list[Fired]]:
    """The question followed by what each set's matching terms bring (longest match first, left to
    right), and the rules that fired. A term the question already holds is not added again."""
    tokens = words(question)
    held = set(tokens)
    fired: list[Fired] = []
    added_text: list[str] = []
    for compiled in sets:
        position = 0
        while position < len(tokens):
            for length in range(min(compiled.longest, len(tokens) - position), 0, -1):
                term = tokens[position : position + length]
                brought = compiled.expansions.get(term)
                if brought is None:
                    continue
                new = [" ".join(other) for other in brought if not set(other) <= held]
                if new:
                    fired.append(Fired(compiled.name, " ".join(term), tuple(new)))
                    added_text.append(", ".join(new))
                    held.update(word for other in brought for word in other)
                position += length - 1
                break
            position += 1
    if not added_text:
        return question, []
    return f"{question} ({'; '.join(added_text)})", fired
