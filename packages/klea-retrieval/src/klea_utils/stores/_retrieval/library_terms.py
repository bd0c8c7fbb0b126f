"""How many passages of the whole library hold each question word: the focus's library IDF.

The passage focus (:mod:`~klea_utils.stores._retrieval.passage_focus`) weighs a question
word by how few of a file's pooled passages hold it. That weight knows the file, not the
language: inside a paper about water, "obtain" and "implicitly" can be held by as few
pooled passages as "unrealistic" or "renormalize", though every paper says the first two
and few say the others. Multiplied by the word's IDF over the whole library, the local
weight keeps what it measures (where in the file the word stands) and a common word no
longer counts as much as a rare one: the two IDFs of a word, ``log(1 + (n + 1) /
(holders + 0.5))`` each, over the file's pool and over the library.

The counts come from the loaded stores, the cheapest first:

* an ``fts5:`` index built with stemming answers from its own vocabulary (an
  ``fts5vocab`` table over a read-only connection, a few lookups per question);
* otherwise a store's texts are read once per loaded store and counted with
  :func:`~klea_utils.stores._retrieval.focus_words.passage_terms`: a pickled BM25
  corpus (already in memory), an ``fts5:`` index without stemming, a Chroma collection
  (read in pages). About 1.7 s of CPU for 11,500 chunks, paid by the first question of
  a process, and kept on disk for the next process while the store is unchanged
  (:mod:`~klea_utils.stores._retrieval.counts_cache`).

A domain whose stores offer neither (Qdrant or PGVector alone) keeps the pool's weights,
and so does a question whose counts cannot be read (a store moved or locked away): the
failure is logged once per store, and the question is answered without them.
"""

from __future__ import annotations

import logging
import math
import sqlite3
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from klea_utils.stores._retrieval.counts_cache import CountsCache
from klea_utils.stores._retrieval.focus_words import passage_terms
from klea_utils.stores._retrieval.vector_reads import chroma_pages

__all__ = ["LibraryCounts", "TermCounts", "count_passages", "library_counts"]

_LOG = logging.getLogger(__name__)
_PAGE = 2000
"""Chunks read from a Chroma collection per call when its texts are counted."""


@dataclass(frozen=True)
class TermCounts:
    """How many passages a library holds (``passages``) and how many hold each term."""

    passages: int
    holders: Mapping[str, int]

    def weights(self, terms: Iterable[str]) -> dict[str, float]:
        """Each term's IDF over the library (a term no passage holds weighs the most)."""
        n = self.passages
        return {t: math.log(1.0 + (n + 1.0) / (self.holders.get(t, 0) + 0.5)) for t in terms}


LibraryCounts = Callable[[Sequence[str]], TermCounts]
"""The counts of the terms asked for (a :class:`TermCounts` that holds at least those)."""


def count_passages(texts: Iterable[str]) -> TermCounts:
    """The counts of every term of ``texts`` (each passage counts a term once)."""
    holders: Counter[str] = Counter()
    passages = 0
    for text in texts:
        passages += 1
        holders.update(set(passage_terms(text)))
    return TermCounts(passages, dict(holders))


_UNCOUNTED = TermCounts(0, {})
"""No counts: every term weighs the same, so the pool's weights decide alone."""


def _unread(store: str, exc: Exception) -> TermCounts:
    _LOG.warning(
        "the words of %s could not be counted (%s: %s); the passage focus weighs them "
        "by the pooled passages alone",
        store,
        type(exc).__name__,
        exc,
    )
    return _UNCOUNTED


class _CountedOnce:
    """The counts of a store's texts, read on the first question (one thread reads), or
    kept from an earlier process while the store is unchanged (``cache``)."""

    def __init__(
        self, store: str, texts: Callable[[], Iterable[str]], cache: CountsCache | None = None
    ) -> None:
        self._store = store
        self._texts = texts
        self._cache = cache
        self._lock = threading.Lock()
        self._counts: TermCounts | None = None

    def __call__(self, terms: Sequence[str]) -> TermCounts:
        with self._lock:
            if self._counts is None:
                self._counts = self._kept_or_counted()
            return self._counts

    def _kept_or_counted(self) -> TermCounts:
        try:
            signature = self._cache.signature() if self._cache is not None else []
            kept = self._cache.load(signature) if self._cache is not None else None
            if kept is not None:
                return TermCounts(*kept)
            counts = count_passages(self._texts())
        except Exception as exc:  # an optional weight never fails a query
            return _unread(self._store, exc)
        if self._cache is not None:
            self._cache.save(signature, (counts.passages, dict(counts.holders)))
        return counts


