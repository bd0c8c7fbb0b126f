"""Where klea-serve reads papers from: the stores themselves, not a copy in memory.

A :class:`PaperSource` answers three questions about the chunks one store holds, each
with a query of its own: how many passages each paper has, the metadata of each paper
(that of its first chunk), and one paper's chunks. :class:`StoreLibrary` puts the sources
of a configuration together and answers ``get_document`` and ``facets`` with them, so
what the service holds does not grow with the library.

Implementations: :class:`Fts5PaperSource` (SQL over an ``fts5:`` index),
:class:`MemoryPaperSource` (chunks already in memory: a pickled corpus, or tests), and
the vector stores' in :mod:`klea_utils.stores.serve.paper_vectors`.
"""

from __future__ import annotations

import sqlite3
import threading
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

from klea_utils.stores.serve.library import (
    FACET_KEYS,
    Library,
    Paper,
    display_metadata,
    facet_values,
)
from langchain_core.documents import Document

__all__ = [
    "Fts5PaperSource",
    "MemoryPaperSource",
    "PaperSource",
    "StoreLibrary",
    "check_facet_keys",
]

_BATCH = 500
"""File names per ``IN (...)`` list (SQLite allows 32,766 parameters; smaller is faster)."""


class PaperSource(ABC):
    """The papers of one store, read on demand."""

    label: str = "store"

    @abstractmethod
    def passage_counts(self) -> dict[str, int]:
        """Passages per file name."""

    @abstractmethod
    def paper_metadata(self, file_names: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
        """The metadata of each paper (its first chunk's), for ``file_names`` or all."""

    @abstractmethod
    def passages(self, file_name: str) -> list[Document]:
        """Every chunk of ``file_name``, in any order (``[]`` when unknown)."""

    def version(self) -> Hashable:
        """A cheap value that changes when the store's contents change."""
        return None

    def close(self) -> None:  # noqa: B027 - most sources hold nothing to close
        """Release what the source holds open."""


class MemoryPaperSource(PaperSource):
    """Chunks already in memory (a pickled corpus), grouped by :class:`Library`."""

    label = "memory"

    def __init__(self, documents: Iterable[Document]) -> None:
        self.library = Library(documents)

    def passage_counts(self) -> dict[str, int]:
        return {name: len(p.passages) for name, p in self.library.papers.items()}

    def paper_metadata(self, file_names: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
        papers = self.library.papers
        names = papers if file_names is None else [n for n in file_names if n in papers]
        return {name: papers[name].metadata for name in names}

    def version(self) -> Hashable:
        return id(self.library)

    def passages(self, file_name: str) -> list[Document]:
        paper = self.library.papers.get(file_name)
        return list(paper.passages) if paper else []


def _file_names_sql(tagged: bool) -> str:
    """``(file_name, doc_id)`` of every record: the ``file_name`` tags when the index
    tags them (an index lookup), else the JSON of every record (a scan)."""
    if tagged:
        return 'SELECT "value" AS "file", "doc_id" FROM "tags" WHERE "key" = \'file_name\''
    return (
        'SELECT json_extract("metadata", \'$.file_name\') AS "file", "doc_id" '
        'FROM "documents" WHERE json_valid("metadata")'
    )


class Fts5PaperSource(PaperSource):
    """The chunks of an ``fts5:`` index (``klea-stores-create build --fts5-store``).

    Each call opens the file read-only, so a rebuilt index is read as it is now.
    """

    label = "fts5"

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def version(self) -> Hashable:
        """Size and modification time of the file and of its write-ahead log when it holds
        anything: an empty log comes and goes as connections open and close (the last one
        to close removes it), with the contents unchanged."""
        stats = []
        for path in (self.path, self.path.with_name(self.path.name + "-wal")):
            try:
                stat = path.stat()
            except OSError:
                stats.append((0, 0))
            else:
                stats.append((stat.st_mtime_ns, stat.st_size) if stat.st_size else (0, 0))
        return tuple(stats)

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True)

    def _files(self, connection: sqlite3.Connection) -> str:
        row = connection.execute(
            'SELECT 1 FROM "tags" WHERE "key" = \'file_name\' LIMIT 1'
        ).fetchone()
        return _file_names_sql(row is not None)

    def passage_counts(self) -> dict[str, int]:
        with closing(self._connect()) as connection:
            files = self._files(connection)
            rows = connection.execute(
                f'SELECT "file", COUNT(*) FROM ({files}) WHERE "file" IS NOT NULL GROUP BY "file"'
            ).fetchall()
        return {str(name): int(count) for name, count in rows if name}

    def paper_metadata(self, file_names: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
        import json

        out: dict[str, dict[str, Any]] = {}
        with closing(self._connect()) as connection:
            files = self._files(connection)
            batches: list[list[str] | None] = (
                [None]
                if file_names is None
                else [list(file_names[i : i + _BATCH]) for i in range(0, len(file_names), _BATCH)]
            )
            for batch in batches:
                where = "" if batch is None else f'AND "file" IN ({",".join("?" * len(batch))})'
                sql = (
                    'SELECT f."file", d."metadata" FROM "documents" AS d JOIN ('
                    f'SELECT "file", MIN("doc_id") AS "doc_id" FROM ({files}) '
                    f'WHERE "file" IS NOT NULL {where} GROUP BY "file") AS f '
                    'ON d."doc_id" = f."doc_id"'
                )
                for name, metadata in connection.execute(sql, batch or ()):
                    if name:
                        out[str(name)] = json.loads(metadata)
        return out

    def passages(self, file_name: str) -> list[Document]:
        import json

        with closing(self._connect()) as connection:
            files = self._files(connection)
            rows = connection.execute(
                'SELECT d."record_id", d."body", d."metadata" FROM "documents" AS d '
                f'JOIN ({files}) AS f ON d."doc_id" = f."doc_id" WHERE f."file" = ? '
                'ORDER BY d."doc_id"',
                (file_name,),
            ).fetchall()
        return [
            Document(id=rid, page_content=body, metadata=json.loads(meta))
            for rid, body, meta in rows
        ]


def check_facet_keys(keys: Sequence[str]) -> None:
    """Raise ``ValueError`` naming every key that is not one of :data:`FACET_KEYS`."""
    unknown = [k for k in keys if k not in FACET_KEYS]
    if unknown:
        raise ValueError(
            f"unknown facet key(s) {', '.join(map(repr, unknown))}; "
            f"choose from {', '.join(FACET_KEYS)}"
        )


_FacetRow = dict[str, list[str]]


def _facet_row(metadata: dict[str, Any]) -> _FacetRow:
    shown = display_metadata(metadata)
    return {key: list(dict.fromkeys(facet_values(shown, key))) for key in FACET_KEYS}


def _count(rows: Iterable[_FacetRow], keys: Sequence[str]) -> dict[str, list[tuple[str, int]]]:
    counters: dict[str, Counter[str]] = {key: Counter() for key in keys}
    for row in rows:
        for key in keys:
            counters[key].update(row[key])
    return {
        key: sorted(counter.items(), key=lambda item: (-item[1], item[0]))
        for key, counter in counters.items()
    }


class StoreLibrary:
    """Papers, passages and facet counts read from the stores.

    One paper, and the facets of a query's papers, are read on each call. The whole
    library's passage counts (one ``GROUP BY`` over the index's file-name tags) and each
    paper's facet values (one small row per paper, never its passages) are kept until a
    source's :meth:`PaperSource.version` changes, each read on its first use: ``health``
    counts passages without reading every paper's metadata, which only :meth:`count_facets` over
    every paper needs.

    Several sources may hold the same paper (two stores of one corpus): a paper's
    passages are merged by text, and its metadata is the first source's.
    """

    def __init__(self, sources: Sequence[PaperSource]) -> None:
        self.sources = tuple(sources)
        self._lock = threading.Lock()
        self._counts: tuple[Hashable, dict[str, int]] | None = None
        self._rows: tuple[Hashable, dict[str, _FacetRow]] | None = None

    def _version(self) -> Hashable:
        return tuple(source.version() for source in self.sources)

    def passage_counts(self) -> dict[str, int]:
        """Passages per paper over every source (the larger count where two hold one)."""
        version = self._version()
        with self._lock:
            if self._counts is None or self._counts[0] != version:
                counts: dict[str, int] = {}
                for source in self.sources:
                    for name, count in source.passage_counts().items():
                        counts[name] = max(counts.get(name, 0), count)
                self._counts = (version, counts)
            return dict(self._counts[1])

    def _facet_rows(self) -> dict[str, _FacetRow]:
        version = self._version()
        with self._lock:
            if self._rows is None or self._rows[0] != version:
                rows = {n: _facet_row(m) for n, m in self.paper_metadata().items()}
                self._rows = (version, rows)
            return self._rows[1]

    def paper(self, file_name: str) -> Paper | None:
        """The paper ``file_name`` with its passages in reading order, or ``None``."""
        documents = [doc for source in self.sources for doc in source.passages(file_name)]
        return Library(documents).papers.get(file_name)

    def paper_metadata(self, file_names: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
        """Each paper's metadata, the first source's where several hold it."""
        found: dict[str, dict[str, Any]] = {}
        for source in self.sources:
            for name, metadata in source.paper_metadata(file_names).items():
                found.setdefault(name, metadata)
        return found

    def count_facets(
        self, keys: Sequence[str], file_names: Iterable[str] | None = None
    ) -> tuple[int, dict[str, list[tuple[str, int]]]]:
        """The number of papers counted, and the papers per value of each key, most
        frequent first (ties by value).

        ``file_names`` restricts the count to those papers (e.g. a query's results); a
        name no source holds is not counted.

        Raises:
            ValueError: When a key is not one of :data:`FACET_KEYS`.
        """
        check_facet_keys(keys)
        if file_names is None:
            rows = self._facet_rows()
            return len(rows), _count(rows.values(), keys)
        names = list(dict.fromkeys(file_names))
        if not names:
            return 0, {key: [] for key in keys}
        found = [_facet_row(meta) for meta in self.paper_metadata(names).values()]
        return len(found), _count(found, keys)

    def close(self) -> None:
        """Close every source."""
        for source in self.sources:
            source.close()
