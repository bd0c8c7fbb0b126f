"""The whole klea retrieval pipeline as one call: stores, fusion, re-ranking.

For a domain of a :class:`~klea_utils.stores.config.RetrieverConfig`,
:meth:`KleaPipeline.retrieve` queries every vector store
(:class:`~klea_utils.stores.retrieval.vs.VSRetriever`) and every BM25 store
(:class:`~klea_utils.stores.retrieval.bm25.BM25RetrieverManager`) with ``k`` hits each,
fuses the ranked lists by Reciprocal Rank Fusion (one vote per store's list; with a
multilingual embedder, or ``votes="legs"``, one vote per leg: a domain's lexical stores, a
BM25 pickle and an ``fts5:`` index of the same chunks, are fused among themselves first,
:func:`~klea_utils.stores.utils.rrf_merge_legs`), re-scores them by
the place inside each passage where the question's distinguishing words meet
(:mod:`klea_utils.stores._retrieval.passage_focus`: each store is then asked for a deeper
pool and the best of it is kept, as many as the stores' top ``k`` would have given),
optionally re-ranks with a cross-encoder, blends in recency
(:func:`~klea_utils.stores.utils.rerank_by_recency`) and returns ``(Document, score)``
pairs, best first. With ``context`` (``neighbours`` or ``section``) each hit is widened
with the chunks around it in its section, up to ``context_tokens``
(:mod:`klea_utils.stores._retrieval.context`), read from a store of the domain that can
look chunks up by metadata (a BM25 corpus, Chroma, Qdrant).

A pipeline loads its stores and models once (lazily, or at once with
:meth:`KleaPipeline.load`) and is safe to share between threads, so a resident process
(``klea-serve``, an agent) pays start-up once. The vector leg and the BM25 leg run side
by side; a leg that raises, or that takes longer than ``leg_timeout`` seconds, is left
out of the fusion and named in :attr:`PipelineResult.notes` instead of failing the
query. Malformed filters and unknown domains are the caller's errors and raise.

:func:`retrieve_documents` is the one-shot form: it builds a pipeline, answers one
query and returns the documents.
"""

from __future__ import annotations

import concurrent.futures
import logging
import operator
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from klea_utils.stores._retrieval.context import (
    DEFAULT_CONTEXT,
    DEFAULT_CONTEXT_TOKENS,
    NO_ORDER_NOTE,
    NO_SOURCE_NOTE,
    NeighbourSource,
    check_context,
    neighbour_source,
    widen_hits,
)
from klea_utils.stores._retrieval.embedding_defaults import DEFAULT_EMBEDDING_MODEL
from klea_utils.stores._retrieval.fusion import (
    VOTES,
    document_key,
    merge_by_votes,
    votes_for,
    with_top_k_votes,
    without_leg,
)
from klea_utils.stores._retrieval.library_terms import LibraryCounts, library_counts
from klea_utils.stores._retrieval.passage_focus import (
    FocusParams,
    SentenceSimilarities,
    focus_rerank,
    place_question,
    question_terms,
)
from klea_utils.stores._retrieval.pool_similarity import pool_similarities
from klea_utils.stores._retrieval.question_script import embedder_reads_question
from klea_utils.stores._retrieval.reference_lists import settle_reference_lists
from klea_utils.stores._retrieval.sentence_focus import SentenceVectors
from klea_utils.stores.config import RetrieverConfig
from klea_utils.stores.filters import validate_metadata_filter
from klea_utils.stores.retrieval.base import BaseKleaRetriever
from klea_utils.stores.retrieval.bm25 import BM25RetrieverManager
from klea_utils.stores.retrieval.vs import VSRetriever
from klea_utils.stores.store_uri import StoreURI
from klea_utils.stores.utils import (
    cross_encoder_rerank,
    load_cross_encoder,
    rerank_by_recency,
)
from langchain_core.documents import Document

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings

__all__ = ["DEFAULT_FOCUS", "SCORE_KEY", "KleaPipeline", "PipelineResult", "retrieve_documents"]

SCORE_KEY = "score"
"""Metadata key under which :meth:`PipelineResult.documents` records each final score."""

_LOG = logging.getLogger("klea_utils.stores.pipeline")

