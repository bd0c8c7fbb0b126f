"""BM25 keyword retriever manager: rank_bm25 corpora and the ``fts5:`` SQLite backend."""

from __future__ import annotations

import json
import pickle
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from klea_utils.stores._retrieval.query_words import content_words, lexical_question
from klea_utils.stores._retrieval.safe_pickle import safe_load
from klea_utils.stores.config import StoreInfo
from klea_utils.stores.exceptions import StoreBackendError
from klea_utils.stores.filters import filter_docs_by_metadata
from klea_utils.stores.layout import STORE_SIDECAR_SUFFIX
from klea_utils.stores.retrieval.base import BaseKleaRetriever
from klea_utils.stores.store_uri import FTS5_PREFIX, StoreURI
from langchain_core.documents import Document

__all__ = ["FTS5_SCHEME", "BM25RetrieverManager", "iter_corpus_documents", "read_corpus"]

FTS5_SCHEME = FTS5_PREFIX
"""Path prefix of BM25 stores served by SQLite FTS5 (``fts5:/path/index.sqlite``)."""

_OVERFETCH = 4


def iter_corpus_documents(path: str | Path, *, check_count: bool = True) -> Iterator[Document]:
    """Yield the documents of a pickled BM25 corpus, batch by batch until EOF.

    The corpus is a sequence of pickled lists of ``Document`` (one per ingestion
    batch); a bare pickled ``Document`` is accepted too. The file is read with a
    restricted unpickler (:mod:`klea_utils.stores._retrieval.safe_pickle`) that resolves
    only ``Document`` and built-in containers, so a hostile corpus fails to load instead of
    running code. When ingestion's sidecar (``<corpus>.klea.json``) records how many
    documents the corpus holds, a corpus cut short (even at a batch boundary) is an error
    once the end is reached; ``check_count=False`` skips that check.

    Raises:
        FileNotFoundError: When the file does not exist.
        StoreBackendError: When a batch is corrupt, references anything but ``Document``
            and built-in values, or holds something else than documents, or the corpus
            holds fewer or more documents than its sidecar records.
    """
    with Path(path).open("rb") as fh:
        batch_no = 0
        count = 0
        while True:
            try:
                batch = safe_load(fh)
            except EOFError:
                break
            # What unpickling arbitrary bytes raises: the pickle module's own error, or the
            # builtins its opcodes hit (a bad index, key, type or value, a missing class).
            except (
                pickle.UnpicklingError,
                AttributeError,
                ImportError,
                IndexError,
                KeyError,
                TypeError,
                ValueError,
                OverflowError,
                RecursionError,
                MemoryError,
            ) as exc:
                raise StoreBackendError(
                    f"BM25 corpus {str(path)!r}: batch {batch_no} cannot be unpickled: {exc}"
                ) from exc
            items = [batch] if isinstance(batch, Document) else batch
            if not isinstance(items, list | tuple) or not all(
                isinstance(d, Document) for d in items
            ):
                raise StoreBackendError(
                    f"BM25 corpus {str(path)!r}: batch {batch_no} is not a list of Documents"
                )
            yield from items
            batch_no += 1
            count += len(items)
    if check_count:
        _check_recorded_count(Path(path), count)


def _check_recorded_count(path: Path, count: int) -> None:
    """Compare with the document count ingestion recorded in the sidecar, when there is one."""
    sidecar = path.with_name(path.name + STORE_SIDECAR_SUFFIX)
    try:
        recorded = json.loads(sidecar.read_text(encoding="utf-8")).get("documents")
    except (OSError, ValueError, AttributeError, RecursionError):
        return  # no sidecar (a corpus from elsewhere) or not ours: nothing to compare
    if isinstance(recorded, int) and not isinstance(recorded, bool) and recorded != count:
        raise StoreBackendError(
            f"BM25 corpus {str(path)!r} holds {count} documents but {sidecar.name} records "
            f"{recorded}: the file is truncated or was replaced; rebuild it with "
            "klea-stores-create store"
        )


def read_corpus(path: str | Path) -> list[Document]:
    """Return every document of a pickled BM25 corpus (see :func:`iter_corpus_documents`)."""
    return list(iter_corpus_documents(path))


