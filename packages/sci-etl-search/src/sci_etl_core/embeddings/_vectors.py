"""Vector helpers shared by the embedding stores: validation, normalization, exact scan.

Vectors are stored as unit-length float32 ``array('f')`` values. The scan uses NumPy when
it is importable (the ``local`` extra) and falls back to pure Python otherwise, with the
same results up to float32 rounding.
"""

from __future__ import annotations

import math
import operator
from array import array
from collections.abc import Sequence
from typing import Any

__all__ = ["ScanMatrix", "check_vector", "unit_vector"]


def check_vector(values: Sequence[float], what: str) -> tuple[float, ...]:
    """Return ``values`` as a tuple of floats, raising unless it is a usable vector.

    Raises:
        TypeError: ``values`` is a string or holds something that is not a number.
        ValueError: ``values`` is empty, holds a value that is not finite, or is all zeros.
    """
    if isinstance(values, (str, bytes)):
        raise TypeError(f"{what}: expected a sequence of floats, got {type(values).__name__}")
    out: list[float] = []
    for position, value in enumerate(values):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            try:
                value = float(value)
            except (TypeError, ValueError):
                raise TypeError(
                    f"{what}: element {position} is {type(value).__name__}, not a number"
                ) from None
        number = float(value)
        if not math.isfinite(number):
            raise ValueError(f"{what}: element {position} is not finite ({number!r})")
        out.append(number)
    if not out:
        raise ValueError(f"{what}: the vector is empty")
    if not any(out):
        raise ValueError(f"{what}: the vector is all zeros, so it has no direction")
    return tuple(out)


def unit_vector(values: Sequence[float]) -> array[float]:
    """Return ``values`` scaled to unit length, as float32."""
    norm = math.sqrt(math.fsum(v * v for v in values))
    return array("f", [v / norm for v in values])


def _numpy() -> Any | None:
    try:
        import numpy
    except ImportError:  # pragma: no cover - exercised only without the extra
        return None
    return numpy


class ScanMatrix:
    """Unit vectors of one dimension, scanned exactly by dot product (cosine similarity)."""

    def __init__(self, dimension: int, rows: Sequence[array[float]]) -> None:
        self.dimension = dimension
        self._rows = list(rows)
        np = _numpy()
        self._matrix: Any | None = None
        if np is not None and self._rows:
            blob = b"".join(row.tobytes() for row in self._rows)
            self._matrix = np.frombuffer(blob, dtype=np.float32).reshape(len(self._rows), dimension)

    def __len__(self) -> int:
        return len(self._rows)

    def candidates(self, query: array[float], keep: int) -> list[tuple[int, float]]:
        """Return ``(row, score)`` for at least the ``keep`` best rows, ties included."""
        if not self._rows or keep < 1:
            return []
        if self._matrix is not None:
            np = _numpy()
            assert np is not None
            scores = self._matrix @ np.frombuffer(query.tobytes(), dtype=np.float32)
            if keep < len(scores):
                threshold = np.partition(scores, len(scores) - keep)[len(scores) - keep]
                chosen = np.nonzero(scores >= threshold)[0]
            else:
                chosen = np.arange(len(scores))
            return [(int(i), _clamp(float(scores[i]))) for i in chosen]
        return [
            (i, _clamp(float(sum(map(operator.mul, row, query)))))
            for i, row in enumerate(self._rows)
        ]


def _clamp(score: float) -> float:
    return max(-1.0, min(1.0, score))