DEFAULT_FOCUS = FocusParams()
"""How :class:`KleaPipeline` re-scores fused candidates unless told otherwise."""


@dataclass(frozen=True)
class _DomainHelpers:
    """What a domain's loaded stores offer besides search: chunk lookups and word counts."""

    sources: list[NeighbourSource]
    library: LibraryCounts | None


def _same_objects(kept: Sequence[Any], current: Sequence[Any]) -> bool:
    return len(kept) == len(current) and all(map(operator.is_, kept, current))


def _positive_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


@dataclass(frozen=True)
class PipelineResult:
    """The fused, re-ranked hits of one domain, and what went wrong on the way.

    ``hits`` are ``(document, score)`` pairs, best first; each document's metadata holds
    the per-store scores under ``_source_scores`` (see ``rrf_merge``). ``notes`` has one
    line per leg that failed or timed out (``"BM25: <error>"``) and is empty when every
    leg answered.
    """

    domain: str
    hits: list[tuple[Document, float]] = field(default_factory=list)
    notes: tuple[str, ...] = ()

    def documents(self) -> list[Document]:
        """The hits as documents whose metadata holds the final score under ``score``."""
        return [
            doc.model_copy(update={"metadata": {**doc.metadata, SCORE_KEY: score}})
            for doc, score in self.hits
        ]