def filtered_top_k(
    fetch: Any, k: int, metadata_filter: dict[str, Any] | None, available: int
) -> list[tuple[Document, float]]:
    """Return ``k`` hits passing ``metadata_filter``, over-fetching from ``fetch(n)``.

    ``fetch(n)`` returns the best ``n`` hits; the fetch size grows (4k, 16k, ...) until
    ``k`` hits pass or the ``available`` documents are exhausted.
    """
    if k < 1:
        return []
    if not metadata_filter:
        return list(fetch(k))
    n = k * _OVERFETCH
    while True:
        hits = list(fetch(n))
        keep = {id(d) for d in filter_docs_by_metadata([d for d, _ in hits], metadata_filter)}
        passing = [(d, s) for d, s in hits if id(d) in keep]
        if len(passing) >= k or len(hits) < n or n >= available:
            return passing[:k]
        n *= _OVERFETCH


class BM25RetrieverManager(BaseKleaRetriever):
    """Manages domain-specific BM25 keyword stores.

    Each BM25 store's ``path`` is either a pickled corpus of chunked documents written
    by ingestion (pickled lists read until EOF), indexed in memory with rank_bm25 and
    ranked as :class:`klea_utils.stores.langchain_bm25.BM25Retriever` ranks, or
    ``fts5:/path.sqlite``, an SQLite FTS5 index served by
    ``sci_etl_core.search.AsyncSqliteFts5Store`` (see
    :mod:`klea_utils.stores.retrieval.fts5_index`) for corpora beyond rank_bm25's comfort
    (its memory grows with the number of unique terms per chunk, heavy around 50-100k
    chunks). A store's ``stemming`` (see
    :class:`~klea_utils.stores.config.BM25StoreInfo`) matches words by their Porter stem
    (a pickled corpus stems unless it is ``False``). A query is searched for its content
    words: English stop words and question words are left out
    (:mod:`klea_utils.stores._retrieval.query_words`).

    A store whose corpus file is missing is skipped with a warning, so a misconfigured
    domain degrades instead of failing. Metadata filters are applied after scoring
    with ``filter_docs_by_metadata``, over-fetching so a filtered query still returns
    ``k`` documents when that many match.
    """

    source_label: str = "BM25"
    """Human-readable name for this retriever type, used to label scores."""

    def _stores_of(self, domain_name: str) -> Sequence[StoreInfo]:
        return self.config.domains[domain_name].bm25_stores

    def _instantiate_store(self, store: StoreInfo) -> Any | None:
        uri = StoreURI.bm25(store.path)
        if uri.scheme == "fts5":
            from klea_utils.stores.retrieval._fts5 import Fts5Bm25Index

            location = uri.location
            if not Path(location).is_file():
                self.logger.warning(
                    "BM25 store %r: FTS5 index %r not found; skipping it", store.name, location
                )
                return None
            return Fts5Bm25Index(location, stemming=getattr(store, "stemming", None))
        if not Path(store.path).is_file():
            self.logger.warning(
                "BM25 store %r: corpus %r not found; skipping it", store.name, store.path
            )
            return None
        # Imported here: rank_bm25 and numpy are for pickled corpora only. Not the public
        # BM25Retriever: a LangChain BaseRetriever, whose import (the tracing stack) costs
        # more than a query; both rank with bm25_scoring.top_documents.
        from klea_utils.stores._retrieval.bm25_scoring import (
            Bm25Index,
            default_preprocessing_func,
            stemmed_preprocessing_func,
        )

        docs = read_corpus(store.path)
        stemmed = getattr(store, "stemming", None) is not False  # stemmed unless told not
        preprocess = stemmed_preprocessing_func if stemmed else default_preprocessing_func
        self.logger.info(
            "BM25 store %r: indexed %d chunks%s", store.name, len(docs), " (stemmed)" * stemmed
        )
        return Bm25Index.from_documents(docs, preprocess)

    def _query_text(self, query: str) -> str:
        """``query`` normalized, with its Persian compounds also asked joined
        (:func:`~klea_utils.stores._retrieval.query_words.lexical_question`)."""
        return lexical_question(query)

    def _retrieve_from_store(
        self,
        store: StoreInfo,
        query: str,
        k: int,
        metadata_filter: dict[str, Any] | None,
    ) -> list[tuple[Document, float]]:
        index: Any = store.loaded_object
        if hasattr(index, "scored_documents"):  # a Bm25Index over a pickled corpus
            # The question's content words as written, repeats kept (rank_bm25 weighs a
            # word by how often the query has it): the corpus's own tokenizer (plain or
            # stemmed) then reads them as it read the chunks.
            words = " ".join(content_words(query, fold=False, distinct=False)) or query
            return filtered_top_k(
                lambda n: index.scored_documents(words, k=n), k, metadata_filter, len(index.docs)
            )
        return filtered_top_k(lambda n: index.search(query, n), k, metadata_filter, index.count())
