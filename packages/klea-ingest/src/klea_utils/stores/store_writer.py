"""The store phase: fold the metadata map into cached chunks and write them to the stores.

:func:`store_all` writes chunks to a vector store incrementally (see :mod:`._manifest`),
inline to a BM25 corpus (:mod:`._bm25_corpus`), and optionally, incrementally too, to an
FTS5 index (:mod:`._fts5_corpus`).
:func:`load_and_fold_results` streams the chunk cache one file at a time with the map
applied; :func:`build` chains ``chunk_all`` and the two. ``StoresBuilder``'s methods of the
same names delegate here.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from klea_utils.stores._ingest.bm25_corpus import Bm25CorpusWriter
from klea_utils.stores._ingest.collection_lock import collection_lock
from klea_utils.stores._ingest.fts5_corpus import Fts5IndexWriter
from klea_utils.stores._ingest.manifest import StoreManifest, chunk_ids, manifest_path
from klea_utils.stores._ingest.store_check import missing_ids
from klea_utils.stores._ingest.store_identity import resolve_local_path, resolve_store_uri
from klea_utils.stores._ingest.store_progress import StoreProgress
from klea_utils.stores.chunk_worker import DEFAULT_WORKER_MEM_LIMIT
from klea_utils.stores.ingest_exceptions import SourceLayoutError
from klea_utils.stores.metadata_map import (
    _apply_store_metadata_policy,
    file_entry_for,
    fold_chunk_metadata,
    load_metadata_map,
    template_entry,
    template_path,
    write_heading_template,
)
from klea_utils.stores.source_files import find_unique_source_files
from langchain_core.documents import Document

__all__ = ["FoldedResults", "StoreSummary", "build", "load_and_fold_results", "store_all"]

_EMBEDDINGS: dict[str, Any] = {}
_EMBEDDINGS_LOCK = threading.Lock()


class _Builder(Protocol):
    embedding_model: str
    logger: logging.Logger
    embed_batch_size: int
    store_dir: Path | None


@dataclass
class StoreSummary:
    """What one :func:`store_all` run did."""

    files_added: int = 0
    files_replaced: int = 0
    files_skipped: int = 0
    files_empty: int = 0
    files_restored: int = 0
    chunks_added: int = 0
    chunks_deleted: int = 0
    bm25_chunks: int = 0
    fts5_chunks: int = 0
    missing_files: list[Path] = field(default_factory=list)

    def describe(self) -> str:
        """One line for logs and the CLI summary."""
        text = (
            f"{self.files_added} file(s) added, {self.files_replaced} replaced, "
            f"{self.files_skipped} unchanged; {self.chunks_added} chunk(s) embedded, "
            f"{self.chunks_deleted} stale id(s) deleted"
        )
        if self.files_empty:
            text += f"; {self.files_empty} file(s) without chunks"
        if self.files_restored:
            text += (
                f"; {self.files_restored} file(s) the manifest listed were missing from "
                "the store and were added again"
            )
        if self.bm25_chunks:
            text += f"; BM25 corpus holds {self.bm25_chunks} chunk(s)"
        if self.fts5_chunks:
            text += f"; FTS5 index got {self.fts5_chunks} chunk(s)"
        return text


def embeddings_for(builder: _Builder) -> Any:
    """The builder's embeddings: its ``embeddings`` attribute, else loaded once per spec."""
    explicit = getattr(builder, "embeddings", None)
    if explicit is not None:
        return explicit
    from klea_utils.stores.embedding_models import load_embeddings

    spec = builder.embedding_model
    with _EMBEDDINGS_LOCK:
        if spec not in _EMBEDDINGS:
            device: Any = getattr(builder, "device", "auto")  # load_embeddings checks it
            _EMBEDDINGS[spec] = load_embeddings(spec, device=device)
        return _EMBEDDINGS[spec]


def _source_files(builder: _Builder, source_dir: Path) -> list[Path]:
    return find_unique_source_files(
        source_dir,
        metadata_map_path=getattr(builder, "metadata_map_path", None),
        store_dir=builder.store_dir,
        logger=builder.logger,
    )


def _stored_docs(file_name: str, docs: list[Document]) -> list[Document]:
    ids = chunk_ids(file_name, len(docs))
    return [
        Document(
            id=i, page_content=d.page_content, metadata=_apply_store_metadata_policy(d.metadata)
        )
        for i, d in zip(ids, docs, strict=True)
    ]


def _open_store(builder: _Builder, store_uri: str, collection_name: str) -> Any:
    from klea_utils.stores.utils import instantiate_vector_store

    return instantiate_vector_store(
        store_uri, collection_name, embeddings_for(builder), builder.logger, create=True
    )


