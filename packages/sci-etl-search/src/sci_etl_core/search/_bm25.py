"""FTS5's ``bm25()`` ranking function, reproduced operation for operation (internal).

SQLite's ``fts5_aux.c`` computes, for a row of ``D`` tokens (all columns together)
in a table of ``N`` rows and ``T`` tokens::

    avgdl = T / N
    idf_i = log((N - n_i + 0.5) / (n_i + 0.5)), or 1e-6 when that is not positive
    f_i   = sum over phrase i's counted instances of the weight of their column
    bm25  = -sum_i idf_i * (f_i * (k1 + 1)) / (f_i + k1 * (1 - b + b * D / avgdl))

with ``n_i`` the number of rows phrase ``i`` occurs in. The functions here evaluate
exactly those floating-point operations in the same order, so the in-memory store's
scores agree with FTS5's to the last bit or nearly so.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["IDF_FLOOR", "K1", "B", "bm25_score", "idf"]

K1 = 1.2
"""Term-frequency saturation of FTS5's ``bm25()``."""

B = 0.75
"""Length normalization of FTS5's ``bm25()``."""

IDF_FLOOR = 1e-6
"""The IDF FTS5 uses in place of a value that is not positive."""


def idf(rows: int, hits: int) -> float:
    """Return FTS5's IDF of a phrase occurring in ``hits`` of ``rows`` rows."""
    value = math.log((rows - hits + 0.5) / (hits + 0.5))
    return IDF_FLOOR if value <= 0.0 else value


def bm25_score(idfs: Sequence[float], freqs: Sequence[float], length: int, avgdl: float) -> float:
    """Return the positive BM25 score of a row of ``length`` tokens.

    ``freqs[i]`` is the weighted count of phrase ``i``'s instances in the row.
    """
    score = 0.0
    norm_d = float(length)
    for weight, freq in zip(idfs, freqs, strict=True):
        score += weight * ((freq * (K1 + 1.0)) / (freq + K1 * (1 - B + B * norm_d / avgdl)))
    return -(-1.0 * score)
