"""The files a Source holds now: a directory's (walked like `ingest` walks one: hidden files and
symlinked directories passed over, a symlink leading outside skipped), a git working tree's
committed files (`git ls-tree` at HEAD, read with one `git cat-file --batch`), or an S3 prefix's
objects (s3_objects.py). Each file comes with a fingerprint — its size and modification time, its
git blob id, its object's ETag — so a sync reads only files whose fingerprint changed.
gitignore-style include/exclude patterns (pathspec) narrow them all."""

from __future__ import annotations

import functools
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path

import pathspec

from mnemosyne.ingestion import formats
from mnemosyne.ingestion.inputs import InputFile, Skipped, discover, too_large
from mnemosyne.ingestion.sync.listings import Listed, Listing, SourceUnavailable
from mnemosyne.ingestion.sync.s3_objects import s3_objects
from mnemosyne.ingestion.sync.web_pages import web_pages
from mnemosyne.library.models import Source

GIT_TIMEOUT_SECONDS = 120


def list_files(source: Source) -> Listing:
    suffixes = formats.suffixes_for(source.collection.library.library_type)
    keep = _patterns(source.include, source.exclude)
    if source.kind == Source.Kind.GIT:
        return _git(Path(source.location), suffixes, keep)
    if source.kind == Source.Kind.S3:
        return s3_objects(source.location, suffixes, keep)
    if source.kind == Source.Kind.WEB:
        return web_pages(
            source.location,
            max_pages=source.max_pages,
            max_depth=source.max_depth,
            manifest=source.manifest or {},
            keep=keep,
        )
    return _directory(Path(source.location), suffixes, keep)


def _patterns(include: Sequence[str], exclude: Sequence[str]) -> Callable[[str], bool]:
    included = pathspec.GitIgnoreSpec.from_lines(include) if include else None
    excluded = pathspec.GitIgnoreSpec.from_lines(exclude)

    def keep(relative: str) -> bool:
        if included is not None and not included.match_file(relative):
            return False
        return not excluded.match_file(relative)

    return keep


def _directory(root: Path, suffixes: set[str], keep: Callable[[str], bool]) -> Listing:
    if not root.is_dir():
        raise SourceUnavailable(f"{root} is not a directory (or cannot be read)")
    listing = Listing(files={}, skipped=[])
    for entry in discover([root], suffixes):
        if isinstance(entry, Skipped):
            if keep(_relative(entry.path, root)):
                listing.skipped.append(entry)
            continue
        if not keep(_relative(entry.path, root)):
            continue
        try:
            stat = entry.path.stat()
        except OSError as exc:
            listing.skipped.append(Skipped(entry.path, f"cannot read: {exc.strerror or exc}"))
            continue
        oversize = too_large(stat.st_size)
        if oversize:
            listing.skipped.append(Skipped(entry.path, oversize))
            continue
        listing.files[entry.source] = Listed(
            entry.source, f"{stat.st_size}:{stat.st_mtime_ns}", _reader(entry)
        )
    return listing


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.name


def _reader(entry: InputFile) -> Callable[[], bytes]:
    return entry.path.read_bytes


def _git(root: Path, suffixes: set[str], keep: Callable[[str], bool]) -> Listing:
    if not root.is_dir():
        raise SourceUnavailable(f"{root} is not a directory (or cannot be read)")
    top = _run_git(root, "rev-parse", "--show-toplevel")
    if top is None:
        raise SourceUnavailable(f"{root} is not a git repository")
    commit = _run_git(root, "rev-parse", "--verify", "-q", "HEAD^{commit}")
    listing = Listing(files={}, skipped=[], commit=commit or "")
    if not commit:
        return listing  # a repository without commits holds no files yet
    tree = _run_git(root, "ls-tree", "-r", "-z", "-l", "--full-tree", "HEAD")
    base = Path(top).name
    blobs: dict[str, str] = {}
    for record in (tree or "").split("\0"):
        if not record:
            continue
        meta, _, path = record.partition("\t")
        mode, kind, blob, size = meta.split()
        if kind != "blob" or mode == "120000":  # submodules and symlinks are not documents
            continue
        if Path(path).suffix.lower() not in suffixes or any(part.startswith(".") for part in path.split("/")):
            continue
        if not keep(path):
            continue
        oversize = too_large(int(size))
        if oversize:
            listing.skipped.append(Skipped(Path(top) / path, oversize))
        else:
            blobs[f"{base}/{path}"] = blob
    contents = _BlobReader(Path(top))
    for name, blob in blobs.items():
        listing.files[name] = Listed(name, blob, functools.partial(contents.read, blob))
    return listing


def _run_git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, timeout=GIT_TIMEOUT_SECONDS
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip("\n") if done.returncode == 0 else None


class _BlobReader:
    """Blobs by id through one `git cat-file --batch` process, started on the first read."""

    def __init__(self, top: Path) -> None:
        self.top = top
        self.process: subprocess.Popen[bytes] | None = None

    def read(self, blob: str) -> bytes:
        if self.process is None:
            self.process = subprocess.Popen(
                ["git", "-C", str(self.top), "cat-file", "--batch"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
            )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(f"{blob}\n".encode())
        self.process.stdin.flush()
        header = self.process.stdout.readline().split()
        if len(header) != 3 or header[1] != b"blob":
            raise OSError(f"git cannot read blob {blob}")
        data = self.process.stdout.read(int(header[2]))
        self.process.stdout.read(1)  # the newline after the content
        return data

    def __del__(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
