"""Shaping a ranked list before it is returned: near-duplicate collapse, MMR diversity, a size budget.

Pure functions over indices, so they are tested without a database.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import ArrayLike
from scipy import sparse

from mnemosyne.search.units import Located

_WORD = re.compile(r"\w+")
SHINGLE_WORDS = 4
NEAR_DUPLICATE_JACCARD = 0.8
# Up to this many pairs of texts sharing a shingle, they are listed (quicker for a search's head);
# beyond, as with hundreds of copies of one text, the sparse product counts them in bounded memory.
RUN_PAIRS = 50_000


def shingles(text: str, size: int = SHINGLE_WORDS) -> frozenset[tuple[str, ...]]:
    """The text's runs of `size` words (lower-cased); a shorter text is one shingle of all its words."""
    words = _WORD.findall(text.lower())
    if len(words) <= size:
        return frozenset([tuple(words)]) if words else frozenset()
    return frozenset(zip(*(words[start:] for start in range(size)), strict=False))


def jaccard(a: frozenset[tuple[str, ...]], b: frozenset[tuple[str, ...]]) -> float:
    common = len(a & b)
    union = len(a) + len(b) - common
    return 1.0 if union == 0 else common / union


def collapse_near_duplicates(
    texts: Sequence[str], threshold: float = NEAR_DUPLICATE_JACCARD
) -> tuple[list[int], dict[int, list[int]]]:
    """Keep the first of each group of near-identical texts (in the given, best-first order).

    Returns the kept indices and, for each kept index, the indices folded into it: a text folds
    into the first kept one it shares at least `threshold` of their shingles with (Jaccard).

    Every text's shingles are hashed at once (_shingle_hashes) and sorted, each text's once; texts
    that share a shingle are then neighbours in that order, so every pair's shared shingles are
    counted from the runs of equal hashes (up to RUN_PAIRS pairs; beyond, by a sparse product),
    and only the pairs that share any are compared. The same result as comparing the sets pair by
    pair (tests/search/test_shaping.py).
    """
    count = len(texts)
    if count == 0:
        return [], {}
    rows, hashes = _shingle_hashes(texts)
    # Stable: each hash's texts stay in ascending order, as _shingle_hashes lists them.
    order = np.argsort(hashes, kind="stable")
    hashes, rows = hashes[order], rows[order]
    # A shingle occurring twice in a text counts once.
    first = np.ones(len(rows), dtype=bool)
    first[1:] = (hashes[1:] != hashes[:-1]) | (rows[1:] != rows[:-1])
    hashes, rows = hashes[first], rows[first]
    sizes = np.bincount(rows, minlength=count)
    # Texts sharing a shingle are one run of equal hashes, in ascending order.
    run_starts = np.r_[True, hashes[1:] != hashes[:-1]]
    starts = np.flatnonzero(run_starts)
    ends = np.r_[starts[1:], len(hashes)]
    later_in_run = np.repeat(ends, ends - starts) - np.arange(len(hashes)) - 1
    kept: list[int] = []
    folded: dict[int, list[int]] = {}
    if int(later_in_run.sum()) <= RUN_PAIRS:
        before = _similar_in_runs(rows, later_in_run, sizes, threshold)

        def first_similar(index: int) -> int | None:
            earlier = before.get(index)
            return (
                None
                if earlier is None
                else next((kept_index for kept_index in kept if kept_index in earlier), None)
            )

    else:
        similar = _similar_by_product(np.cumsum(run_starts) - 1, rows, sizes, threshold).tolist()

        def first_similar(index: int) -> int | None:
            return next((kept_index for kept_index in kept if similar[index][kept_index]), None)

    for index in range(count):
        match = first_similar(index)
        if match is None:
            kept.append(index)
        else:
            folded.setdefault(match, []).append(index)
    return kept, folded


def _similar_in_runs(
    rows: np.ndarray, later_in_run: np.ndarray, sizes: np.ndarray, threshold: float
) -> dict[int, set[int]]:
    """For each text, the earlier ones it is similar to: every text of a run of equal hashes
    paired with each later one of it, all runs at once, and only the pairs that share a shingle
    compared."""
    count = len(sizes)
    firsts = np.repeat(np.arange(len(rows)), later_in_run)
    seconds = (
        firsts + np.arange(len(firsts)) - np.repeat(np.cumsum(later_in_run) - later_in_run, later_in_run) + 1
    )
    shared = np.bincount(rows[firsts] * count + rows[seconds], minlength=count * count)
    codes = np.flatnonzero(shared)
    common = shared[codes]
    earlier, later = np.divmod(codes, count)
    # Jaccard as a float64 division, as jaccard() computes it.
    near = common / (sizes[earlier] + sizes[later] - common) >= threshold
    before: dict[int, set[int]] = {}
    for one, other in zip(earlier[near].tolist(), later[near].tolist(), strict=True):
        before.setdefault(other, set()).add(one)
    # Two empty texts are identical (their union is empty).
    empty = np.flatnonzero(sizes == 0).tolist()
    for position, index in enumerate(empty[1:], start=1):
        before.setdefault(index, set()).update(empty[:position])
    return before


