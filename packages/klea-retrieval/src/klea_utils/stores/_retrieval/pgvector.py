"""A PGVector store whose metadata filters accept any field name (internal).

``langchain_postgres`` writes a field name into the JSON path of a comparison
(``$.year >= $value``), so it refuses every name that is not a Python identifier, such as
``has-hyphen``. :class:`KleaPGVector` handles those names itself: the name is quoted as a
JSON path string (``$."has-hyphen"``), and the whole path, like every value, travels to
PostgreSQL as a bound parameter, so a field name can neither change the SQL nor the path.
Identifier names go through ``langchain_postgres`` unchanged.

It also keeps collections of one database apart and indexed (see ``_retrieval/pg_layout.py``):
a collection it creates stores chunk ids scoped by the collection, gets a partial HNSW
index on its own rows, and orders its queries by the indexed expression; reads give
back the chunk ids that were added, and deletes touch only the collection's rows.
Needs the ``pgvector`` extra.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from typing import Any

from klea_utils.stores._retrieval.pg_layout import (
    PGLayout,
    drop_index_sql,
    hnsw_index_sql,
    index_name,
    public_id,
    stored_id,
)
from klea_utils.stores.exceptions import StoreBackendError, StoreConfigError
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_postgres import PGVector
from langchain_postgres.vectorstores import COMPARISONS_TO_NATIVE, DistanceStrategy
from pgvector.sqlalchemy import Vector
from sqlalchemy import cast, delete, func, select, text
from sqlalchemy.dialects.postgresql import JSONB, JSONPATH
from sqlalchemy.orm import Session

__all__ = ["KleaPGVector", "json_path_key", "search_breadth"]

_MIN_EF_SEARCH = 100
"""Least ``hnsw.ef_search`` of a query (pgvector's default is 40). On 20,000 MiniLM
vectors of SciFact passages, recall@5 against the exact top 5 is 0.976 at 40 and 0.994
at 100, for 9.4 and 12.1 ms (``scripts/bench/pgvector_index.py``)."""

_MAX_EF_SEARCH = 1000
"""pgvector's largest ``hnsw.ef_search``; a larger ``k`` is served by the exact scan."""

_SEARCH: ContextVar[tuple[int, bool] | None] = ContextVar("klea_pgvector_search", default=None)
"""The query under way in this thread: ``(ef_search, exact)``; None outside a search."""


def search_breadth(k: int, filtered: bool) -> int:
    """``hnsw.ef_search`` for a query of ``k`` results: the index returns at most that many
    rows (wider finds more of the true nearest), and a metadata filter drops some of them
    after the scan, so filtered queries look wider still."""
    wanted = max(2 * _MIN_EF_SEARCH, 4 * k) if filtered else max(_MIN_EF_SEARCH, 2 * k)
    return min(wanted, _MAX_EF_SEARCH)


def json_path_key(field: str) -> str:
    """Return ``field`` as a quoted SQL/JSON path key: ``has-hyphen`` -> ``"has-hyphen"``.

    JSON string escapes are the path language's string escapes, so quotes, backslashes
    and control characters in the name stay inside the key.
    """
    return json.dumps(field, ensure_ascii=False)


class KleaPGVector(PGVector):
    """``langchain_postgres.PGVector`` with collection-scoped ids, an HNSW index per
    collection and metadata filters on any field name.

    ``embedding_length`` gives the dimension of a new collection's index; without it the
    embedder is asked once (only when the collection is created). The shared table's
    column stays dimension-less. Sync mode only: klea runs the calls in a worker thread.
    """

    def __init__(
        self, embeddings: Embeddings, *, embedding_length: int | None = None, **kwargs: Any
    ) -> None:
        if kwargs.get("async_mode"):
            raise StoreConfigError(
                "KleaPGVector has no async mode: give it a sync connection and call it "
                "from a worker thread"
            )
        self._index_dimension = embedding_length
        self._layout = PGLayout.legacy()
        super().__init__(embeddings, **kwargs)

    # ------------------------------------------------------------------ collection layout

    @property
    def layout(self) -> PGLayout:
        """The collection's layout, read when the store was opened."""
        return self._layout

    def create_collection(self) -> None:
        """Open the collection, or create it with klea's layout and its HNSW index."""
        if self.pre_delete_collection:
            self.delete_collection()
        with self._make_sync_session() as session:
            collection = self.get_collection(session)
            if collection is None:
                collection = self._create_klea_collection(session)
            self._layout = PGLayout.of(self.collection_name, collection.cmetadata)
            session.commit()
        if not self._layout.scoped:
            self.logger.warning(
                "PGVector collection %r was written by an older klea: its chunk ids are not "
                "scoped by collection and it has no vector index (queries scan it); rebuild "
                "it with `klea-stores-create store ... --force` to upgrade it",
                self.collection_name,
            )

    def _create_klea_collection(self, session: Session) -> Any:
        dimension = self._index_dimension
        if dimension is None:
            dimension = len(self.embedding_function.embed_query("dimension probe"))
        distance = DistanceStrategy(self._distance_strategy).value
        layout = PGLayout(scoped=True, dimension=dimension, distance=distance)
        metadata = {**(self.collection_metadata or {}), "klea": layout.to_metadata()}
        collection = self.CollectionStore(name=self.collection_name, cmetadata=metadata)
        session.add(collection)
        session.flush()  # assigns the uuid the index is keyed on
        if layout.indexed:
            table = self.EmbeddingStore.__tablename__
            session.execute(text(hnsw_index_sql(table, collection.uuid, layout)))
        else:
            self.logger.warning(
                "PGVector collection %r: %d-dimensional vectors are beyond pgvector's "
                "index limit; queries will scan the collection",
                self.collection_name,
                dimension,
            )
        return collection

    def has_index(self) -> bool:
        """Whether the collection's HNSW index exists (False for an unindexed layout)."""
        with self._make_sync_session() as session:
            collection = self.get_collection(session)
            if collection is None or not self._layout.indexed:
                return False
            found = session.execute(
                text("SELECT 1 FROM pg_indexes WHERE indexname = :name"),
                {"name": index_name(collection.uuid)},
            ).first()
            return found is not None

    @contextlib.contextmanager
    def bulk_load(self) -> Iterator[None]:
        """Write many chunks; an empty collection gets its HNSW index once, at the end.

        Building the index over written rows is much cheaper than keeping it up to date
        row by row (20,000 MiniLM vectors written in 39 s against 116 s), so an empty
        collection's index is dropped for the load and built when the block ends without
        an error.
        After a failed load the collection answers by scanning until the next
        ``bulk_load``, which builds the index first. A collection that already holds
        chunks keeps its index up to date as usual.
        """
        if not self._layout.indexed:
            yield
            return
        with self._make_sync_session() as session:
            collection = self._collection_or_fail(session)
            table = self.EmbeddingStore
            held = session.execute(
                select(table.id).where(table.collection_id == collection.uuid).limit(1)
            ).first()
            if held is None:
                session.execute(text(drop_index_sql(collection.uuid)))
            session.commit()
        if held is not None:
            self._build_index()  # one a failed load left out (a no-op when it exists)
        yield
        if held is None:
            self.logger.info(
                "PGVector collection %r: building its vector index", self.collection_name
            )
            self._build_index()

    def _build_index(self) -> None:
        with self._make_sync_session() as session:
            collection = self._collection_or_fail(session)
            table = self.EmbeddingStore.__tablename__
            session.execute(text(hnsw_index_sql(table, collection.uuid, self._layout)))
            session.commit()

    def delete_collection(self) -> None:
        """Drop the collection, its rows and its HNSW index."""
        with self._make_sync_session() as session:
            collection = self._collection_or_warn(session)
            if collection is None:
                return
            session.execute(text(drop_index_sql(collection.uuid)))
            session.delete(collection)
            session.commit()

    @property
    def distance_strategy(self) -> Any:
        """The distance to order by, on the expression the collection's index holds
        (on the bare column, which no index holds, for an exact search)."""
        column: Any = self.EmbeddingStore.embedding
        search = _SEARCH.get()
        if self._layout.indexed and not (search is not None and search[1]):
            column = cast(column, Vector(self._layout.dimension))
        strategy = DistanceStrategy(self._distance_strategy)
        if strategy == DistanceStrategy.EUCLIDEAN:
            return column.l2_distance
        if strategy == DistanceStrategy.MAX_INNER_PRODUCT:
            return column.max_inner_product
        return column.cosine_distance

    # ------------------------------------------------------------------ searching

    def similarity_search_with_score_by_vector(
        self, embedding: list[float], k: int = 4, filter: dict[Any, Any] | None = None
    ) -> list[tuple[Document, float]]:
        """The ``k`` nearest chunks: through the HNSW index, exactly when it falls short.

        The index scan is approximate and yields at most ``hnsw.ef_search`` rows, set per
        query from ``k`` (:func:`search_breadth`); when a metadata filter (or a tiny
        collection) leaves fewer than ``k``, the query runs again as an exact scan of the
        collection, so a search never returns fewer chunks than the collection holds.
        """
        if not self._layout.indexed:
            return super().similarity_search_with_score_by_vector(embedding, k, filter)
        with self._searching(search_breadth(k, bool(filter)), exact=False):
            pairs = super().similarity_search_with_score_by_vector(embedding, k, filter)
        if len(pairs) >= k:
            return pairs
        with self._searching(_MIN_EF_SEARCH, exact=True):
            return super().similarity_search_with_score_by_vector(embedding, k, filter)

    @contextlib.contextmanager
    def _searching(self, ef_search: int, exact: bool) -> Iterator[None]:
        token = _SEARCH.set((ef_search, exact))
        try:
            yield
        finally:
            _SEARCH.reset(token)

    @contextlib.contextmanager
    def _make_sync_session(self) -> Iterator[Session]:
        """A session; inside a search, its transaction first sets ``hnsw.ef_search``."""
        with super()._make_sync_session() as session:
            search = _SEARCH.get()
            if search is not None and not search[1]:
                setting = text("SELECT set_config('hnsw.ef_search', :value, true)")
                session.execute(setting, {"value": str(search[0])})
            yield session

    # ------------------------------------------------------------------ ids

    def _collection_or_fail(self, session: Session) -> Any:
        collection = self.get_collection(session)
        if collection is None:
            raise StoreBackendError(
                f"PGVector collection {self.collection_name!r} does not exist (dropped "
                "while the store was open?)"
            )
        return collection

    def _collection_or_warn(self, session: Session) -> Any:
        collection = self.get_collection(session)
        if collection is None:
            self.logger.warning("Collection not found")
        return collection

    def _stored_ids(
        self, collection: Any, ids: Sequence[str], layout: PGLayout | None = None
    ) -> list[str]:
        layout = layout or PGLayout.of(self.collection_name, collection.cmetadata)
        return [stored_id(layout, collection.uuid, str(i)) for i in ids]

    def add_embeddings(
        self,
        texts: Sequence[str],
        embeddings: list[list[float]],
        metadatas: list[dict[Any, Any]] | None = None,
        ids: list[str] | None = None,
        **kwargs: Any,
    ) -> list[str]:
        """Add (or replace) chunks in this collection; returns their chunk ids."""
        given = list(ids) if ids is not None else [None] * len(texts)
        chunk_ids = [str(i) if i is not None else str(uuid.uuid4()) for i in given]
        with self._make_sync_session() as session:
            collection = self._collection_or_fail(session)
            layout = PGLayout.of(self.collection_name, collection.cmetadata)
            stored = self._stored_ids(collection, chunk_ids, layout)
            if not layout.scoped:
                self._refuse_foreign_rows(session, collection, stored)
        super().add_embeddings(texts, embeddings, metadatas, ids=stored, **kwargs)
        return chunk_ids

    def _refuse_foreign_rows(self, session: Session, collection: Any, ids: list[str]) -> None:
        """An unscoped id held by another collection would be moved, not added: refuse."""
        table, collections = self.EmbeddingStore, self.CollectionStore
        stmt = (
            select(table.id, collections.name)
            .join(collections, table.collection_id == collections.uuid)
            .where(table.id.in_(ids), table.collection_id != collection.uuid)
            .limit(1)
        )
        row = session.execute(stmt).first()
        if row is not None:
            raise StoreBackendError(
                f"PGVector collection {self.collection_name!r} keeps unscoped chunk ids (an "
                f"older klea wrote it), and chunk {row.id!r} already belongs to collection "
                f"{row.name!r} of the same database: adding it would overwrite that "
                f"collection's row. Rebuild {self.collection_name!r} with "
                "`klea-stores-create store ... --force` (its ids are then scoped)"
            )

    def delete(
        self, ids: list[str] | None = None, collection_only: bool = False, **kwargs: Any
    ) -> None:
        """Delete chunks of this collection by chunk id (never another collection's)."""
        if ids is None:
            return
        with self._make_sync_session() as session:
            collection = self._collection_or_warn(session)
            if collection is None:
                return
            table = self.EmbeddingStore
            stmt = delete(table).where(
                table.collection_id == collection.uuid,
                table.id.in_(self._stored_ids(collection, ids)),
            )
            session.execute(stmt)
            session.commit()

    def get_by_ids(self, ids: Sequence[str], /) -> list[Document]:
        """The chunks of this collection with these chunk ids (unknown ids left out)."""
        if not ids:
            return []
        with self._make_sync_session() as session:
            collection = self.get_collection(session)
            if collection is None:
                return []
            table = self.EmbeddingStore
            stmt = select(table).where(
                table.collection_id == collection.uuid,
                table.id.in_(self._stored_ids(collection, ids)),
            )
            return [
                Document(
                    id=public_id(row.id, collection.uuid),
                    page_content=row.document,
                    metadata=row.cmetadata,
                )
                for row in session.execute(stmt).scalars().all()
            ]

    def _results_to_docs_and_scores(self, results: Any) -> list[tuple[Document, float]]:
        pairs = super()._results_to_docs_and_scores(results)
        for (doc, _), result in zip(pairs, results, strict=True):
            doc.id = public_id(str(doc.id), result.EmbeddingStore.collection_id)
        return pairs

    # ------------------------------------------------------------------ metadata filters

    def _handle_field_filter(self, field: str, value: Any) -> Any:
        if not isinstance(field, str) or field.isidentifier() or field.startswith("$"):
            return super()._handle_field_filter(field, value)
        if isinstance(value, dict) and len(value) == 1:
            ((operator, operand),) = value.items()
        elif isinstance(value, dict):
            return super()._handle_field_filter(field, value)  # its own error message
        else:
            operator, operand = "$eq", value
        metadata = self.EmbeddingStore.cmetadata
        native = COMPARISONS_TO_NATIVE.get(operator)
        if native is not None:
            path = f"$.{json_path_key(field)} {native} $value"
            return func.jsonb_path_match(
                metadata, cast(path, JSONPATH), cast({"value": operand}, JSONB)
            )
        text = metadata[field].astext  # ->> with the name bound as a parameter
        if operator == "$in":
            return text.in_([str(x) for x in operand])
        if operator == "$nin":
            return ~text.in_([str(x) for x in operand])
        if operator == "$like":
            return text.like(operand)
        if operator == "$ilike":
            return text.ilike(operand)
        raise ValueError(f"metadata filter on {field!r}: operator {operator!r} is not supported")
