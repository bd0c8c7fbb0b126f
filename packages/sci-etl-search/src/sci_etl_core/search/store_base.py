"""The values a text search store holds and returns, and the store interface itself."""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sci_etl_core.search._store_checks import check_range_request
from sci_etl_core.search.filters import RangeFilter, SearchFilter
from sci_etl_core.search.tokenize import Tokenizer, Unicode61Tokenizer

if TYPE_CHECKING:
    from sci_etl_core.search.query import Node

__all__ = ["AsyncTextSearchStore", "BM25Weights", "SearchDocument", "Snippet", "TextHit"]

_FIELDS = ("title", "abstract", "body")
_DEFAULT_TOKENIZER = Unicode61Tokenizer()


@dataclass(frozen=True)
class SearchDocument:
    """One article's searchable text, as a single indexable unit.

    The lexical index holds one document per record, while the vector memory
    holds one row per chunk. BM25 saturates on term frequency and normalizes by
    document length, so chunking a document would fragment its statistics and
    inflate short chunks.

    ``metadata`` is stored as JSON and reads back as JSON: a ``datetime`` put in
    comes back as its ISO 8601 string. Field types are not enforced.
    :class:`~sci_etl_core.search.filters.MetadataFilter` matches exact values,
    and :class:`~sci_etl_core.search.filters.RangeFilter` ranges of integers or
    of text such as ISO 8601 dates.

    Raises:
        TypeError: ``record_id`` or a text field is not a string, or ``metadata`` is not a dict.
        ValueError: ``record_id`` is empty or holds a lone surrogate.
    """

    record_id: str
    title: str = ""
    abstract: str = ""
    body: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.record_id, str):
            raise TypeError(
                f"SearchDocument.record_id must be a string, not {type(self.record_id).__name__}"
            )
        if not self.record_id:
            raise ValueError("SearchDocument.record_id must not be empty")
        if any("\ud800" <= char <= "\udfff" for char in self.record_id):
            raise ValueError(
                f"SearchDocument.record_id {self.record_id!r} holds a lone surrogate, "
                "which no store can keep"
            )
        for name in _FIELDS:
            value = getattr(self, name)
            if not isinstance(value, str):
                raise TypeError(
                    f"SearchDocument {self.record_id!r}: field {name!r} must be a string, "
                    f"not {type(value).__name__}"
                )
        if not isinstance(self.metadata, dict):
            raise TypeError(
                f"SearchDocument {self.record_id!r}: metadata must be a dict, "
                f"not {type(self.metadata).__name__}"
            )


def _check_highlights(owner: str, text: str, highlights: tuple[tuple[int, int], ...]) -> None:
    for start, end in highlights:
        if not 0 <= start < end <= len(text):
            raise ValueError(
                f"{owner}: highlight ({start}, {end}) is not a non-empty range of its text"
            )


@dataclass(frozen=True)
class Snippet:
    """A passage of one field, with the matched words marked.

    ``field`` is one of :data:`~sci_etl_core.search.query.FIELDS`. ``text`` is
    plain text of at most :data:`~sci_etl_core.search.filters.SNIPPET_TOKENS`
    tokens, starting or ending with
    :data:`~sci_etl_core.search.filters.SNIPPET_ELLIPSIS` where the field goes
    on, and ``highlights`` are half-open ``[start, end)`` character offsets into
    ``text``.

    Raises:
        ValueError: ``field`` is not a field name, or a highlight lies outside ``text``.
    """

    field: str
    text: str
    highlights: tuple[tuple[int, int], ...] = ()

    def __post_init__(self) -> None:
        if self.field not in _FIELDS:
            raise ValueError(f"Snippet.field must be one of {_FIELDS}, not {self.field!r}")
        object.__setattr__(self, "highlights", tuple((int(a), int(b)) for a, b in self.highlights))
        _check_highlights("Snippet", self.text, self.highlights)


