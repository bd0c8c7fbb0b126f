"""Serving an ``fts5:`` BM25 store to the synchronous, multi-threaded retriever manager."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

from klea_utils.stores._retrieval.query_words import (
    LEXICAL_STOPWORDS,
    QUERY_STOPWORDS,
    QUESTION_WORDS,
)
from klea_utils.stores.exceptions import StoreBackendError
from klea_utils.stores.retrieval.fts5_index import open_fts5_store
from klea_utils.stores.utils import normalize_text
from langchain_core.documents import Document
from sci_etl_core.exceptions import SearchStoreError
from sci_etl_core.search.multiscript import MultiscriptTokenizer
from sci_etl_core.search.parser import parse_query
from sci_etl_core.search.query import Node, Or, Term
from sci_etl_core.search.questions import question_query, question_words

__all__ = ["QUERY_STOPWORDS", "QUESTION_WORDS", "Fts5Bm25Index", "fts5_query"]

T = TypeVar("T")
_MULTISCRIPT = MultiscriptTokenizer()


def fts5_query(text: str, *, multiscript: bool = False) -> Node | None:
    """Build the ranked query of free text: an OR of its distinct words over the body.

    Words are the tokens FTS5's ``unicode61 remove_diacritics 2`` tokenizer makes of the
    normalized text (:class:`sci_etl_core.search.Unicode61Tokenizer`, so case and
    diacritics fold and ``snake_case`` is two words), less :data:`QUERY_STOPWORDS` and
    :data:`QUESTION_WORDS` (:func:`sci_etl_core.search.question_query` with klea's
    :data:`~klea_utils.stores._retrieval.query_words.LEXICAL_STOPWORDS`); ``None`` when
    the text has no word. A stemming index stems these words itself.

    With ``multiscript`` (the index is a multiscript one) each word is cut into the words
    of :class:`~sci_etl_core.search.multiscript.MultiscriptTokenizer` and the query is the
    OR of those: a Chinese question typed without spaces is one ``unicode61`` word, and
    its bigrams, not the whole clause, are what a passage shares with it.
    """
    if multiscript:
        return _multiscript_query(text)
    query = question_query(normalize_text(text), stop_words=LEXICAL_STOPWORDS, fields=("body",))
    return parse_query(query) if query else None


def _multiscript_query(text: str) -> Node | None:
    words = question_words(normalize_text(text), stop_words=LEXICAL_STOPWORDS)
    found = dict.fromkeys(w for word in words for w in _MULTISCRIPT.words(word))
    terms = [Term(word, ("body",)) for word in found]
    if not terms:
        return None
    return terms[0] if len(terms) == 1 else Or(tuple(terms))


class Fts5Bm25Index:
    """A read handle on an ``fts5:`` index, safe to share between threads.

    The async store lives on a private event loop in a daemon thread; every call is
    submitted to it, so callers need no event loop of their own.
    """

    def __init__(
        self, path: str | Path, *, stemming: bool | None = None, multiscript: bool | None = None
    ) -> None:
        self.path = Path(path)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name=f"fts5:{self.path.name}", daemon=True
        )
        self._thread.start()
        self._store = open_fts5_store(self.path, stemming=stemming, multiscript=multiscript)
        self._opened = False

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        try:
            return asyncio.run_coroutine_threadsafe(coro, self._loop).result()
        except SearchStoreError as exc:
            hint = ""
            if "stemming" in str(exc) or "multiscript" in str(exc):
                hint = (
                    "; set the BM25 store's stemming to null to follow the index, or "
                    f"re-tokenize it: sci-etl-search maintain rebuild-index --db {self.path} "
                    "--stemming (or --no-stemming)"
                )
            raise StoreBackendError(f"BM25 store fts5:{self.path}: {exc}{hint}") from exc

    def count(self) -> int:
        """Number of chunks in the index."""
        return int(self._run(self._store.count()))

    def search(self, text: str, limit: int) -> list[tuple[Document, float]]:
        """Return the best ``limit`` chunks for free ``text``, with their BM25 scores."""
        if limit < 1:
            return []
        return self._run(self._search(text, limit))

    async def _search(self, text: str, limit: int) -> list[tuple[Document, float]]:
        if not self._opened:
            await self._store.count()  # opens the file: multiscript is then the file's choice
            self._opened = True
        node = fts5_query(text, multiscript=self._store.multiscript)
        if node is None:
            return []
        hits = await self._store.search(node, limit=limit)
        stored = await self._store.get_documents([h.record_id for h in hits])
        out: list[tuple[Document, float]] = []
        for hit in hits:
            doc = stored.get(hit.record_id)
            if doc is not None:
                document = Document(id=hit.record_id, page_content=doc.body, metadata=doc.metadata)
                out.append((document, float(hit.score)))
        return out

    def documents(self, record_ids: list[str]) -> list[Document]:
        """The stored chunks of ``record_ids`` (unknown ids left out), in the order asked."""
        stored = self._run(self._store.get_documents(record_ids))
        return [
            Document(id=rid, page_content=stored[rid].body, metadata=stored[rid].metadata)
            for rid in record_ids
            if rid in stored
        ]

    def close(self) -> None:
        """Close the store and stop the private loop (idempotent)."""
        if self._loop.is_closed():
            return
        self._run(self._store.aclose())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()
