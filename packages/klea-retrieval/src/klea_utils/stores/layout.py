"""Names of what ingestion keeps beside a user's sources, defined once for both distributions.

``klea_utils.stores.utils`` documents them; klea-ingest imports them from here, which loads
nothing else (``utils`` pulls in LangChain, which the light ingestion callers avoid).
"""

from __future__ import annotations

__all__ = [
    "CACHE_DIR_NAME",
    "CITATIONS_FILE_SUFFIX",
    "CITATIONS_FILE_VERSION",
    "STORE_SIDECAR_SUFFIX",
    "TEMPLATE_FILE_NAME",
]

CACHE_DIR_NAME = ".klea-cache"
"""Name of the chunk-cache directory created inside a source directory by ingestion."""

TEMPLATE_FILE_NAME = "metadata-map.template.json"
"""Name of the metadata-map template ``chunk`` writes into the cache directory."""

STORE_SIDECAR_SUFFIX = ".klea.json"
"""Suffix of the sidecar beside a BM25 corpus or FTS5 index: the collection it belongs
to and, for a corpus, how many documents it holds."""

CITATIONS_FILE_SUFFIX = ".citations.json"
"""Suffix of a collection's citation-links file, ``<collection>.citations.json`` in the
cache directory beside the collection's manifest (docs/guides/citations.md)."""

CITATIONS_FILE_VERSION = 1
"""Format version of the citation-links file: the build writes it, ``klea-serve`` reads it."""
