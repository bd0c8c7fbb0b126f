"""BM25 scoring of an in-memory corpus on rank_bm25, without LangChain's retriever machinery.

:class:`Bm25Index` is what :class:`~klea_utils.stores.retrieval.bm25.BM25RetrieverManager`
keeps for a pickled corpus, and :func:`top_documents` is the ranking that
:class:`~klea_utils.stores.langchain_bm25.BM25Retriever` returns too, so the two score
alike. The public retriever is a LangChain ``BaseRetriever``, whose import brings in the
tracing stack (langsmith; about a second of a cold ``klea-retrieve`` on a small machine)
that a query over a keyword store never uses.

The tokenizers are documented as :func:`klea_utils.stores.langchain_bm25.default_preprocessing_func`
and :func:`~klea_utils.stores.langchain_bm25.stemmed_preprocessing_func`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from klea_utils.stores.text import normalize_text
from sci_etl_core.search.multiscript import MultiscriptTokenizer
from sci_etl_core.search.stemming import PorterTokenizer

if TYPE_CHECKING:
    from langchain_core.documents import Document

__all__ = [
    "Bm25Index",
    "build_vectorizer",
    "default_preprocessing_func",
    "stemmed_preprocessing_func",
    "top_documents",
]

_WORD = re.compile(r"\w+")
_PORTER = PorterTokenizer(MultiscriptTokenizer())


def default_preprocessing_func(text: str) -> list[str]:
    """Tokenize text for BM25: ``normalize_text``, case folding, runs of word characters.

    Documents and queries go through the same function, so a ligature, soft hyphen or
    full-width letter in either side still matches its plain form.

    Example::

        default_preprocessing_func("Ef\\ufb01cient  NEURONS, e.g.")
        -> ["efficient", "neurons", "e", "g"]
    """
    return _WORD.findall(normalize_text(text).casefold())


def stemmed_preprocessing_func(text: str) -> list[str]:
    """Tokenize text for BM25 into Porter stems, exactly as a new ``fts5:`` index stems it.

    ``normalize_text``, then SQLite FTS5's ``porter unicode61 remove_diacritics 2``
    tokenizer reproduced in Python (``sci_etl_core.search.PorterTokenizer``): case
    and diacritics folded, split at every character that is not a letter or digit,
    each word reduced to its Porter stem. Words of the scripts ``unicode61`` cannot
    split or fold are those of ``sci_etl_core.search.MultiscriptTokenizer`` (issue 37):
    Chinese and Japanese as character bigrams, Korean without its particles, Thai as
    cluster bigrams, Arabic and Persian letters normalised; English text gives exactly
    the stems it gave before. The corpus is indexed when the store loads, so its chunks
    and the queries always go through the same function.

    Example::

        stemmed_preprocessing_func("Inhibition of MEK inhibits relapses")
        -> ["inhibit", "of", "mek", "inhibit", "relaps"]
        stemmed_preprocessing_func("图像分割")
        -> ["图像", "像分", "分割"]
    """
    return _PORTER.words(normalize_text(text))


def build_vectorizer(
    docs: Sequence[Document],
    preprocess_func: Callable[[str], list[str]],
    bm25_params: dict[str, Any] | None = None,
) -> Any:
    """The rank_bm25 ``BM25Okapi`` index of ``docs``; ``None`` for an empty corpus."""
    if not docs:
        return None
    from rank_bm25 import BM25Okapi

    corpus = [preprocess_func(d.page_content) for d in docs]
    return BM25Okapi(corpus, **(bm25_params or {}))


def top_documents(
    vectorizer: Any, docs: Sequence[Document], tokens: list[str], limit: int
) -> list[tuple[Document, float]]:
    """The best ``limit`` of ``docs`` for the query ``tokens``, with their BM25 scores.

    Documents are ordered by score descending, equal scores by corpus position.
    Documents sharing no term with the query are left out.
    """
    if vectorizer is None or limit < 1 or not tokens:
        return []
    scores = np.asarray(vectorizer.get_scores(tokens), dtype=float)
    candidates = np.flatnonzero(_matching(vectorizer, len(docs), tokens, scores))
    order = candidates[np.argsort(-scores[candidates], kind="stable")][:limit]
    return [(docs[int(i)], float(scores[i])) for i in order]


def _matching(vectorizer: Any, count: int, tokens: list[str], scores: Any) -> Any:
    """Mask of documents holding a query term (a term's IDF can be exactly 0)."""
    mask = scores != 0.0
    idf = vectorizer.idf
    zero = [t for t in set(tokens) if idf.get(t) == 0]
    if zero:
        mask |= np.fromiter(
            (any(t in freqs for t in zero) for freqs in vectorizer.doc_freqs),
            dtype=bool,
            count=count,
        )
    return mask


@dataclass(frozen=True, eq=False)
class Bm25Index:
    """A corpus of documents indexed by rank_bm25, queried for scored documents.

    Attributes:
        docs: The indexed documents, in corpus order.
        preprocess_func: Tokenizes the documents and every query.
        vectorizer: The rank_bm25 ``BM25Okapi`` index; ``None`` for an empty corpus.
    """

    docs: list[Document]
    preprocess_func: Callable[[str], list[str]]
    vectorizer: Any = None

    @classmethod
    def from_documents(
        cls,
        docs: list[Document],
        preprocess_func: Callable[[str], list[str]] = default_preprocessing_func,
        bm25_params: dict[str, Any] | None = None,
    ) -> Bm25Index:
        """Index ``docs`` (kept as given)."""
        return cls(docs, preprocess_func, build_vectorizer(docs, preprocess_func, bm25_params))

    def scored_documents(self, query: str, k: int) -> list[tuple[Document, float]]:
        """The best ``k`` documents for ``query`` with their scores (see :func:`top_documents`)."""
        if self.vectorizer is None or k < 1:
            return []
        return top_documents(self.vectorizer, self.docs, self.preprocess_func(query), k)