class KleaPipeline:
    """Run the configured stores of a domain, fuse, re-rank; loaded once, shared by threads.

    Args:
        config: The stores configuration.
        embedding_model: A ``provider:model`` spec (see
            ``klea_utils.stores.embedding_models``) or a LangChain ``Embeddings`` to use
            as is; only loaded when a domain has vector stores.
        k: Hits each store returns unless the store configures its own ``default_k``.
        rerank: A cross-encoder model name or folder, or a loaded model with
            ``predict(pairs, show_progress_bar=False)``; ``None`` skips the pass.
        recency: Blend in recency (``rerank_by_recency``) after the other passes.
        leg_timeout: Seconds a leg (vector or BM25) may take before it is left out of the
            answer with a note; ``None`` waits for it.
        logger: Receives the managers' messages (warnings for skipped stores).
        context: ``off``, ``neighbours`` or ``section``: how :meth:`retrieve` widens each
            hit with the chunks around it, unless a call says otherwise. ``None``: the
            default (:data:`~klea_utils.stores._retrieval.context.DEFAULT_CONTEXT`), and
            stores that cannot widen (built before chunks recorded their order) are then
            a warning once per domain instead of a note in every result; a lookup that
            fails is a warning and a note each time.
        context_tokens: Token budget of a widened passage.
        focus: How fused candidates are re-scored by passage focus
            (:class:`~klea_utils.stores._retrieval.passage_focus.FocusParams`); ``None``
            fuses each store's top ``k`` as they are.
        votes: ``legs``: each leg, vector and lexical, is one vote in the fusion, its
            stores' lists fused among themselves first; ``stores``: every store's list
            is a vote (two lexical stores of the same chunks then outvote the vector
            store whenever they agree); ``auto`` (default): ``legs`` when the domain's
            embedder reads many languages (its ``embedding_model`` in the configuration,
            else ``embedding_model`` here: ``use:multilingual-v3`` and models named
            multilingual, LaBSE, bge-m3), where the vector leg is the only one that can
            find a paper in another language than the question, ``stores`` otherwise,
            the count the English figures were measured with; and under ``auto`` a
            question that the embedder cannot read (the packaged MiniLM asked in a
            script other than Latin, :mod:`~klea_utils.stores._retrieval.question_script`)
            leaves the vector leg out of the fusion when a lexical leg found something.

    Raises:
        ValueError: When ``k`` is below 1, ``leg_timeout`` is not positive, or the
            context settings are not valid, or ``votes`` is not one of ``auto``,
            ``legs``, ``stores``.
    """

    def __init__(
        self,
        config: RetrieverConfig,
        *,
        embedding_model: str | Embeddings = DEFAULT_EMBEDDING_MODEL,
        k: int = 5,
        rerank: str | Any | None = None,
        recency: bool = True,
        leg_timeout: float | None = None,
        logger: logging.Logger | None = None,
        context: str | None = None,
        context_tokens: int = DEFAULT_CONTEXT_TOKENS,
        focus: FocusParams | None = DEFAULT_FOCUS,
        votes: str = "auto",
    ) -> None:
        if votes not in VOTES:
            raise ValueError(f"votes must be one of {', '.join(VOTES)}, got {votes!r}")
        self.votes = votes
        self.focus = focus
        self._helpers: dict[str, tuple[tuple[Any, ...], _DomainHelpers]] = {}
        self.context = check_context(
            DEFAULT_CONTEXT if context is None else context, context_tokens
        )
        self.context_tokens = context_tokens
        self._context_asked = context is not None
        self._context_logged: set[tuple[str, str]] = set()
        if not _positive_int(k):
            raise ValueError(f"k must be an integer >= 1, got {k!r}")
        if leg_timeout is not None and not leg_timeout > 0:
            raise ValueError(f"leg_timeout must be a positive number of seconds, got {leg_timeout}")
        self.config = config
        self.k = k
        self.recency = recency
        self.leg_timeout = leg_timeout
        self.logger = logger or _LOG
        spec = embedding_model if isinstance(embedding_model, str) else "custom"
        self._embedder_spec = spec
        kw = {"default_k": k, "k_max": max(k, 100)}
        self.vector = VSRetriever(config, self.logger, spec, **kw)
        if not isinstance(embedding_model, str):
            self.vector.embeddings = embedding_model
        self.bm25 = BM25RetrieverManager(config, self.logger, **kw)
        self._rerank_spec = rerank
        self._reranker: Any | None = None if isinstance(rerank, str) else rerank
        self._rerank_lock = threading.Lock()
        self._sentences: SentenceVectors | None = None
        self._pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=8, thread_name_prefix="klea-pipeline"
        )

    @property
    def domains(self) -> list[str]:
        """The configured domain names, in configuration order."""
        return list(self.config.domains)

    def load(self, domains: Sequence[str] | None = None) -> None:
        """Open every store of ``domains`` (all by default) and the re-ranking model now.

        Raises:
            ValueError: When a domain is not configured.
        """
        for domain in domains if domains is not None else self.domains:
            for manager in self._managers(domain):
                manager.load(domain)
        self._cross_encoder()

    def close(self) -> None:
        """Stop the worker threads (a running leg finishes on its own)."""
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _managers(self, domain: str) -> list[BaseKleaRetriever]:
        managers: list[BaseKleaRetriever] = []
        if self.config.domains[domain].vector_stores:
            managers.append(self.vector)
        if self.config.domains[domain].bm25_stores:
            managers.append(self.bm25)
        return managers

    def _cross_encoder(self) -> Any | None:
        if self._reranker is None and isinstance(self._rerank_spec, str):
            with self._rerank_lock:
                if self._reranker is None:
                    self._reranker = load_cross_encoder(self._rerank_spec)
        return self._reranker

    def _check_domain(self, domain: str) -> None:
        if domain not in self.config.domains:
            known = ", ".join(sorted(self.config.domains)) or "none"
            raise ValueError(f"unknown domain {domain!r}; configured domains: {known}")

    def retrieve(
        self,
        domain: str,
        query: str,
        *,
        metadata_filter: dict[str, Any] | None = None,
        k: int | None = None,
        limit: int | None = None,
        context: str | None = None,
        context_tokens: int | None = None,
    ) -> PipelineResult:
        """Answer ``query`` from the stores of ``domain``.

        Args:
            domain: A configured domain.
            query: The question (normalized by the managers).
            metadata_filter: A filter in the DSL (``klea_utils.stores.filters``).
            k: Hits per store (default: each store's configured ``default_k``, else the
                pipeline's ``k``).
            limit: Fused results kept (default: all of them, up to ``k`` per store).
            context: ``off``, ``neighbours`` or ``section`` (default: the pipeline's):
                each hit widened with chunks around it in its section; a hit that a
                better hit's passage already holds is dropped. Stores without chunk
                order metadata leave hits as they are, with a note.
            context_tokens: Token budget of a widened passage (default: the pipeline's).

        Raises:
            ValueError: Unknown domain, malformed filter, ``k``/``limit`` below 1, or
                invalid context settings.
        """
        budget = self.context_tokens if context_tokens is None else context_tokens
        mode = check_context(self.context if context is None else context, budget)
        self._check_domain(domain)
        for name, value in (("k", k), ("limit", limit)):
            if value is not None and not _positive_int(value):
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
        canonical = validate_metadata_filter(metadata_filter) if metadata_filter else None
        managers = self._managers(domain)
        # Without k every store keeps its configured default_k (else the pipeline's k);
        # with focus each store is asked for at least the focus pool.
        pool = self.focus.pool if self.focus is not None else 0
        k_values: dict[str, dict[str, int]] = {domain: {}}
        if k is not None or pool:
            for manager in managers:
                for store in manager._stores_of(domain):
                    own = k if k is not None else manager._store_default_k(store)
                    k_values[domain][store.name] = max(own, pool)
        futures = {
            manager.source_label: self._pool.submit(
                manager.retrieve_per_store, domain, query, canonical, k_values
            )
            for manager in managers
        }
        sets: list[tuple[str, list[tuple[Document, float]]]] = []
        depths: list[int] = []
        notes: list[str] = []
        for manager in managers:
            label = manager.source_label
            try:
                answered = futures[label].result(timeout=self.leg_timeout)
            except concurrent.futures.TimeoutError:
                notes.append(f"{label}: no answer within {self.leg_timeout:g} s; left out")
                continue
            except Exception as exc:  # a failing leg degrades the answer, not the request
                self.logger.warning("%s leg of domain %r failed: %s", label, domain, exc)
                notes.append(f"{label}: {type(exc).__name__}: {exc}")
                continue
            sets.extend(answered)  # one list per loaded store, in configuration order
            depths.extend(
                k if k is not None else manager._store_default_k(store)
                for store in manager._stores_of(domain)
                if store.loaded_object is not None
            )
        merged = self._fuse(query, sets, depths, domain)
        model = self._cross_encoder()
        if model is not None:
            merged = cross_encoder_rerank(query, merged, model=model)
        if self.recency:
            merged = rerank_by_recency(merged)
        if mode == "off":
            return PipelineResult(domain, merged[:limit] if limit else merged, tuple(notes))
        widened, context_notes = widen_hits(
            merged, self._neighbour_sources(domain), mode, budget, limit
        )
        if context is None and not self._context_asked:
            context_notes = self._default_context_notes(domain, context_notes)
        return PipelineResult(domain, widened, (*notes, *context_notes))

    def _default_context_notes(self, domain: str, notes: list[str]) -> list[str]:
        """The notes of widening by default that a result keeps.

        Stores that cannot widen at all (no lookup, no recorded order) are a property of
        the library, not of the query: a warning once per domain, no note in each result.
        A lookup that failed is a warning each time, and stays in the result's notes.
        """
        kept = []
        for note in notes:
            if note not in (NO_SOURCE_NOTE, NO_ORDER_NOTE):
                self.logger.warning("domain %r: %s", domain, note)
                kept.append(note)
            elif (domain, note) not in self._context_logged:
                self._context_logged.add((domain, note))
                self.logger.warning("domain %r: %s", domain, note)
        return kept

    def _fuse(
        self,
        query: str,
        sets: list[tuple[str, list[tuple[Document, float]]]],
        depths: list[int],
        domain: str | None = None,
    ) -> list[tuple[Document, float]]:
        """Fuse the stores' lists; with focus, re-score the pool and keep as many as the
        stores' own top ``k`` (``depths``, one per list) would have given.

        With one vote per leg (:meth:`_votes`) each list's own top ``k`` counts a second
        time (:func:`~klea_utils.stores._retrieval.fusion.with_top_k_votes`): a
        multilingual vector leg's first place, often the only list that finds a paper in
        another language than the question, is then not outvoted by passages that the
        deep pool's lists each rank low.

        The focus blends in the pooled passages' stored-vector cosine to the question
        when a vector store of ``domain`` answered (see :meth:`_pool_similarities`);
        reference-list chunks then step back unless the question asks for a reference
        list (:mod:`~klea_utils.stores._retrieval.reference_lists`).

        With ``votes="auto"``, a question the domain's embedder cannot read leaves the
        vector leg's lists out when a lexical list found something
        (:mod:`~klea_utils.stores._retrieval.question_script`: the packaged MiniLM asked
        in Japanese, Arabic, Russian... ranks passages by a vector of single letters)."""
        if self.votes == "auto" and not embedder_reads_question(self._embedder(domain), query):
            sets, depths = without_leg(sets, depths, self.vector.source_label)
        if self.focus is None:
            return self._merge(sets, domain)
        top_k = [(label, hits[:n]) for (label, hits), n in zip(sets, depths, strict=True)]
        shallow = {document_key(d) for _, hits in top_k for d, _ in hits}
        merged = self._merge(sets, domain)
        if self._votes(domain) == "legs":
            # One vote per leg: the vector leg's first places, which a deep pool dilutes,
            # count a second time (issue 37).
            merged = with_top_k_votes(merged, self._merge(top_k, domain))
        similarities = None
        # Only when the vector leg answered: its question vector is then in the memo (a
        # leg that failed or timed out must not be waited for here).
        answered = any(label.startswith(self.vector.source_label) for label, _ in sets)
        if domain is not None and self.focus.vector_share > 0 and merged and answered:
            similarities = self._pool_similarities(domain, query, [d for d, _ in merged])
        sentences = None
        if domain is not None and self.focus.sentence_share > 0 and merged and answered:
            sentences = self._sentence_similarities(domain, query)
        library = self._library_weights(domain, query)
        focused = focus_rerank(query, merged, self.focus, similarities, sentences, library)
        if self.focus.reference_lists_back:
            focused = settle_reference_lists(query, focused)
        return focused[: len(shallow)]

    def _merge(
        self, sets: list[tuple[str, list[tuple[Document, float]]]], domain: str | None = None
    ) -> list[tuple[Document, float]]:
        """RRF of the stores' lists: one vote per leg, or per store (``votes``, ``auto``
        resolved for ``domain``'s embedder)."""
        legs = (self.vector.source_label, self.bm25.source_label)
        return merge_by_votes(sets, self._votes(domain), legs)

    def _votes(self, domain: str | None) -> str:
        """``legs`` or ``stores``: :attr:`votes` with ``auto`` resolved for ``domain``'s
        embedder (its configured ``embedding_model``, else the pipeline's)."""
        return votes_for(self.votes, self._embedder(domain))

    def _embedder(self, domain: str | None) -> str:
        """The embedding model spec of ``domain``: its configured ``embedding_model``, else
        the pipeline's (``custom`` for an ``Embeddings`` object)."""
        configured = (
            self.config.domains[domain].embedding_model if domain in self.config.domains else None
        )
        return configured or self._embedder_spec

    def _pool_similarities(
        self, domain: str, query: str, docs: list[Document]
    ) -> list[float | None] | None:
        """Each pooled passage's stored-vector cosine to ``query`` (``None`` where no
        vector store of ``domain`` holds its vector); ``None`` without a loaded vector
        store or when the question cannot be embedded (logged; the focus stays lexical)."""
        stores = [
            store.loaded_object
            for store in self.config.domains[domain].vector_stores
            if store.loaded_object is not None
        ]
        if not stores:
            return None
        try:
            query_vector = self.vector.query_vector(query)
        except Exception as exc:  # the vector leg has named this failure already
            self.logger.warning("question not embedded for passage re-scoring: %s", exc)
            return None
        return pool_similarities(query_vector, docs, stores)

    def _sentence_similarities(self, domain: str, query: str) -> SentenceSimilarities | None:
        """Best sentence cosines to ``query`` for the focus (embedded with the domain's
        vector stores' embedder, each passage once per process); ``None`` without a loaded
        vector store or when the question cannot be embedded (logged)."""
        if not any(s.loaded_object is not None for s in self.config.domains[domain].vector_stores):
            return None
        try:
            # a leading clause that names the document says nothing about the place in it
            query_vector = self.vector.query_vector(place_question(query))
            with self._rerank_lock:
                if self._sentences is None:
                    self._sentences = SentenceVectors(self.vector._query_embeddings())
                sentences = self._sentences
        except Exception as exc:  # the vector leg has named this failure already
            self.logger.warning("question not embedded for sentence re-scoring: %s", exc)
            return None
        return sentences.similarities_to(query_vector, self.logger)

    def _neighbour_sources(self, domain: str) -> list[NeighbourSource]:
        """The loaded stores of ``domain`` that can look chunks up, in-memory ones first."""
        return self._domain_helpers(domain).sources

    def _library_weights(self, domain: str | None, query: str) -> dict[str, float] | None:
        """The question's terms' IDF over ``domain``'s library, ``None`` where no loaded
        store can count them (:mod:`~klea_utils.stores._retrieval.library_terms`)."""
        if domain is None or self.focus is None or not self.focus.library_idf:
            return None
        counts = self._domain_helpers(domain).library
        terms = question_terms(query)
        return counts(terms).weights(terms) if counts is not None and terms else None

    def _domain_helpers(self, domain: str) -> _DomainHelpers:
        """Built once per set of loaded stores: a corpus held in memory is indexed by
        section when its source is made (about 50 ms for 11,000 chunks), and a library's
        words are counted on the first question, not on every query."""
        per_domain = self.config.domains[domain]
        loaded = [s.loaded_object for s in [*per_domain.bm25_stores, *per_domain.vector_stores]]
        cached = self._helpers.get(domain)
        # The stores themselves are kept and compared by identity: a reload's new store
        # can never pass for the one the helpers were built on.
        if cached is not None and _same_objects(cached[0], loaded):
            return cached[1]
        helpers = self._build_domain_helpers(domain)
        self._helpers[domain] = (tuple(loaded), helpers)
        return helpers

    def _build_domain_helpers(self, domain: str) -> _DomainHelpers:
        per_domain = self.config.domains[domain]
        vectors = [(StoreURI.vector(s.path), s) for s in per_domain.vector_stores]
        present = [
            *(("bm25", StoreURI.bm25(s.path).location, s) for s in per_domain.bm25_stores),
            *((uri.scheme, uri.location, s) for uri, s in vectors),
        ]
        kinds = [(kind, where, s.name, s.loaded_object) for kind, where, s in present]
        kinds = [kind for kind in kinds if kind[3] is not None]
        sources = [neighbour_source(kind, name, store) for kind, _, name, store in kinds]
        return _DomainHelpers(
            [source for source in sources if source is not None],
            library_counts([(kind, where, store) for kind, where, _, store in kinds]),
        )

    def retrieve_all(
        self,
        query: str,
        *,
        domains: Sequence[str] | None = None,
        metadata_filter: dict[str, Any] | None = None,
        k: int | None = None,
        limit: int | None = None,
        context: str | None = None,
        context_tokens: int | None = None,
    ) -> dict[str, PipelineResult]:
        """:meth:`retrieve` for each of ``domains`` (every domain by default), by domain."""
        chosen = list(domains) if domains else self.domains
        for domain in chosen:
            self._check_domain(domain)
        return {
            d: self.retrieve(
                d,
                query,
                metadata_filter=metadata_filter,
                k=k,
                limit=limit,
                context=context,
                context_tokens=context_tokens,
            )
            for d in chosen
        }


