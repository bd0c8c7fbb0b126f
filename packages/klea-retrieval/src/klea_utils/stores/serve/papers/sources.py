"""Where klea-serve reads papers from: the stores themselves, not a copy in memory.

A :class:`PaperSource` answers three questions about the chunks one store holds, each
with a query of its own: how many passages each paper has, the metadata of each paper
(that of its first chunk), and one paper's chunks.
:class:`~klea_utils.stores.serve.papers.catalogue.PaperCatalogue` puts the sources of a
configuration together.

Implementations: :class:`Fts5PaperSource` (SQL over an ``fts5:`` index),
:class:`MemoryPaperSource` (chunks already in memory: a pickled corpus, or tests), and
the vector stores' in :mod:`klea_utils.stores.serve.papers.vector_sources`.
"""

from __future__ import annotations

import sqlite3
from abc import ABC, abstractmethod
from collections.abc import Hashable, Iterable, Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

from klea_utils.stores.serve.papers.grouped import GroupedPapers
from langchain_core.documents import Document

__all__ = ["Fts5PaperSource", "MemoryPaperSource", "PaperSource"]

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
    """Chunks already in memory (a pickled corpus), grouped by :class:`GroupedPapers`."""

    label = "memory"

    def __init__(self, documents: Iterable[Document]) -> None:
        self.grouped = GroupedPapers(documents)

    def passage_counts(self) -> dict[str, int]:
        return {name: len(p.passages) for name, p in self.grouped.papers.items()}

    def paper_metadata(self, file_names: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
        papers = self.grouped.papers
        names = papers if file_names is None else [n for n in file_names if n in papers]
        return {name: papers[name].metadata for name in names}

    def version(self) -> Hashable:
        return id(self.grouped)

    def passages(self, file_name: str) -> list[Document]:
        paper = self.grouped.papers.get(file_name)
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
