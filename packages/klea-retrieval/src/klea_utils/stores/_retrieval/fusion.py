"""Reciprocal Rank Fusion of per-source retrieval results, and one vote per leg.

:func:`rrf_merge` gives every ranked list one vote. :func:`rrf_merge_legs` groups the lists
by leg (the vector leg, the lexical leg) and gives every *leg* one vote: the lists of a
leg are fused among themselves first, and that one list enters the final fusion. A
library that ``klea-stores-create build`` writes has two lexical stores of the same
chunks (the BM25 pickle and the ``fts5:`` index); counted as two votes, they outvote the
one vector list whenever they agree (issue 37: an English question about a Japanese
paper, which only the vector leg can find). :func:`with_top_k_votes` counts each list's own top
``k`` a second time in a deep fused pool.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.documents import Document
from sci_etl_core.search.fusion import FusionParams, reciprocal_rank_fusion

__all__ = [
    "RRF_K",
    "SOURCE_SCORES_KEY",
    "VOTES",
    "document_key",
    "merge_by_votes",
    "of_leg",
    "reads_many_languages",
    "rrf_merge",
    "rrf_merge_legs",
    "votes_for",
    "with_top_k_votes",
    "without_leg",
]

RRF_K = 60
"""Rank offset for Reciprocal Rank Fusion: rank ``r`` contributes ``1 / (RRF_K + r)``."""

_PARAMS = FusionParams(k=RRF_K)

VOTES = ("auto", "legs", "stores")
"""How lists are counted in the fusion: one vote per leg, or per store; ``auto`` (the
default) is per leg when the library's embedder reads many languages
(:func:`reads_many_languages`), per store otherwise; and under ``auto`` only, the
pipeline leaves the vector leg out for a question its embedder does not read
(:mod:`klea_utils.stores._retrieval.question_script`)."""

_MULTILINGUAL_NAMES = ("multilingual", "labse", "bge-m3", "use:")
"""Parts of an embedding model spec that name a model trained on many languages
(``use:multilingual-v3``, ``paraphrase-multilingual-MiniLM-L12-v2``,
``intfloat/multilingual-e5-small``, ``LaBSE``, ``BAAI/bge-m3``)."""


def reads_many_languages(spec: str | None) -> bool:
    """Whether the embedding model ``spec`` names a multilingual model."""
    return spec is not None and any(name in spec.lower() for name in _MULTILINGUAL_NAMES)


def votes_for(votes: str, embedder: str | None) -> str:
    """``legs`` or ``stores``: ``votes``, with ``auto`` resolved for the library's
    ``embedder`` (its model spec; ``None`` when unknown)."""
    if votes != "auto":
        return votes
    return "legs" if reads_many_languages(embedder) else "stores"


SOURCE_SCORES_KEY = "_source_scores"
"""Metadata key holding each document's original per-source scores, set by ``rrf_merge``."""


def document_key(doc: Document) -> str:
    """Return the identity ``rrf_merge`` deduplicates and breaks ties by.

    It is ``f"{file_name}\\x00{page_content}"`` (an absent ``file_name`` reads as ``""``),
    so ordering keys as strings orders documents by file name, then by content: the
    role ``record_id`` plays in ``sci_etl_core.search.reciprocal_rank_fusion``.
    """
    file_name = doc.metadata.get("file_name", "")
    return f"{file_name if isinstance(file_name, str) else str(file_name)}\x00{doc.page_content}"


def rrf_merge(
    result_sets: Sequence[tuple[str, Sequence[tuple[Document, float]]]],
    num_refs_max: int | None = None,
) -> list[tuple[Document, float]]:
    """Fuse per-source retrieval results with Reciprocal Rank Fusion.

    A document's rank in a source list is its 1-based position among the list's
    distinct documents (deduplicated by file+content, see :func:`document_key`), so a
    repeated document counts once, at its first position. Its fused score is the
    exactly rounded sum (``math.fsum``) over sources of ``1 / (RRF_K + rank)``, so the
    result does not depend on the order of the sources. Results are best first; equal
    fused scores are ordered by :func:`document_key` ascending. The fusion itself is
    ``sci_etl_core.search.reciprocal_rank_fusion`` with ``k = RRF_K`` over
    ``record_id = document_key(doc)``; this layer maps documents to ids and back.

    Each returned document is a copy of its first occurrence whose metadata gains
    :data:`SOURCE_SCORES_KEY`: ``{source_label: original score}`` (the best-ranked score
    when a label repeats). Inputs are never mutated.

    Args:
        result_sets: ``(source_label, results)`` pairs, each ``results`` already ranked.
        num_refs_max: Maximum number of documents to return, or ``None`` for all.

    Returns:
        ``(document, rrf_score)`` tuples, best first.

    Raises:
        ValueError: When ``num_refs_max`` is negative.
    """
    if num_refs_max is not None and num_refs_max < 0:
        raise ValueError(f"num_refs_max must be None or >= 0, got {num_refs_max}")
    first_doc: dict[str, Document] = {}
    source_scores: dict[str, dict[str, float]] = {}
    ranked_lists: list[list[tuple[str, float]]] = []
    for label, results in result_sets:
        ranked: list[tuple[str, float]] = []
        for doc, score in results:
            key = document_key(doc)
            ranked.append((key, score))
            first_doc.setdefault(key, doc)
            source_scores.setdefault(key, {}).setdefault(label, score)
        ranked_lists.append(ranked)
    fused = reciprocal_rank_fusion(ranked_lists, _PARAMS)
    if num_refs_max is not None:
        fused = fused[:num_refs_max]
    merged: list[tuple[Document, float]] = []
    for key, score in fused:
        doc = first_doc[key]
        metadata = {**doc.metadata, SOURCE_SCORES_KEY: dict(source_scores[key])}
        merged.append((doc.model_copy(update={"metadata": metadata}), score))
    return merged


