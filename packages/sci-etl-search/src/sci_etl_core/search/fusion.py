"""Fuse ranked lists of records into one ranking: reciprocal rank and normalized score."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from sci_etl_core.search.store_base import Snippet

__all__ = [
    "FusedHit",
    "FusionParams",
    "FusionStrategy",
    "ScoredList",
    "normalized_score_fusion",
    "reciprocal_rank_fusion",
]

ScoredList = Sequence[tuple[str, float]]
"""A ranked list of ``(record_id, score)`` pairs, best first."""


def _check_rank(name: str, rank: int | None) -> None:
    if rank is None:
        return
    if isinstance(rank, bool) or not isinstance(rank, int) or rank < 1:
        raise ValueError(f"{name} must be None or an int >= 1, got {rank!r}")


@dataclass(frozen=True)
class FusedHit:
    """One record of a fused result list, with where each retrieval leg ranked it.

    ``lexical_rank`` and ``semantic_rank`` are 1-based, and ``None`` when that leg did
    not return the record. ``snippet``, ``highlights``, and ``snippets`` are the lexical
    hit's when the lexical leg returned the record. A record found only by the semantic
    leg gets a snippet of the passage that ranked it, with the query's words highlighted
    where they occur in it, as its only entry in ``snippets``, whose field is ``"body"``.
    ``score`` comes from the fusion strategy and is comparable only within one result
    list; render the rank, never the score as a percentage.

    Raises:
        ValueError: ``record_id`` is empty, ``score`` is not finite, or a rank is below 1.
    """

    record_id: str
    score: float
    lexical_rank: int | None = None
    semantic_rank: int | None = None
    snippet: str = ""
    highlights: tuple[tuple[int, int], ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)
    title: str = ""
    snippets: tuple[Snippet, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.record_id, str) or not self.record_id:
            raise ValueError(f"FusedHit.record_id must be a non-empty string: {self.record_id!r}")
        if not math.isfinite(self.score):
            raise ValueError(f"FusedHit.score must be finite, got {self.score!r}")
        _check_rank("FusedHit.lexical_rank", self.lexical_rank)
        _check_rank("FusedHit.semantic_rank", self.semantic_rank)
        object.__setattr__(self, "highlights", tuple(tuple(h) for h in self.highlights))
        object.__setattr__(self, "snippets", tuple(self.snippets))


@dataclass(frozen=True)
class FusionParams:
    """How ranked lists are fused.

    ``k`` damps reciprocal rank fusion: a larger ``k`` flattens the difference between
    neighbouring ranks. ``weights`` holds one weight per fused list, in list order, and
    ``None`` weighs every list equally. A list of weights is stored as a tuple.

    Raises:
        ValueError: ``k`` is negative or not finite, or a weight is negative or not
            finite, or ``weights`` is empty.
    """

    k: float = 60
    weights: Sequence[float] | None = None

    def __post_init__(self) -> None:
        if isinstance(self.k, bool) or not isinstance(self.k, (int, float)):
            raise ValueError(f"FusionParams.k must be a number, got {self.k!r}")
        if not math.isfinite(self.k) or self.k < 0:
            raise ValueError(f"FusionParams.k must be finite and >= 0, got {self.k!r}")
        if self.weights is None:
            return
        weights = tuple(self.weights)
        if not weights:
            raise ValueError("FusionParams.weights must hold at least one weight, or be None")
        for position, weight in enumerate(weights):
            if (
                isinstance(weight, bool)
                or not isinstance(weight, (int, float))
                or not math.isfinite(weight)
                or weight < 0
            ):
                raise ValueError(
                    f"FusionParams.weights[{position}] must be a finite number >= 0, got {weight!r}"
                )
        object.__setattr__(self, "weights", weights)


class FusionStrategy(Protocol):
    """Fuses ranked lists of ``(record_id, score)`` pairs into one ranking.

    The result holds each record of the input lists once, as a
    ``(record_id, fused_score)`` pair, best first.
    """

    def __call__(
        self, ranked_lists: Sequence[ScoredList], params: FusionParams | None = None
    ) -> list[tuple[str, float]]:
        """Fuse ``ranked_lists`` with ``params``."""
        ...


def _weights(ranked_lists: Sequence[ScoredList], params: FusionParams) -> tuple[float, ...]:
    if params.weights is None:
        return (1.0,) * len(ranked_lists)
    weights = tuple(float(w) for w in params.weights)
    if len(weights) != len(ranked_lists):
        raise ValueError(
            f"FusionParams.weights has {len(weights)} weights for {len(ranked_lists)} lists"
        )
    return weights


def _distinct(ranked: ScoredList, list_index: int, *, need_scores: bool) -> dict[str, float]:
    """Map each distinct record of ``ranked`` to its first score, in first-seen order."""
    first: dict[str, float] = {}
    for position, pair in enumerate(ranked):
        try:
            record_id, score = pair
        except (TypeError, ValueError):
            raise ValueError(
                f"ranked_lists[{list_index}][{position}] is not a (record_id, score) pair"
            ) from None
        if not isinstance(record_id, str):
            raise ValueError(
                f"ranked_lists[{list_index}][{position}]: record_id must be a string, "
                f"got {type(record_id).__name__}"
            )
        if need_scores and (
            isinstance(score, bool)
            or not isinstance(score, (int, float))
            or not math.isfinite(score)
        ):
            raise ValueError(
                f"ranked_lists[{list_index}][{position}]: score must be a finite number, "
                f"got {score!r}"
            )
        first.setdefault(record_id, float(score) if need_scores else 0.0)
    return first


def _ranked(contributions: dict[str, list[float]]) -> list[tuple[str, float]]:
    fused = [(record_id, math.fsum(parts)) for record_id, parts in contributions.items()]
    fused.sort(key=lambda item: (-item[1], item[0]))
    return fused


def reciprocal_rank_fusion(
    ranked_lists: Sequence[ScoredList], params: FusionParams | None = None
) -> list[tuple[str, float]]:
    """Fuse ranked lists by ``1 / (k + rank)``, the rank-only fusion of Cormack et al.

    Only the order of each list is read; its scores are ignored. That makes the fusion
    scale-free. BM25 scores are unbounded and depend on the corpus, while cosine
    similarity lies in [-1, 1], so any weighted sum of the two would make the effective
    blend drift as the corpus grows; RRF needs no calibration.

    A record's rank in a list is its 1-based position among the list's distinct records,
    so a repeated record counts once, at its first position. Its fused score is the sum
    over lists of ``weight / (k + rank)``, rounded exactly (:func:`math.fsum`), so the
    result does not depend on the order of the lists. The result is best first, and
    equal fused scores are ordered by ``record_id``.

    Raises:
        ValueError: A list holds something other than ``(record_id, score)`` pairs with a
            string id, or ``params.weights`` does not have one weight per list.
    """
    params = params if params is not None else FusionParams()
    weights = _weights(ranked_lists, params)
    contributions: dict[str, list[float]] = {}
    for index, (ranked, weight) in enumerate(zip(ranked_lists, weights, strict=True)):
        for rank, record_id in enumerate(_distinct(ranked, index, need_scores=False), start=1):
            contributions.setdefault(record_id, []).append(weight / (params.k + rank))
    return _ranked(contributions)


def normalized_score_fusion(
    ranked_lists: Sequence[ScoredList], params: FusionParams | None = None
) -> list[tuple[str, float]]:
    """Fuse ranked lists by min-max normalizing each list's scores, then adding them with weights.

    Unlike :func:`reciprocal_rank_fusion`, score mass matters: a record far ahead of the
    next one keeps that lead. The price is calibration. Raw BM25 scores depend on the
    corpus, so how much the lexical list counts drifts as the corpus changes.
    ``params.k`` is not used.

    Within a list, the best score becomes 1 and the worst 0, and a list whose scores are
    all equal gives every record 1. A repeated record keeps the score of its first
    occurrence. The result is best first, and equal fused scores are ordered by
    ``record_id``.

    Raises:
        ValueError: A list holds something other than ``(record_id, score)`` pairs with a
            string id and a finite score, or ``params.weights`` does not have one weight
            per list.
    """
    params = params if params is not None else FusionParams()
    weights = _weights(ranked_lists, params)
    contributions: dict[str, list[float]] = {}
    for index, (ranked, weight) in enumerate(zip(ranked_lists, weights, strict=True)):
        scores = _distinct(ranked, index, need_scores=True)
        if not scores:
            continue
        low, high = min(scores.values()), max(scores.values())
        span = high - low
        for record_id, score in scores.items():
            normalized = 1.0 if span == 0 else (score - low) / span
            contributions.setdefault(record_id, []).append(weight * normalized)
    return _ranked(contributions)