def _fts5_stemmed(path: Path) -> bool:
    with _read_only(path) as connection:
        row = connection.execute(
            "SELECT sql FROM sqlite_master WHERE name = 'documents_fts'"
        ).fetchone()
    return row is not None and "porter" in str(row[0])


class _Fts5Vocabulary:
    """The counts an ``fts5:`` index built with stemming keeps (its ``fts5vocab`` rows)."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._warned = False

    def __call__(self, terms: Sequence[str]) -> TermCounts:
        try:
            return self._read(sorted(set(terms)))
        except sqlite3.Error as exc:
            if self._warned:
                return _UNCOUNTED
            self._warned = True
            return _unread(f"fts5 index {self._path.name}", exc)

    def _read(self, asked: list[str]) -> TermCounts:
        with _read_only(self._path) as connection:
            connection.execute(
                "CREATE VIRTUAL TABLE temp.klea_vocabulary "
                "USING fts5vocab(main, 'documents_fts', 'row')"
            )
            marks = ",".join("?" * len(asked))
            found = connection.execute(
                f"SELECT term, doc FROM temp.klea_vocabulary WHERE term IN ({marks})", asked
            ).fetchall()
            (passages,) = connection.execute('SELECT count(*) FROM "documents"').fetchone()
        return TermCounts(int(passages), {str(t): int(n) for t, n in found})


def _fts5_bodies(path: Path) -> Iterator[str]:
    with _read_only(path) as connection:
        for (body,) in connection.execute('SELECT body FROM "documents"'):
            yield str(body)


def _read_only(path: Path) -> closing[sqlite3.Connection]:
    return closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True))


def _chroma_texts(store: Any) -> Iterator[str]:
    return (text or "" for text in chroma_pages(store, "documents", _PAGE))


def library_counts(stores: Sequence[tuple[str, str, Any]]) -> LibraryCounts | None:
    """The cheapest source of library counts among a domain's loaded stores, or ``None``.

    ``stores`` are ``(scheme, location, store)``: the store's kind (``bm25``, a corpus in
    memory or an ``fts5:`` index; ``chroma``, ``qdrant`` or ``pgvector``), where it lives
    (a file, a folder), and the loaded store. A stemmed ``fts5:`` vocabulary comes first
    (nothing to read); otherwise the first store whose texts can be read, its counts kept
    between processes (:mod:`~klea_utils.stores._retrieval.counts_cache`).
    """
    found = [counts for kind in stores if (counts := _counts_of(*kind))]
    vocabularies = [counts for counts in found if isinstance(counts, _Fts5Vocabulary)]
    return (vocabularies or found or [None])[0]


def _counts_of(scheme: str, location: str, store: Any) -> LibraryCounts | None:
    if scheme not in ("bm25", "chroma"):
        return None
    place = Path(location).expanduser().resolve()
    if scheme == "bm25" and hasattr(store, "docs"):
        docs = store.docs
        cache = CountsCache(f"bm25\0{place}", [place])
        return _CountedOnce("a BM25 corpus", lambda: (d.page_content for d in docs), cache)
    if scheme == "bm25" and isinstance(getattr(store, "path", None), Path):
        path: Path = store.path
        try:
            stemmed = _fts5_stemmed(path)
        except sqlite3.Error:
            stemmed = False  # counted from its texts, or not at all (logged then)
        if stemmed:
            return _Fts5Vocabulary(path)
        cache = CountsCache(f"fts5\0{place}", _sqlite_files(place))
        return _CountedOnce(f"fts5 index {path.name}", lambda: _fts5_bodies(path), cache)
    if scheme == "chroma" and hasattr(store, "get"):
        collection = getattr(store, "_collection", None)
        name = getattr(collection, "name", "")
        cache = CountsCache(
            f"chroma\0{place}\0{name}",
            _sqlite_files(place / "chroma.sqlite3"),
            extra=lambda: collection.count() if collection is not None else None,
        )
        return _CountedOnce("a Chroma collection", lambda: _chroma_texts(store), cache)
    return None


def _sqlite_files(path: Path) -> list[Path]:
    """A SQLite database's file and its write-ahead log (a write lands there first)."""
    return [path, path.with_name(path.name + "-wal")]