ResultSets = Sequence[tuple[str, Sequence[tuple[Document, float]]]]


def rrf_merge_legs(
    legs: Sequence[tuple[str, ResultSets]], num_refs_max: int | None = None
) -> list[tuple[Document, float]]:
    """Fuse ranked lists with one vote per leg, however many stores a leg read.

    ``legs`` are ``(leg_label, result_sets)`` pairs. A leg of several lists is first
    fused on its own (:func:`rrf_merge`), and its fused list enters the final
    :func:`rrf_merge` under ``leg_label``; a leg of one list enters as it is, under its
    own label, so with one list per leg the result is exactly ``rrf_merge`` of the
    lists. A leg without lists is skipped.

    :data:`SOURCE_SCORES_KEY` keeps the stores' original scores: a document found by a
    fused leg holds ``{store_label: score}`` for each of that leg's stores that found it,
    never the leg's intermediate fused score.

    Raises:
        ValueError: When ``num_refs_max`` is negative.
    """
    votes: list[tuple[str, Sequence[tuple[Document, float]]]] = []
    pooled_labels: set[str] = set()
    store_scores: dict[str, dict[str, float]] = {}
    for label, result_sets in legs:
        if len(result_sets) == 1:
            votes.append(result_sets[0])
        elif result_sets:
            pooled = rrf_merge(result_sets)
            for doc, _ in pooled:
                store_scores.setdefault(document_key(doc), {}).update(
                    doc.metadata[SOURCE_SCORES_KEY]
                )
            votes.append((label, pooled))
            pooled_labels.add(label)
    merged = rrf_merge(votes, num_refs_max)
    if not pooled_labels:
        return merged
    out: list[tuple[Document, float]] = []
    for doc, score in merged:
        found = store_scores.get(document_key(doc), {})
        scores = {
            k: v for k, v in doc.metadata[SOURCE_SCORES_KEY].items() if k not in pooled_labels
        }
        metadata = {**doc.metadata, SOURCE_SCORES_KEY: {**scores, **found}}
        out.append((doc.model_copy(update={"metadata": metadata}), score))
    return out


def with_top_k_votes(
    pool: Sequence[tuple[Document, float]], top_k: Sequence[tuple[Document, float]]
) -> list[tuple[Document, float]]:
    """``pool`` (a fusion of deep lists) with each document's score in ``top_k`` (the
    fusion of the same lists cut to each list's own top ``k``) added to its pool score.

    In a deep pool a passage ranked low by several lists outscores one ranked first by a
    single list (RRF's ``1 / (60 + r)`` hardly falls between ranks 1 and 20); counting
    each list's top ``k`` a second time gives the places a reader would have got without
    the deeper pool their weight back, while the pool still orders the rest. Best first,
    ties in pool order; documents are keyed by :func:`document_key`, and a document of
    ``top_k`` missing from ``pool`` is left out.
    """
    extra = {document_key(doc): score for doc, score in top_k}
    summed = [(doc, score + extra.get(document_key(doc), 0.0)) for doc, score in pool]
    return sorted(summed, key=lambda pair: -pair[1])


def of_leg(label: str, leg: str) -> bool:
    """Whether a list labelled ``label`` came from the leg ``leg`` (a manager labels its
    lists ``leg``, or ``"<leg>: <store name>"`` when the domain has several stores)."""
    return label == leg or label.startswith(f"{leg}: ")


def merge_by_votes(
    sets: ResultSets, votes: str, legs: Sequence[str]
) -> list[tuple[Document, float]]:
    """RRF of labelled lists with one vote per store (``votes`` ``stores``) or per leg
    (``legs``, each of ``legs`` a leg label: :func:`of_leg`); a list of no known leg
    keeps a vote of its own."""
    if votes == "stores":
        return rrf_merge(sets)
    grouped: list[tuple[str, ResultSets]] = [
        (leg, [(label, hits) for label, hits in sets if of_leg(label, leg)]) for leg in legs
    ]
    grouped += [
        (label, [(label, hits)])
        for label, hits in sets
        if not any(of_leg(label, leg) for leg in legs)
    ]
    return rrf_merge_legs(grouped)


def without_leg(
    sets: Sequence[tuple[str, list[tuple[Document, float]]]], depths: Sequence[int], leg: str
) -> tuple[list[tuple[str, list[tuple[Document, float]]]], list[int]]:
    """The lists (with their depths, one per list) less those of ``leg``; all of them when
    no other list found anything, so a question is never left without an answer."""
    kept = [
        (named, depth)
        for named, depth in zip(sets, depths, strict=True)
        if not of_leg(named[0], leg)
    ]
    if not any(hits for (_, hits), _ in kept):
        return list(sets), list(depths)
    return [named for named, _ in kept], [depth for _, depth in kept]