def _add_in_batches(store: Any, docs: list[Document], batch: int, progress: StoreProgress) -> None:
    for start in range(0, len(docs), batch):
        part = docs[start : start + batch]
        store.add_documents(part, ids=[d.id for d in part])
        progress.advance(len(part))


def _store_all(
    builder: _Builder,
    results: Iterable[tuple[str, list[Document], Path]],
    store_uri: str,
    collection_name: str,
    source_dir: Path,
    force: bool = False,
    bm25_path: str | None = None,
    *,
    fts5_path: str | None = None,
    fts5_stemming: bool | None = None,
) -> StoreSummary:
    """Write chunked documents to a vector store, incrementally.

    The manifest (``<source_dir>/.klea-cache/<collection>.manifest.json``) records the files
    in the collection; it is saved atomically after each file, so a crash loses at most the
    file in progress. Unchanged files are skipped, changed files' old ids are deleted and
    the file re-added, new files are added, and files no longer in the source are left
    alone. ``force`` drops the collection and rebuilds it. The FTS5 index, if wanted, is
    updated the same way, file by file, with its own manifest beside it. Chunk ids are
    ``<file_name>:<chunk_index>``. Two source files with the same name are refused before
    anything is written.

    Args:
        builder: A ``StoresBuilder`` (its ``embedding_model``, ``logger``,
            ``embed_batch_size`` and ``store_dir`` are used).
        results: ``(file_hash, docs, file_path)`` per file; may be a lazy iterable.
        store_uri: Vector store URI (``chroma:/dir``, ``qdrant:/dir``, ``pgvector:postgresql://...``).
        collection_name: Collection name.
        source_dir: The source directory (for the manifest).
        force: Drop the collection and re-store everything.
        bm25_path: Where to write the BM25 corpus (pickled batches), if wanted.
        fts5_path: Where to write an SQLite FTS5 index of the chunks (klea-retrieval's
            ``fts5:`` BM25 layout), if wanted.
        fts5_stemming: Whether the FTS5 index matches words by their Porter stem (FTS5's
            ``porter`` tokenizer, so "inhibits" finds "inhibition"). ``None`` follows the
            existing index (a new one does not stem); an explicit value an existing
            index was built without is applied after writing by re-tokenizing it.

    Returns:
        A :class:`StoreSummary`.
    """
    from klea_utils.stores.utils import drop_collection

    log = builder.logger
    source_dir = Path(source_dir).resolve()
    store_uri = resolve_store_uri(store_uri)  # once: the store's identity for the whole run
    bm25_path = str(resolve_local_path(bm25_path)) if bm25_path else None
    fts5_path = str(resolve_local_path(fts5_path)) if fts5_path else None
    manifest_path(source_dir, collection_name)  # validates the collection name first
    _source_files(builder, source_dir)  # refuses two files of the same name up front
    fts5 = (
        Fts5IndexWriter(Path(fts5_path), collection_name, force=force, stemming=fts5_stemming)
        if fts5_path
        else None
    )
    batch = max(1, int(builder.embed_batch_size))
    store = _open_store(builder, store_uri, collection_name)
    manifest = StoreManifest.load(source_dir, collection_name, store_uri)
    if force:
        log.info("--force: dropping collection %r in %s", collection_name, store_uri)
        drop_collection(store, store_uri, collection_name)
        store = _open_store(builder, store_uri, collection_name)
        manifest.clear()
    bm25 = (
        Bm25CorpusWriter(Path(bm25_path), collection_name, store_uri, batch, force=force)
        if bm25_path
        else None
    )
    summary = StoreSummary()
    seen: dict[str, Path] = {}
    try:
        with StoreProgress(log) as progress:
            for file_hash, docs, file_path in results:
                name = Path(file_path).name
                if name in seen:
                    raise SourceLayoutError(
                        f"{source_dir}: two source files named {name!r}: "
                        f"{seen[name]} and {file_path}"
                    )
                seen[name] = Path(file_path)
                stored = _stored_docs(name, list(docs))
                _store_file(store, manifest, name, file_hash, stored, batch, summary, progress)
                if bm25 is not None:
                    bm25.add(name, stored)
                if fts5 is not None:
                    summary.fts5_chunks += fts5.add(name, file_hash, stored)
                del docs, stored
        if bm25 is not None:
            bm25.commit(keep=set(manifest.files))
            summary.bm25_chunks = bm25.written
        if fts5 is not None:
            fts5.retain(set(manifest.files))
    except BaseException:
        if bm25 is not None:
            bm25.abort()
        raise
    finally:
        _close_store(store)
    if fts5 is not None:
        fts5.finish()  # an explicit fts5_stemming the index was built without: re-tokenize
    log.info("Store %s collection %r: %s", store_uri, collection_name, summary.describe())
    return summary


def _close_store(store: Any) -> None:
    """Release a store's connections (PGVector keeps a SQLAlchemy engine pool open)."""
    engine = getattr(store, "_engine", None)
    if engine is not None and hasattr(engine, "dispose"):
        engine.dispose()


