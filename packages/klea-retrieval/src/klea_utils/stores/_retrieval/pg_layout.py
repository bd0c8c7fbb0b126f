"""How a klea PGVector collection lays out its rows: scoped ids and its HNSW index (internal).

``langchain_postgres`` keeps every collection of a database in one table,
``langchain_pg_embedding``, whose primary key is the chunk id alone: two collections that
both hold ``paper.pdf:0`` would share (and overwrite) one row. A collection klea creates
records a :class:`PGLayout` in its collection metadata (key ``"klea"``) and stores each
chunk under ``<collection uuid>/<chunk id>`` (:func:`stored_id`); every public surface
gives the chunk id back (:func:`public_id`). The uuid is fixed-length and never reused, so
the prefix is unambiguous whatever the collection's name.

The table is shared, so its ``embedding`` column keeps no dimension (collections of
different embedders can share a database). Each collection gets its own partial HNSW
index on ``embedding::vector(<dimension>)`` for its rows only (pgvector's recipe for
mixed dimensions); a query uses it when it orders by the same cast expression and filters
on the collection. A collection without a layout was written by klea before this
(``PGLayout.legacy``): ids unscoped, no index.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from klea_utils.stores.exceptions import StoreConfigError

__all__ = [
    "HNSW_MAX_DIMENSION",
    "LAYOUT_KEY",
    "PGLayout",
    "drop_index_sql",
    "hnsw_index_sql",
    "index_name",
    "public_id",
    "stored_id",
]

LAYOUT_KEY = "klea"
"""Key of the layout in ``langchain_pg_collection.cmetadata``."""

LAYOUT_VERSION = 1

HNSW_MAX_DIMENSION = 2000
"""pgvector's largest indexable ``vector`` dimension (HNSW and IVFFlat alike)."""

_OPERATOR_CLASSES = {"cosine": "vector_cosine_ops", "l2": "vector_l2_ops", "inner": "vector_ip_ops"}
"""pgvector operator class of each ``langchain_postgres`` ``DistanceStrategy`` value."""


@dataclass(frozen=True)
class PGLayout:
    """The layout a collection was created with (``scoped`` False: klea's old layout)."""

    scoped: bool
    dimension: int | None = None
    distance: str = "cosine"

    def __post_init__(self) -> None:
        if self.dimension is not None and self.dimension < 1:
            raise StoreConfigError(f"PGVector layout: dimension {self.dimension} must be >= 1")
        if self.distance not in _OPERATOR_CLASSES:
            raise StoreConfigError(
                f"PGVector layout: distance {self.distance!r} is none of "
                f"{', '.join(sorted(_OPERATOR_CLASSES))}"
            )

    @property
    def indexed(self) -> bool:
        """Whether the collection has its HNSW index (pgvector indexes up to 2,000 dims)."""
        return self.dimension is not None and self.dimension <= HNSW_MAX_DIMENSION

    def to_metadata(self) -> dict[str, Any]:
        """The JSON recorded under :data:`LAYOUT_KEY` in the collection metadata."""
        return {
            "layout": LAYOUT_VERSION,
            "ids": "collection-scoped",
            "dimension": self.dimension,
            "distance": self.distance,
        }

    @classmethod
    def legacy(cls) -> PGLayout:
        return cls(scoped=False)

    @classmethod
    def of(cls, collection_name: str, cmetadata: Any) -> PGLayout:
        """The layout recorded in a collection's metadata; legacy when none is.

        Raises:
            StoreConfigError: The record is not one this klea understands (a newer
                klea wrote it); the message names the collection.
        """
        record = cmetadata.get(LAYOUT_KEY) if isinstance(cmetadata, dict) else None
        if record is None:
            return cls.legacy()
        if not isinstance(record, dict) or record.get("layout") != LAYOUT_VERSION:
            raise StoreConfigError(
                f"PGVector collection {collection_name!r}: unknown klea layout {record!r} "
                f"(this klea-retrieval reads layout {LAYOUT_VERSION}); upgrade klea-retrieval"
            )
        dimension = record.get("dimension")
        return cls(
            scoped=record.get("ids") == "collection-scoped",
            dimension=int(dimension) if dimension is not None else None,
            distance=str(record.get("distance", "cosine")),
        )


def stored_id(layout: PGLayout, collection_uuid: uuid.UUID | str, chunk_id: str) -> str:
    """The primary key a chunk id is stored under in a collection of this layout."""
    return f"{collection_uuid}/{chunk_id}" if layout.scoped else chunk_id


def public_id(stored: str, collection_uuid: uuid.UUID | str) -> str:
    """The chunk id of a stored row: its collection prefix removed (legacy rows have none)."""
    prefix = f"{collection_uuid}/"
    return stored[len(prefix) :] if stored.startswith(prefix) else stored


def index_name(collection_uuid: uuid.UUID | str) -> str:
    """The name of a collection's HNSW index (42 characters, under PostgreSQL's 63)."""
    return f"klea_hnsw_{uuid.UUID(str(collection_uuid)).hex}"


def hnsw_index_sql(table: str, collection_uuid: uuid.UUID | str, layout: PGLayout) -> str:
    """``CREATE INDEX`` of a collection's partial HNSW index.

    DDL takes no bound parameters; every value formatted in is checked first: the uuid
    parses as a UUID, the dimension is an int, the operator class comes from a fixed table.
    """
    if not layout.indexed or layout.dimension is None:
        raise StoreConfigError(f"PGVector layout {layout} has no index")
    key = uuid.UUID(str(collection_uuid))
    dimension = int(layout.dimension)
    ops = _OPERATOR_CLASSES[layout.distance]
    return (
        f'CREATE INDEX IF NOT EXISTS "{index_name(key)}" ON "{table}" '
        f"USING hnsw ((embedding::vector({dimension})) {ops}) "
        f"WHERE collection_id = '{key}'::uuid"
    )


def drop_index_sql(collection_uuid: uuid.UUID | str) -> str:
    """``DROP INDEX`` of a collection's HNSW index (none there: no error)."""
    return f'DROP INDEX IF EXISTS "{index_name(collection_uuid)}"'
