"""A store's identity: its URI with a local path resolved once, at the start of a run.

``chroma:stores/papers`` run from two folders names two stores; ``chroma:/abs/stores/papers``
and ``chroma:stores/papers`` run from ``/abs`` name one. Everything that records which store
it belongs to (the manifest, the BM25 sidecar) keys on :func:`resolve_store_uri`'s result.
"""

from __future__ import annotations

from pathlib import Path

from klea_utils.stores.exceptions import StoreConfigError
from klea_utils.stores.store_uri import StoreURI


def resolve_store_uri(store_uri: str) -> str:
    """Return ``store_uri`` with a local store folder made absolute (``~`` expanded).

    Server URIs (``qdrant:http://...``, ``pgvector:postgresql://...``) and strings without
    a scheme come back unchanged; :func:`klea_utils.stores.utils.check_store_target`
    reports malformed ones.
    """
    try:
        uri = StoreURI.vector(store_uri)
    except StoreConfigError:
        return store_uri
    local = uri.local_path
    if local is None:
        return store_uri
    return str(uri.with_location(local.expanduser().resolve()))


def resolve_local_path(path: str | Path | None) -> Path | None:
    """An optional local file path made absolute (``~`` expanded), or ``None``."""
    if path is None or path == "":
        return None
    return Path(path).expanduser().resolve()
