"""One line naming the store and the cause when a vector store backend fails mid-run.

Chroma, Qdrant and PGVector raise their own exception types (and Chroma's Rust core
``InternalError: Error in compaction`` for a full disk or a read-only folder); left alone
they reach the user as a long traceback. :func:`backend_errors` turns them into
:class:`~klea_utils.stores.exceptions.StoreBackendError` naming the store, the collection,
the cause and, when the message shows it, the likely reason. The package's own errors and
``OSError`` (which already names its file) pass through.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from klea_utils.stores.exceptions import KleaStoresError, StoreBackendError

_HINTS = (
    (("readonly", "read-only", "read only"), "the store is read-only"),
    (("disk is full", "no space", "database or disk is full", "quota"), "the disk is full"),
    (("compaction",), "is the disk full or the store folder read-only?"),
)


def describe_backend_failure(store_uri: str, collection: str, exc: BaseException) -> str:
    """``store_uri`` collection ``collection``: what failed, in one line."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    if len(text) > 300:
        text = text[:297] + "..."
    lowered = text.lower()
    hint = next((h for keys, h in _HINTS if any(k in lowered for k in keys)), None)
    line = f"store {store_uri} collection {collection!r}: {type(exc).__name__}: {text}"
    return f"{line} ({hint})" if hint else line


@contextmanager
def backend_errors(store_uri: str, collection: str) -> Iterator[None]:
    """Re-raise a backend's own exception as a one-line ``StoreBackendError``."""
    try:
        yield
    except (KleaStoresError, OSError):
        raise
    except Exception as exc:
        raise StoreBackendError(describe_backend_failure(store_uri, collection, exc)) from exc
