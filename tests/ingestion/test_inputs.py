"""Which files a walk considers: include/exclude globs, hidden files, URLs among the arguments."""

from __future__ import annotations

from pathlib import Path

import pytest

from mnemosyne.ingestion.formats import suffixes_for
from mnemosyne.ingestion.inputs import InputFile, Skipped, collect_inputs, discover, is_url, matches_glob

# What a walk into a documentation library takes in (source code is for code libraries only).
SUFFIXES = suffixes_for("documentation")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    for relative in [
        "index.md",
        "notes.txt",
        "script.py",
        "guides/setup.md",
        "guides/deep/tuning.md",
        "guides/deep/data.txt",
        "drafts/idea.md",
        "drafts/old/plan.md",
        "archive/drafts/kept.md",
        ".hidden/secret.md",
        ".env.md",
    ]:
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {relative}\n")
    return root


def _sources(root: Path, include: list[str] | None = None, exclude: list[str] | None = None) -> list[str]:
    found = discover([root], SUFFIXES, include=include or (), exclude=exclude or ())
    return [entry.source for entry in found if isinstance(entry, InputFile)]


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("*.md", "a.md", True),
        ("*.md", "x/y/a.md", True),
        ("*.md", "a.txt", False),
        ("drafts/**", "drafts/a.md", True),
        ("drafts/**", "drafts/x/a.md", True),
        ("drafts/**", "x/drafts/a.md", False),
        ("drafts", "x/drafts/a.md", True),
        ("/drafts", "x/drafts/a.md", False),
        ("**/*.md", "a.md", True),
        ("**/*.md", "x/y/a.md", True),
        ("guides/**/*.md", "guides/a.md", True),
        ("guides/**/*.md", "guides/x/y/a.md", True),
        ("guides/*.md", "guides/x/a.md", False),
        ("guides/*.md", "guides/x.md/a.txt", True),
        ("?.md", "ab.md", False),
        ("[a-c]*.txt", "b1.txt", True),
        ("[!a-c]*.txt", "b1.txt", False),
        ("a[.md", "a[.md", True),
        ("", "a.md", False),
    ],
)
def test_globs_match_paths_relative_to_the_root(pattern: str, path: str, expected: bool) -> None:
    assert matches_glob(pattern, path) is expected


def test_a_walk_without_globs_takes_every_visible_file(tree: Path) -> None:
    assert _sources(tree) == [
        "kb/archive/drafts/kept.md",
        "kb/drafts/idea.md",
        "kb/drafts/old/plan.md",
        "kb/guides/deep/data.txt",
        "kb/guides/deep/tuning.md",
        "kb/guides/setup.md",
        "kb/index.md",
        "kb/notes.txt",
    ]


def test_include_keeps_only_matching_files_at_any_depth(tree: Path) -> None:
    assert _sources(tree, include=["*.txt"]) == ["kb/guides/deep/data.txt", "kb/notes.txt"]


def test_exclude_with_double_star_removes_a_directory_below_the_root_only(tree: Path) -> None:
    sources = _sources(tree, include=["*.md"], exclude=["drafts/**"])
    assert sources == [
        "kb/archive/drafts/kept.md",
        "kb/guides/deep/tuning.md",
        "kb/guides/setup.md",
        "kb/index.md",
    ]


def test_include_and_exclude_are_repeatable(tree: Path) -> None:
    sources = _sources(tree, include=["guides/**", "index.md"], exclude=["*.txt", "deep"])
    assert sources == ["kb/guides/setup.md", "kb/index.md"]


def test_excluded_files_are_not_reported_as_skipped(tree: Path) -> None:
    found = list(discover([tree], SUFFIXES, include=["*.md"], exclude=["drafts"]))
    assert not [entry for entry in found if isinstance(entry, Skipped)]
    unfiltered = list(discover([tree], SUFFIXES))
    assert [entry.path.name for entry in unfiltered if isinstance(entry, Skipped)] == ["script.py"]


def test_a_file_named_on_its_own_ignores_the_globs(tree: Path) -> None:
    found = list(discover([tree / "notes.txt"], SUFFIXES, include=["*.md"], exclude=["*.txt"]))
    assert found == [InputFile(path=(tree / "notes.txt").resolve(), source="notes.txt")]


def test_arguments_are_split_into_urls_paths_and_directories(tree: Path) -> None:
    inputs = collect_inputs(
        ["https://example.com/a.html", str(tree), tree / "index.md", "ftp://example.com/x", "missing"],
        SUFFIXES,
    )
    assert inputs.urls == ["https://example.com/a.html", "ftp://example.com/x"]
    assert inputs.directories == [tree.resolve()]
    assert [entry.reason for entry in inputs.skipped if entry.path == Path("missing")] == [
        "no such file or directory"
    ]
    assert "index.md" in [f.source for f in inputs.files]


def test_only_scheme_prefixed_strings_are_urls() -> None:
    assert is_url("http://example.com")
    assert is_url("HTTPS://example.com/x.pdf")
    assert not is_url("docs/http:notes.md")
    assert not is_url(Path("https://example.com"))