def _store_file(
    store: Any,
    manifest: StoreManifest,
    name: str,
    file_hash: str,
    stored: list[Document],
    batch: int,
    summary: StoreSummary,
    progress: StoreProgress,
) -> None:
    if manifest.is_current(name, file_hash, len(stored)):
        lost = missing_ids(store, [str(d.id) for d in stored])
        if not lost:
            summary.files_skipped += 1
            progress.file_done(name, skipped=True)
            return
        summary.files_restored += 1
        progress.logger.warning(
            "%s: the manifest records %d chunk(s) but the store lacks %d of them; adding "
            "the file again",
            name,
            len(stored),
            len(lost),
        )
    existed = name in manifest.files
    stale = manifest.begin(name, file_hash, len(stored))
    if stale:
        store.delete(ids=stale)
        summary.chunks_deleted += len(stale)
    _add_in_batches(store, stored, batch, progress)
    manifest.commit(name, file_hash, len(stored))
    summary.chunks_added += len(stored)
    if not stored:
        summary.files_empty += 1
    if existed:
        summary.files_replaced += 1
    else:
        summary.files_added += 1
    progress.file_done(name, skipped=False)


class FoldedResults:
    """The chunk cache streamed one file at a time, with the metadata map folded in.

    Iterating yields ``(file_hash, docs, file_path)`` per cached source file. Files with no
    cache entry (never converted or conversion failed) are skipped with an error and listed
    in :attr:`missing` once iteration has finished.
    """

    def __init__(
        self,
        builder: _Builder,
        source_dir: Path,
        metadata_map: Mapping[str, Any] | None,
        map_path: Path | None,
        files: list[Path],
    ) -> None:
        self.builder = builder
        self.source_dir = source_dir
        self.metadata_map = metadata_map
        self.map_path = map_path
        self.files = files
        self.missing: list[Path] = []
        self.report_missing = True
        """Log one error naming the files not stored (a CLI that prints its own summary
        turns this off)."""

    def __iter__(self) -> Iterator[tuple[str, list[Document], Path]]:
        from klea_utils.stores.chunk_cache import iter_cached_files

        self.missing = []
        for cached in iter_cached_files(self.source_dir, self.files, missing=self.missing):
            name = cached.file_path.name
            if self.metadata_map is None:
                entry: Mapping[str, Any] = template_entry(cached.metadata, [])
            elif not cached.docs and name not in self.metadata_map:
                entry = {}  # nothing to fold: a file without chunks needs no map entry
            else:
                entry = file_entry_for(self.metadata_map, name, self.map_path)
            docs = [
                Document(
                    page_content=d.page_content, metadata=fold_chunk_metadata(d.metadata, entry)
                )
                for d in cached.docs
            ]
            yield cached.file_hash, docs, cached.file_path
        if self.missing and self.report_missing:
            from klea_utils.stores._ingest.failures import (
                format_not_stored,
                read_conversion_failures,
            )

            reasons = read_conversion_failures(self.source_dir)
            self.builder.logger.error("%s", format_not_stored(self.missing, reasons))


def _needing_entries(source_dir: Path, candidates: list[Path]) -> list[str]:
    """Names of ``candidates`` that have cached chunks (a failed file needs no map entry)."""
    from klea_utils.stores.chunk_cache import ChunkCache, compute_file_hash

    cache = ChunkCache(source_dir)
    names = []
    for path in candidates:
        cached = cache.load(path, compute_file_hash(path))
        if cached is not None and cached.docs:
            names.append(path.name)
    return names


def load_and_fold_results(
    builder: _Builder, source_dir: Path, metadata_map_path: str | Path | None = None
) -> FoldedResults:
    """Stream the cached chunks per file with the metadata map applied.

    The map is ``metadata_map_path`` when given, else the template ``chunk`` wrote
    (``<source>/.klea-cache/metadata-map.template.json``) when present, else each file's
    extracted metadata. Every source file with cached chunks must have an entry in an
    explicit or template map; all missing files are reported at once, before anything is
    streamed. Files whose conversion failed (no cache entry) or produced no chunks need
    none: they are skipped with an error and listed in ``missing``.

    Raises:
        MetadataMapError: The map is unreadable or lacks an entry for a source file.
        SourceLayoutError: Two source files share a name.
    """
    source_dir = Path(source_dir).resolve()
    map_path: Path | None = Path(metadata_map_path).resolve() if metadata_map_path else None
    if map_path is not None and hasattr(builder, "metadata_map_path"):
        builder.metadata_map_path = map_path
    if map_path is None and template_path(source_dir).is_file():
        map_path = template_path(source_dir)
        builder.logger.info("No --metadata-map given: using the template %s", map_path)
    files = _source_files(builder, source_dir)
    metadata_map = load_metadata_map(map_path) if map_path is not None else None
    if metadata_map is not None:
        absent = _needing_entries(source_dir, [p for p in files if p.name not in metadata_map])
        if absent:
            from klea_utils.stores.ingest_exceptions import MetadataMapError

            raise MetadataMapError(
                f"{map_path}: no entry for source file(s) {', '.join(map(repr, absent))}; "
                "add them to the metadata map (see 'klea-stores-create map-lint')"
            )
    return FoldedResults(builder, source_dir, metadata_map, map_path, files)


