"""The catalogue of the library: its papers, passages and facet counts, read from the stores.

:class:`PaperCatalogue` puts the
:class:`~klea_utils.stores.serve.papers.sources.PaperSource` of each store of a
configuration together and answers ``get_document`` and ``facets`` with them, so what the
service holds does not grow with the library (the user's collection of papers).
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from typing import Any

from klea_utils.stores.serve.papers.grouped import GroupedPapers
from klea_utils.stores.serve.papers.paper import (
    FACET_KEYS,
    Paper,
    check_facet_keys,
    display_metadata,
    facet_values,
)
from klea_utils.stores.serve.papers.sources import PaperSource

__all__ = ["PaperCatalogue"]

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


class PaperCatalogue:
    """Papers, passages and facet counts read from the stores.

    One paper, and the facets of a query's papers, are read on each call. The whole
    library's passage counts (one ``GROUP BY`` over the index's file-name tags) and each
    paper's facet values (one small row per paper, never its passages) are kept until a
    source's :meth:`PaperSource.version` changes, each read on its first use: ``health``
    counts passages without reading every paper's metadata, which only :meth:`count_facets`
    over every paper needs.

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
        return GroupedPapers(documents).papers.get(file_name)

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
