"""Turning exact-scan scores into the ranked hits every embedding store returns."""

from __future__ import annotations

from array import array
from collections.abc import Sequence

from sci_etl_core.embeddings._vectors import ScanMatrix, check_vector, unit_vector
from sci_etl_core.exceptions import EmbeddingDimensionError

__all__ = ["prepare_query", "rank_rows"]


def prepare_query(vector: Sequence[float], dimension: int | None) -> array[float]:
    """Validate and normalize a query vector against the store's ``dimension``."""
    values = check_vector(vector, "query vector")
    if dimension is not None and len(values) != dimension:
        raise EmbeddingDimensionError(
            f"query vector has dimension {len(values)}, but the store holds {dimension}"
        )
    return unit_vector(values)


def rank_rows(
    matrix: ScanMatrix,
    keys: Sequence[tuple[str, int]],
    query: array[float],
    *,
    top_k: int,
    min_score: float,
    exclude_record_id: str | None,
) -> list[tuple[int, float]]:
    """Return the ``(row, score)`` of the ``top_k`` best rows, best first.

    ``keys`` gives each row's ``(record_id, chunk_index)``, which orders equal scores.
    Rows scoring below ``min_score`` and the rows of ``exclude_record_id`` are left out.
    """
    if top_k < 1:
        return []
    excluded = sum(1 for key in keys if key[0] == exclude_record_id)
    found = [
        (row, score)
        for row, score in matrix.candidates(query, top_k + excluded)
        if score >= min_score and keys[row][0] != exclude_record_id
    ]
    found.sort(key=lambda item: (-item[1], keys[item[0]]))
    return found[:top_k]