def _build(
    builder: _Builder,
    source_dir: str | Path,
    store_uri: str,
    collection_name: str,
    force: bool = False,
    metadata_map_path: str | Path | None = None,
    bm25_path: str | None = None,
    worker_mem_limit: int | None = DEFAULT_WORKER_MEM_LIMIT,
    worker_batch_size: int = 200,
    *,
    fts5_path: str | None = None,
    fts5_stemming: bool | None = None,
    report_missing: bool = True,
) -> StoreSummary:
    """Full pipeline: chunk documents, then write them to the stores.

    ``chunk_all`` converts in memory-capped workers into the on-disk cache; the cached
    chunks are then streamed one file at a time into :func:`store_all`. Without a
    ``metadata_map_path`` the template is (re)generated from the extracted metadata and used
    as the map, so ``build`` needs no prior ``chunk`` (at the cost of no review step).
    ``fts5_path`` and ``fts5_stemming`` are :func:`store_all`'s. The store URI and the
    collection name are checked first, so a bad one fails before any conversion. Files
    that fail conversion are skipped and listed in ``missing_files`` (logged as one error
    unless ``report_missing`` is false).
    """
    from klea_utils.stores.utils import check_store_target

    check_store_target(store_uri, collection_name)
    source = Path(source_dir).resolve()
    if metadata_map_path:
        builder.metadata_map_path = Path(metadata_map_path).resolve()  # type: ignore[attr-defined]
    file_headings = builder.chunk_all(  # type: ignore[attr-defined]
        source, force=force, worker_mem_limit=worker_mem_limit, worker_batch_size=worker_batch_size
    )
    if not metadata_map_path:
        write_heading_template(file_headings, source, builder.logger)
    del file_headings
    results = load_and_fold_results(builder, source, metadata_map_path)
    results.report_missing = report_missing
    summary = _store_all(
        builder,
        results,
        store_uri,
        collection_name,
        source,
        force=force,
        bm25_path=bm25_path,
        fts5_path=fts5_path,
        fts5_stemming=fts5_stemming,
    )
    summary.missing_files = list(results.missing)
    return summary


# -- one run per collection: the public entry points hold the collection's lock ---------


def store_all(
    builder: _Builder,
    results: Iterable[tuple[str, list[Document], Path]],
    store_uri: str,
    collection_name: str,
    source_dir: Path,
    force: bool = False,
    bm25_path: str | None = None,
    *,
    fts5_path: str | None = None,
    fts5_stemming: bool | None = None,
) -> StoreSummary:
    with collection_lock(Path(source_dir), collection_name):
        return _store_all(
            builder,
            results,
            store_uri,
            collection_name,
            source_dir,
            force,
            bm25_path,
            fts5_path=fts5_path,
            fts5_stemming=fts5_stemming,
        )


def build(
    builder: _Builder,
    source_dir: str | Path,
    store_uri: str,
    collection_name: str,
    force: bool = False,
    metadata_map_path: str | Path | None = None,
    bm25_path: str | None = None,
    worker_mem_limit: int | None = DEFAULT_WORKER_MEM_LIMIT,
    worker_batch_size: int = 200,
    *,
    fts5_path: str | None = None,
    fts5_stemming: bool | None = None,
    report_missing: bool = True,
) -> StoreSummary:
    from klea_utils.stores.utils import check_store_target

    check_store_target(store_uri, collection_name)
    with collection_lock(Path(source_dir), collection_name):
        return _build(
            builder,
            source_dir,
            store_uri,
            collection_name,
            force,
            metadata_map_path,
            bm25_path,
            worker_mem_limit,
            worker_batch_size,
            fts5_path=fts5_path,
            fts5_stemming=fts5_stemming,
            report_missing=report_missing,
        )


_LOCK_NOTE = """

    Only one ``store_all`` or ``build`` of a collection runs at a time: the run holds
    ``<source_dir>/.klea-cache/<collection>.lock``, and a second one raises
    :class:`~klea_utils.stores.ingest_exceptions.CollectionBusyError` at once.
    """
store_all.__doc__ = (_store_all.__doc__ or "").rstrip() + _LOCK_NOTE
build.__doc__ = (_build.__doc__ or "").rstrip() + _LOCK_NOTE
