"""Stored-metadata schema for vector store ingestion, and the policy that applies it.

The key sets say which metadata keys are set by the pipeline, shared by a file's chunks,
always stored or never stored; :func:`apply_store_metadata_policy` turns a chunk's
metadata into what the stores hold (klea-ingest calls it before every write; the seed's
name for it is ``klea_utils.stores.ingestion._apply_store_metadata_policy``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from klea_utils.stores.person_names import expand_person_names

__all__ = [
    "ALWAYS_STORED_METADATA_KEYS",
    "MACHINE_SET_METADATA_KEYS",
    "PERSON_NAME_FILTER_FIELDS",
    "SHARED_DOC_METADATA_KEYS",
    "STORE_DROPPED_METADATA_KEYS",
    "apply_store_metadata_policy",
    "is_always_stored_key",
    "is_dropped_key",
]

MACHINE_SET_METADATA_KEYS: frozenset[str] = frozenset({"file_hash", "file_name", "headings"})
"""Metadata keys set on every chunk by the ingestion pipeline itself, rather than supplied
by the metadata map. They are always stored."""

SHARED_DOC_METADATA_KEYS: frozenset[str] = frozenset(
    {"authors", "doi", "journal", "keywords", "title", "year"}
)
"""Bibliographic fields that every chunk of a source file is expected to share (they come
from the file's ``DEFAULT`` metadata map entry). When serializing reference material, these
are emitted once per source file rather than repeated on every chunk."""

ALWAYS_STORED_METADATA_KEYS: frozenset[str] = MACHINE_SET_METADATA_KEYS | SHARED_DOC_METADATA_KEYS
"""Metadata keys that are always stored in the vector store, together with the
bibliographic fields produced by the extraction cascade (title, authors, keywords, year,
journal, doi). Any ``url*`` key (``url``, ``url_1``, ``url_doi``, …) is also always stored.
This whitelist documents the guaranteed stored schema; presence of the cascade fields is
determined by the metadata map (whose researcher-curated keys pass through unmodified)."""

PERSON_NAME_FILTER_FIELDS: frozenset[str] = frozenset({"authors"})
"""Metadata fields whose values are lists of human full names. At store time such fields
are expanded with per-word variants (surname, every whitespace token, and lowercase forms)
so an exact-membership retrieval filter matches the partial name a user is likely to use,
e.g. "find papers by Sinha" matches an author stored as "Ankur Sinha". See
``klea_utils.stores.utils.expand_person_names`` and ``display_person_names``."""

STORE_DROPPED_METADATA_KEYS: frozenset[str] = frozenset(
    {"source_path", "source_type", "source_url"}
)
"""Metadata keys that are never stored. Provenance keys from the biblio cascade; keys
starting with ``_`` (e.g. ``_metadata_complete``, ``_sources``, ``_source_scores``) are also
always dropped. These guide the researcher reviewing ``metadata-map.template.json`` but
carry no meaning in a store."""


def is_always_stored_key(key: str) -> bool:
    """Return whether ``key`` is guaranteed to be stored (whitelisted or a ``url*`` key)."""
    return key in ALWAYS_STORED_METADATA_KEYS or key.startswith("url")


def is_dropped_key(key: str) -> bool:
    """Return whether ``key`` is never stored (provenance keys and ``_``-prefixed keys)."""
    return key in STORE_DROPPED_METADATA_KEYS or key.startswith("_")


def apply_store_metadata_policy(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """Return the metadata a chunk is stored with.

    Keys starting with ``_`` and the provenance keys (:data:`STORE_DROPPED_METADATA_KEYS`)
    are dropped; person-name fields (:data:`PERSON_NAME_FILTER_FIELDS`) are expanded with
    :func:`~klea_utils.stores.person_names.expand_person_names` (idempotent, so re-applying
    is safe). Everything else, researcher-curated keys included, passes through unmodified:
    ``None``, nested objects, empty and mixed lists too. A backend that cannot hold such a
    value gets it encoded losslessly and decodes it on the way out (Chroma); Qdrant,
    PGVector, the BM25 corpus and the FTS5 index hold JSON values as they are.
    """
    out: dict[str, Any] = {}
    for key, value in metadata.items():
        if not isinstance(key, str) or key.startswith("_") or key in STORE_DROPPED_METADATA_KEYS:
            continue
        if key in PERSON_NAME_FILTER_FIELDS and isinstance(value, list | tuple):
            value = expand_person_names(list(value))
        elif key in PERSON_NAME_FILTER_FIELDS and isinstance(value, str):
            value = expand_person_names([value])
        out[key] = value
    return out