@dataclass(frozen=True)
class TextHit:
    """A document returned from a Boolean query, with its lexical score.

    ``score`` is higher for a better match, and is never the raw negative value
    SQLite's ``bm25()`` returns. Its scale depends on the corpus, so compare
    scores only within one result list. ``snippet`` is plain text from the
    field matching best, and ``highlights`` are half-open ``[start, end)``
    character offsets into it covering the matched words, so a UI applies its
    own markup. ``snippets`` holds one :class:`Snippet` for every field with a
    highlighted match, in :data:`~sci_etl_core.search.query.FIELDS` order, so a
    UI can show a match in the title and one in the body together. ``title``
    and ``metadata`` are the document's, as the store reads them back.
    """

    record_id: str
    score: float
    snippet: str = ""
    highlights: tuple[tuple[int, int], ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)
    title: str = ""
    snippets: tuple[Snippet, ...] = ()

    def __post_init__(self) -> None:
        if not self.record_id:
            raise ValueError("TextHit.record_id must not be empty")
        _check_highlights(f"TextHit {self.record_id!r}", self.snippet, self.highlights)


@dataclass(frozen=True)
class BM25Weights:
    """How much a match in each field counts towards a document's BM25 score.

    The defaults weight the title above the abstract above the body.

    Raises:
        ValueError: A weight is negative or not finite.
    """

    title: float = 2.0
    abstract: float = 1.0
    body: float = 0.5

    def __post_init__(self) -> None:
        for name in _FIELDS:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"BM25Weights.{name} must be a number, not {type(value).__name__}")
            if not math.isfinite(value) or value < 0:
                raise ValueError(
                    f"BM25Weights.{name} must be finite and not negative, not {value!r}"
                )

    def as_tuple(self) -> tuple[float, float, float]:
        """Return the weights in :data:`~sci_etl_core.search.query.FIELDS` order."""
        return (float(self.title), float(self.abstract), float(self.body))


