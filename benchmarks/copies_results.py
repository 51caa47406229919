"""What the copies part measured (HNSW recall on near-duplicate copies), and its section of the report."""

from __future__ import annotations

from dataclasses import dataclass, field

from benchmarks.cells import number


@dataclass(frozen=True)
class CopiesIndex:
    """One HNSW index over one set of vectors, and its recall at each hnsw.ef_search tried."""

    copies: str  # "model" (the model's vectors of the perturbed texts) or "noise" (perturb_vector)
    m: int
    ef_construction: int
    build_seconds: float
    # hnsw.ef_search → mean recall@k against the exact nearest k.
    recall: dict[int, float] = field(default_factory=dict)


@dataclass
class CopiesResult:
    originals: int
    copies_per_original: int
    queries: int
    recall_k: int
    embed_seconds: float = 0.0
    # copies kind → (median cosine of a copy to its original, median cosine of two copies of one original)
    closeness: dict[str, tuple[float, float]] = field(default_factory=dict)
    indexes: list[CopiesIndex] = field(default_factory=list)


def section(result: CopiesResult) -> list[str]:
    """The copies part's section of the report."""
    vectors = result.originals * (result.copies_per_original + 1)
    ef_values = sorted({ef for index in result.indexes for ef in index.recall})
    lines = [
        f"### HNSW recall on near-duplicate copies ({result.originals} abstracts × "
        f"{result.copies_per_original} copies, {vectors:,} vectors)",
        "",
        f"Each copy is the abstract perturbed as the million part perturbs it; its vector either the "
        f"model's for the copy's text (embedded in {number(result.embed_seconds, 0)} s) or the original's "
        f"with Gaussian noise (the million part's). Recall@{result.recall_k} against an exact scan, "
        f"{result.queries} train queries judged against these abstracts.",
        "",
        "| copies | copy to original, median cosine | two copies |",
        "|---|---|---|",
        *(
            f"| {kind} | {number(to_original, 3)} | {number(between, 3)} |"
            for kind, (to_original, between) in result.closeness.items()
        ),
        "",
        "| copies | m | ef_construction | build s | "
        + " | ".join(f"ef_search {ef}" for ef in ef_values)
        + " |",
        "|---|---|---|---|" + "---|" * len(ef_values),
    ]
    for index in result.indexes:
        cells = " | ".join(number(index.recall.get(ef, float("nan")), 3) for ef in ef_values)
        build = number(index.build_seconds)
        lines.append(f"| {index.copies} | {index.m} | {index.ef_construction} | {build} | {cells} |")
    return [*lines, ""]
