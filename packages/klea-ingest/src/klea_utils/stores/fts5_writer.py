"""Write and prune an ``fts5:`` BM25 index of chunks (ingestion's name for the writers).

The layout (one record per chunk, which fields, which facet keys) and its writers are
klea-retrieval's :mod:`klea_utils.stores.retrieval.fts5_index`; this module re-exports the
writers under the name the ingestion guides use. The synchronous helpers run their own
event loop (use :func:`awrite_fts5_chunks` and :func:`adelete_fts5_ids` inside async code).
"""

from __future__ import annotations

from klea_utils.stores.retrieval.fts5_index import (
    adelete_fts5_ids,
    awrite_fts5_chunks,
    delete_fts5_ids,
    write_fts5_chunks,
)

__all__ = ["adelete_fts5_ids", "awrite_fts5_chunks", "delete_fts5_ids", "write_fts5_chunks"]
