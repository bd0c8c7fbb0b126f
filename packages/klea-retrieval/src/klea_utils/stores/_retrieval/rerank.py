"""Post-fusion re-ranking: a cross-encoder pass and a recency blend."""

from __future__ import annotations

import math
from typing import Any

from klea_utils.stores._retrieval.extras import import_extra
from langchain_core.documents import Document

__all__ = [
    "DEFAULT_CROSS_ENCODER_MODEL",
    "RECENCY_MISSING_YEAR_SCORE",
    "RECENCY_WEIGHT_RELEVANCE",
    "RECENCY_WEIGHT_TIME",
    "cross_encoder_rerank",
    "load_cross_encoder",
    "rerank_by_recency",
]

DEFAULT_CROSS_ENCODER_MODEL = "cross-encoder/ms-marco-MiniLM-L-6-v2"
"""Default cross-encoder model for reranking (small MS MARCO model, local)."""

RECENCY_MISSING_YEAR_SCORE = 0.5
"""Recency score of documents without a usable ``year`` metadata value."""

RECENCY_WEIGHT_RELEVANCE = 0.9
"""Weight of the normalized relevance component in :func:`rerank_by_recency`."""

RECENCY_WEIGHT_TIME = 0.1
"""Weight of the recency (time) component in :func:`rerank_by_recency`."""


def load_cross_encoder(model_name: str) -> Any:
    """Load a sentence-transformers ``CrossEncoder`` (a plain factory, no caching).

    Args:
        model_name: Hugging Face cross-encoder model id or local model folder.

    Returns:
        A newly constructed cross-encoder for ``model_name``.

    Raises:
        ValueError: If ``model_name`` is empty or ``None``.
        EmbeddingModelError: (a ``ValueError``) when the model cannot be loaded; one line
            naming the model.
        ImportError: If sentence-transformers is not installed (names the extra).
    """
    if not isinstance(model_name, str) or not model_name.strip():
        raise ValueError(f"model_name must be a non-empty string, got {model_name!r}")
    st = import_extra("sentence_transformers", feature="Cross-encoder re-ranking", extra="rerank")
    try:
        return st.CrossEncoder(model_name)
    except (OSError, ValueError) as exc:
        from klea_utils.stores.exceptions import EmbeddingModelError

        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise EmbeddingModelError(
            f"cannot load cross-encoder {model_name!r} for --rerank: {reason} (give a local "
            "model folder, or put the model in the Hugging Face cache)"
        ) from exc


def cross_encoder_rerank(
    query: str, docs: list[tuple[Document, float]], *, model: Any
) -> list[tuple[Document, float]]:
    """Re-rank fused retrieval results with a cross-encoder instance.

    Each document is scored as a ``(query, page_content)`` pair with
    ``model.predict(pairs, show_progress_bar=False)``; the score replaces the tuple's
    relevance score and the documents are returned best first (ties keep input order).
    Metadata, including per-source scores, is left untouched. An empty ``docs`` returns
    ``[]`` without calling the model.
    """
    if not docs:
        return []
    pairs = [(query, doc.page_content) for doc, _ in docs]
    scores = [float(s) for s in model.predict(pairs, show_progress_bar=False)]
    if len(scores) != len(docs):
        raise ValueError(f"cross-encoder returned {len(scores)} scores for {len(docs)} pairs")
    order = sorted(range(len(docs)), key=lambda i: -scores[i])
    return [(docs[i][0], scores[i]) for i in order]


def _usable_year(doc: Document) -> int | None:
    year = doc.metadata.get("year")
    if isinstance(year, int) and not isinstance(year, bool):
        return year
    return None


def _min_max(values: list[float]) -> list[float]:
    low, high = min(values), max(values)
    if high == low:
        return [1.0] * len(values)
    return [(v - low) / (high - low) for v in values]


def rerank_by_recency(
    merged: list[tuple[Document, float]],
    relevance_weight: float = RECENCY_WEIGHT_RELEVANCE,
    time_weight: float = RECENCY_WEIGHT_TIME,
) -> list[tuple[Document, float]]:
    """Re-rank results blending in document recency.

    ``final = relevance_weight * norm_relevance + time_weight * time_score``, where the
    relevance is min-max normalized across the set and ``time_score`` is
    ``(year - year_min) / (year_max - year_min)`` over the set's integer years; a
    document without an integer ``year`` gets :data:`RECENCY_MISSING_YEAR_SCORE`. A
    single distinct relevance, or year, maps to 1.0. Sorting is stable.

    Raises:
        ValueError: When a weight is negative or not finite.
    """
    for name, weight in (("relevance_weight", relevance_weight), ("time_weight", time_weight)):
        if not math.isfinite(weight) or weight < 0:
            raise ValueError(f"{name} must be a finite number >= 0, got {weight!r}")
    if not merged:
        return []
    relevance = _min_max([float(score) for _, score in merged])
    years = [_usable_year(doc) for doc, _ in merged]
    known = [y for y in years if y is not None]
    low, high = (min(known), max(known)) if known else (0, 0)
    finals: list[float] = []
    for rel, year in zip(relevance, years, strict=True):
        if year is None:
            time_score = RECENCY_MISSING_YEAR_SCORE
        elif high == low:
            time_score = 1.0
        else:
            time_score = (year - low) / (high - low)
        finals.append(relevance_weight * rel + time_weight * time_score)
    order = sorted(range(len(merged)), key=lambda i: -finals[i])
    return [(merged[i][0], finals[i]) for i in order]
