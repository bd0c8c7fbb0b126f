"""Store locations in a stores configuration: made absolute, and checked before any loading.

A stores configuration file may name its stores relative to the file's own folder
(``chroma:stores/papers``, ``papers.bm25``, ``fts5:papers.sqlite``);
:func:`absolute_store_paths` rewrites those against a base folder so a configuration
works from any current directory. :func:`store_path_problems` lists every local store
that is missing, so a command can refuse a wrong path before it loads a model.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from klea_utils.stores.store_uri import StoreURI

if TYPE_CHECKING:  # for annotations only: config.py imports this module to load a file
    from klea_utils.stores.config import RetrieverConfig, StoreInfo

__all__ = ["absolute_store_paths", "local_store_path", "map_store_paths", "store_path_problems"]


def local_store_path(path: str, *, vector: bool) -> tuple[str, Path] | None:
    """Return ``(prefix, local path)`` of a store location, or ``None`` when it is remote.

    Vector stores: ``chroma:DIR`` and ``qdrant:DIR`` are local (``qdrant:http://...`` and
    ``pgvector:...`` are not). BM25 stores: ``fts5:FILE`` and a bare corpus path are local.
    """
    uri = StoreURI.vector(path) if vector else StoreURI.bm25(path)
    local = uri.local_path
    return None if local is None else (uri.prefix, local)


def _absolute(path: str, base: Path, *, vector: bool) -> str:
    local = local_store_path(path, vector=vector)
    if local is None:
        return path
    prefix, location = local
    location = location.expanduser()
    if not location.is_absolute():
        location = base / location
    return f"{prefix}{location}"


def absolute_store_paths(config: RetrieverConfig, base: str | Path) -> RetrieverConfig:
    """Return a copy of ``config`` whose relative local store paths are resolved against ``base``.

    Remote stores (``qdrant:http://...``, ``pgvector:...``) and absolute paths are kept
    as they are; ``~`` is expanded.
    """
    folder = Path(base).expanduser().absolute()
    return map_store_paths(config, lambda path, vector: _absolute(path, folder, vector=vector))


def map_store_paths(
    config: RetrieverConfig, rewrite: Callable[[str, bool], str]
) -> RetrieverConfig:
    """Return a copy of ``config`` with each store path replaced by ``rewrite(path, vector)``.

    ``vector`` is ``True`` for a vector store and ``False`` for a BM25 store or a domain's
    citation-links file.
    """
    new = config.model_copy(deep=True)
    for domain in new.domains.values():
        for store in domain.vector_stores:
            store.path = rewrite(store.path, True)
        for bm25 in domain.bm25_stores:
            bm25.path = rewrite(bm25.path, False)
        if domain.citations:  # a plain local file, like a BM25 corpus path
            domain.citations = rewrite(domain.citations, False)
    return new


def _problem(store: StoreInfo, *, vector: bool) -> str | None:
    local = local_store_path(store.path, vector=vector)
    if local is None:
        return None
    prefix, location = local
    if prefix == "chroma:":
        if not (location / "chroma.sqlite3").is_file():
            return f"no Chroma store at {str(location)!r} (missing chroma.sqlite3)"
    elif prefix == "qdrant:":
        if not location.is_dir():
            return f"no local Qdrant store folder at {str(location)!r}"
    elif not location.is_file():
        what = "FTS5 index" if prefix else "BM25 corpus"
        return f"no {what} file at {str(location)!r}"
    return None


def store_path_problems(config: RetrieverConfig, domains: list[str] | None = None) -> list[str]:
    """Return one line per local store of ``domains`` (default: all) that does not exist.

    Each line names the domain, the kind of store, its name and the path at fault.
    """
    problems = []
    for name, domain in config.domains.items():
        if domains is not None and name not in domains:
            continue
        for kind, stores, vector in (
            ("vector store", domain.vector_stores, True),
            ("BM25 store", domain.bm25_stores, False),
        ):
            for store in stores:
                problem = _problem(store, vector=vector)
                if problem is not None:
                    problems.append(f"domain {name!r} {kind} {store.name!r}: {problem}")
    return problems