def retrieve_documents(
    config: RetrieverConfig,
    query: str,
    *,
    domain: str | None = None,
    metadata_filter: dict[str, Any] | None = None,
    k: int = 5,
    embedding_model: str | Embeddings = DEFAULT_EMBEDDING_MODEL,
    rerank: str | Any | None = None,
    recency: bool = True,
) -> list[Document]:
    """Answer one query with a fresh :class:`KleaPipeline` and return its documents.

    ``domain`` defaults to the only configured domain. At most ``k`` documents are
    returned, each with its final score under :data:`SCORE_KEY` in its metadata. For more
    than one query, keep a :class:`KleaPipeline` (or a ``KleaRetriever``) instead:
    loading is the slow part.

    Raises:
        ValueError: When ``domain`` is ``None`` and the configuration does not have
            exactly one domain, or for the errors of :meth:`KleaPipeline.retrieve`.
    """
    if domain is None:
        if len(config.domains) != 1:
            raise ValueError(
                f"name a domain: the configuration has {len(config.domains)} "
                f"({', '.join(sorted(config.domains)) or 'none'})"
            )
        domain = next(iter(config.domains))
    pipeline = KleaPipeline(
        config, embedding_model=embedding_model, k=k, rerank=rerank, recency=recency
    )
    try:
        result = pipeline.retrieve(domain, query, metadata_filter=metadata_filter, limit=k)
        return result.documents()
    finally:
        pipeline.close()