class AsyncTextSearchStore(ABC):
    """An accumulating lexical index of articles, searchable by Boolean query.

    The index is per record, while the vector memory is per chunk (see
    :class:`SearchDocument`), so lexical and semantic results are fused at the
    record level.

    Queries arrive as parsed, normalized ASTs, never as text: a store never
    parses, so no backend can invent its own dialect. Metadata filters apply to
    the keys in :attr:`facet_keys` only, and a filter or facet on any other key
    raises :class:`ValueError` before any I/O.
    """

    @property
    @abstractmethod
    def facet_keys(self) -> frozenset[str]:
        """The metadata keys this store tags documents by, for filters and facets."""

    @property
    def tokenizer(self) -> Tokenizer:
        """The tokenizer whose words this store matches, for highlighting text found elsewhere.

        A hybrid search highlights the query's words in a semantic-only hit's passage
        with it, so a stemming store highlights ``matching`` for the query ``matches``.
        By default :class:`~sci_etl_core.search.tokenize.Unicode61Tokenizer`.
        """
        return _DEFAULT_TOKENIZER

    @abstractmethod
    async def index(self, documents: Sequence[SearchDocument]) -> None:
        """Store ``documents``, replacing any stored document with the same ``record_id``.

        Control characters other than tab and line breaks are stored as spaces.
        When ``documents`` repeats a ``record_id``, the last one is kept.
        """

    @staticmethod
    def _latest_documents(documents: Sequence[SearchDocument]) -> list[SearchDocument]:
        """Return ``documents`` as :meth:`index` stores them: one per record, the last one.

        Raises:
            TypeError: An item is not a :class:`SearchDocument`.
        """
        latest: dict[str, SearchDocument] = {}
        for position, document in enumerate(documents):
            if not isinstance(document, SearchDocument):
                raise TypeError(
                    f"documents[{position}] is a {type(document).__name__}, not a SearchDocument"
                )
            latest.pop(document.record_id, None)
            latest[document.record_id] = document
        return list(latest.values())

    @abstractmethod
    async def delete_record(self, record_id: str) -> None:
        """Remove the document of ``record_id``, if one is stored."""

    async def replace_record(self, document: SearchDocument) -> None:
        """Make ``document`` the stored document of its record.

        The default deletes and then indexes; a backend that can upsert
        atomically should override it.
        """
        await self.delete_record(document.record_id)
        await self.index([document])

    @abstractmethod
    async def search(
        self,
        query: Node,
        limit: int = 20,
        exclude_record_id: str | None = None,
        filters: Sequence[SearchFilter] = (),
    ) -> list[TextHit]:
        """Rank the documents matching ``query`` and ``filters`` by BM25, best first.

        Equal scores are ordered by ``record_id``. ``filters`` apply before
        ``limit``, so a filtered search still returns up to ``limit`` hits.
        A ``limit`` below 1 returns no hits.

        Raises:
            ValueError: A filter's key is not in :attr:`facet_keys`, or two filters share a key.
            SearchQueryError: ``query`` cannot be ranked, such as a pure negation.
            SearchStoreError: The index cannot be read, or a filter's key has no
                built tags yet (see ``rebuild_tags``).
        """

    @abstractmethod
    async def filter_ids(
        self,
        query: Node | None = None,
        filters: Sequence[SearchFilter] = (),
    ) -> frozenset[str]:
        """Return every record satisfying ``query`` and ``filters``, in no order.

        Any query is accepted, including a pure negation, which is why the
        result carries no order. ``query=None`` matches every document.

        Raises:
            ValueError: A filter's key is not in :attr:`facet_keys`, or two filters share a key.
            SearchStoreError: The index cannot be read, or a filter's key has no
                built tags yet (see ``rebuild_tags``).
        """

    @abstractmethod
    async def get_documents(self, record_ids: Collection[str]) -> dict[str, SearchDocument]:
        """Return the stored documents for ``record_ids``; unknown ids are omitted."""

    @abstractmethod
    async def facet_counts(
        self,
        keys: Sequence[str],
        *,
        query: Node | None = None,
        filters: Sequence[SearchFilter] = (),
    ) -> dict[str, tuple[tuple[str, int], ...]]:
        """Count matching documents per value of each facet key.

        For each key, documents are counted when they satisfy ``query`` and
        every filter whose key is not ``key``; filters on ``key`` itself are
        ignored for that key's counts. Each count answers "how many results
        would this value give if it were selected instead". When ``filters``
        has no filter on ``key``, the exclusion is a no-op, and that key's
        counts are over the full match set of ``query`` and every other key's
        filter. Values are sorted by count descending, then value ascending.
        Values with a count of 0 are omitted from the returned tuple, and a key
        with no matching value maps to an empty tuple.

        Raises:
            ValueError: A key in ``keys`` or ``filters`` is not in :attr:`facet_keys`,
                or two filters share a key.
            SearchStoreError: The index cannot be read, or a key in ``keys`` or
                ``filters`` has no built tags yet (see ``rebuild_tags``).
        """

    async def range_counts(
        self,
        ranges: Sequence[RangeFilter],
        *,
        query: Node | None = None,
        filters: Sequence[SearchFilter] = (),
    ) -> tuple[int, ...]:
        """Count matching documents inside each of ``ranges``, in the order given.

        Each count is of the documents satisfying ``query``, the range, and every
        filter whose key is not the range's key, so a count answers "how many
        results would this range give if it were selected instead", as
        :meth:`facet_counts` does for exact values. Ranges may share a key and
        overlap, as buckets of a histogram or presets such as "last 5 years" do,
        and a negated range counts the documents outside it.

        The default runs :meth:`filter_ids` once per range; a backend that can
        count in one read should override it.

        Raises:
            ValueError: A key in ``ranges`` or ``filters`` is not in :attr:`facet_keys`,
                or two filters share a key.
            SearchStoreError: The index cannot be read, or a key has no built
                tags yet (see ``rebuild_tags``).
        """
        _, filters = check_range_request(ranges, query, filters, self.facet_keys)
        counts: list[int] = []
        for item in ranges:
            others = [f for f in filters if f.key != item.key]
            counts.append(len(await self.filter_ids(query, [*others, item])))
        return tuple(counts)

    @abstractmethod
    async def count(self) -> int:
        """Return how many documents the store holds."""

    @abstractmethod
    async def aclose(self) -> None:
        """Release what the store holds open; a later call may open it again."""
