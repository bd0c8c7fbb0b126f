"""Import the store phase's vector-store client while the workers convert.

Opening the vector store is the store phase's first step, and on a Chroma build most of it
is importing ``chromadb`` and ``langchain_chroma`` (seconds of one thread, with every
other core idle: the store phase has nothing else to do yet). During conversion the
build's parent mostly waits on its workers, so :func:`warm_store_imports` imports those
modules there, in a daemon thread, and the store phase finds them loaded. Importing runs
no code of the user's and writes nothing; a module that fails to import is left to the
store phase, which names the extra to install.
"""

from __future__ import annotations

import importlib
import threading

__all__ = ["BACKEND_MODULES", "warm_store_imports"]

BACKEND_MODULES = {
    "chroma": ("chromadb", "langchain_chroma"),
    "qdrant": ("qdrant_client", "langchain_qdrant"),
    "pgvector": ("sqlalchemy", "langchain_postgres"),
}
"""The third-party modules each store scheme's client imports when it opens."""


def _import_all(names: tuple[str, ...]) -> None:
    for name in names:
        try:
            importlib.import_module(name)
        except Exception:  # the store phase imports it again and reports the error
            return


def warm_store_imports(store_uri: str) -> threading.Thread | None:
    """Start importing ``store_uri``'s client modules in a daemon thread (``None``: none)."""
    names = BACKEND_MODULES.get(store_uri.partition(":")[0])
    if not names:
        return None
    thread = threading.Thread(
        target=_import_all, args=(names,), name="klea-warm-imports", daemon=True
    )
    thread.start()
    return thread