def _similar_by_product(
    columns: np.ndarray, rows: np.ndarray, sizes: np.ndarray, threshold: float
) -> np.ndarray:
    """Which texts are similar, as a matrix, from the texts-by-shingles matrix (each text's row
    and its shingle's column) times its transpose (scipy's sparse product): for many copies of
    one text, whose pairs would be too many to list."""
    membership = sparse.csr_array(
        (np.ones(len(rows), dtype=np.int32), (rows, columns)), shape=(len(sizes), int(columns[-1]) + 1)
    )
    common = (membership @ membership.T).toarray().astype(np.int64)
    union = sizes[:, None] + sizes[None, :] - common
    # Two empty texts are identical (union 0); otherwise Jaccard as a float64 division.
    similar: np.ndarray = np.divide(common, union, out=np.ones(union.shape), where=union > 0) >= threshold
    return similar


# Odd, so multiplying by it modulo 2**64 loses nothing (Knuth's golden-ratio constant).
_MIX = np.uint64(0x9E3779B97F4A7C15)
# An ASCII text's words as bytes in one pass: letters lower-cased, digits and "_" kept, every
# other byte a space — what _WORD finds in the lower-cased text, about three times quicker.
_ASCII_WORDS = (
    bytes(
        (byte | 0x20 if chr(byte).isalpha() else byte)
        if chr(byte).isalnum() or byte == ord("_")
        else ord(" ")
        for byte in range(128)
    )
    + b" " * 128
)


def _words(text: str) -> list[bytes]:
    """The words shingles() reads (`\\w+` of the lower-cased text), each as its UTF-8 bytes."""
    if text.isascii():
        return text.encode("ascii").translate(_ASCII_WORDS).split()
    return [word.encode() for word in _WORD.findall(text.lower())]


def _shingle_hashes(texts: Sequence[str], size: int = SHINGLE_WORDS) -> tuple[np.ndarray, np.ndarray]:
    """Each shingle (as shingles() forms them, repeats included) as its text's index and a hash.

    A shingle's hash combines its words' hashes, h0·m^(k-1) + h1·m^(k-2) + … modulo 2**64, so
    the runs of every text are hashed at once, vectorised, from one hash per word.
    """
    words = [_words(text) for text in texts]
    lengths = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
    ends = np.cumsum(lengths)
    starts = ends - lengths
    word_hashes = np.fromiter(
        map(hash, itertools.chain.from_iterable(words)), dtype=np.int64, count=int(ends[-1])
    ).view(np.uint64)
    # A text of at least `size` words has its runs of `size`; a shorter one one run of all its words.
    widths = np.minimum(lengths, size)
    runs = np.where(lengths > 0, lengths - widths + 1, 0)
    rows = np.repeat(np.arange(len(words)), runs)
    first_words = np.repeat(starts - np.cumsum(runs) + runs, runs) + np.arange(int(runs.sum()))
    run_widths = widths[rows]
    hashes = word_hashes[first_words]
    with np.errstate(over="ignore"):
        for offset in range(1, size):
            longer = run_widths > offset
            hashes[longer] = hashes[longer] * _MIX + word_hashes[first_words[longer] + offset]
    return rows, hashes


def maximal_marginal_relevance(
    relevance: Sequence[float], vectors: ArrayLike, *, diversity: float, limit: int
) -> list[int]:
    """Order by MMR: argmax (1 - diversity) * relevance - diversity * max similarity to those chosen.

    `relevance` is min-max normalised first; diversity 0 keeps the relevance order; ties go to
    the earlier index. `vectors` holds one row per item; the cosine similarities are computed
    once as one matrix product, so a step costs a vector operation, not a Python loop.
    """
    if not 0.0 <= diversity <= 1.0:
        raise ValueError("diversity must be between 0 and 1")
    count = len(relevance)
    if count == 0:
        return []
    scores = np.asarray(relevance, dtype=np.float64)
    span = scores.max() - scores.min()
    normalised = (scores - scores.min()) / span if span > 0 else np.ones(count)
    matrix = np.asarray(vectors, dtype=np.float64).reshape(count, -1)
    norms = np.linalg.norm(matrix, axis=1)
    unit = matrix / np.where(norms > 0, norms, 1.0)[:, None]
    similarity = unit @ unit.T
    max_similarity = np.zeros(count)
    available = np.ones(count, dtype=bool)
    chosen: list[int] = []
    while len(chosen) < min(limit, count):
        objective = (1 - diversity) * normalised - diversity * max_similarity
        # argmax takes the first of equal maxima: the earlier index wins a tie.
        best = int(np.argmax(np.where(available, objective, -np.inf)))
        chosen.append(best)
        available[best] = False
        np.maximum(max_similarity, similarity[best], out=max_similarity)
    return chosen


def estimate_tokens(text: str) -> int:
    """A conservative token estimate for budgets (about 4 characters per token for English JSON)."""
    return len(text) // 3 + 1


def fit_budget(sizes: Sequence[int], budget: int) -> int:
    """How many leading items fit in `budget` tokens (always at least one, so paging progresses)."""
    used = 0
    for count, size in enumerate(sizes):
        used += size
        if used > budget and count > 0:
            return count
    return len(sizes)


# What search results can be grouped by.
GROUPS = ("page", "item")


def group_heads(
    keys: Sequence[int], located: Mapping[int, Located], group_by: str
) -> list[tuple[int, list[int]]]:
    """One entry per page (a chunk running over pages counts for its first) or per item, in the
    order of its best chunk: that chunk's key and the keys of the group's others, best first.
    Keys not located (a chunk deleted meanwhile) are left out."""
    groups: dict[tuple[int, int | None], tuple[int, list[int]]] = {}
    for key in keys:
        where = located.get(key)
        if where is None:
            continue
        group = (where.item_id, where.page if group_by == "page" else None)
        if group in groups:
            groups[group][1].append(key)
        else:
            groups[group] = (key, [])
    return list(groups.values())
