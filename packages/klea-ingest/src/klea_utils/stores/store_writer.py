"""The store phase: write chunks to a vector store, a BM25 corpus and an FTS5 index.

A :class:`StoreWriter` holds what the phase needs: the embedding model (loaded on the first
chunk it embeds, once per writer), the logger, the embedding batch size and the folders
kept out of the sources. :meth:`StoreWriter.write` writes to the :class:`StoreTargets` of a
run incrementally: the vector store through a per-collection manifest
(``<source>/.klea-cache/<collection>.manifest.json``), the BM25 corpus inline, the FTS5
index file by file. Its progress display counts chunks embedded against the total the run
will embed, known before the first chunk is embedded.
:meth:`StoreWriter.load_and_fold_results` streams the chunk cache one file at a time with
the metadata map applied. Each ``StoresBuilder`` owns one writer (``builder.writer``);
its ``store_all`` and ``build`` go through it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from klea_utils.stores._ingest.store.backend_errors import backend_errors
from klea_utils.stores._ingest.store.bm25_corpus import Bm25CorpusWriter
from klea_utils.stores._ingest.store.collection_lock import collection_lock
from klea_utils.stores._ingest.store.document_embedder import vectors_key
from klea_utils.stores._ingest.store.embed_ahead import embed_ahead
from klea_utils.stores._ingest.store.folded_results import FoldedResults, fold_cached_results
from klea_utils.stores._ingest.store.fts5_corpus import Fts5IndexWriter
from klea_utils.stores._ingest.store.lazy_embeddings import LazyEmbeddings
from klea_utils.stores._ingest.store.manifest import StoreManifest, chunks_digest, manifest_path
from klea_utils.stores._ingest.store.store_identity import resolve_local_path, resolve_store_uri
from klea_utils.stores._ingest.store.store_plan import planned_chunks
from klea_utils.stores._ingest.store.store_progress import StoreProgress
from klea_utils.stores._ingest.store.summary import StoreSummary
from klea_utils.stores._ingest.store.vector_run import (
    VectorRun,
    bulk_load,
    close_store,
    named_files,
)
from klea_utils.stores.source_files import find_unique_source_files
from klea_utils.stores.utils import drop_collection, instantiate_vector_store
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

__all__ = ["DEFAULT_EMBED_BATCH_SIZE", "StoreSummary", "StoreTargets", "StoreWriter"]

DEFAULT_EMBED_BATCH_SIZE = 256
"""Number of chunks embedded per ``add_documents`` call in ``store_all()``."""


@dataclass(frozen=True)
class StoreTargets:
    """Where one store run writes.

    Attributes:
        store_uri: Vector store URI (``chroma:/dir``, ``qdrant:/dir``,
            ``pgvector:postgresql://...``).
        collection_name: Collection name (letters, digits, ``_``, ``-`` and ``.``).
        source_dir: The source directory (its cache folder holds the manifest).
        force: Drop the collection (and rewrite the corpus and index) instead of updating.
        bm25_path: Where to write the BM25 corpus (pickled batches), if wanted.
        fts5_path: Where to write an SQLite FTS5 index of the chunks (klea-retrieval's
            ``fts5:`` BM25 layout), if wanted.
        fts5_stemming: Whether the FTS5 index matches words by their Porter stem (FTS5's
            ``porter`` tokenizer, so "inhibits" finds "inhibition"). ``None`` follows the
            existing index (a new one stems); an explicit value an existing index
            was built without is applied after writing by re-tokenizing it.
        fts5_multiscript: Whether the FTS5 index finds words in Chinese, Japanese, Korean,
            Thai and Arabic-script chunks (multiscript shadow text, issue 37). ``None``
            follows the existing index (a new one is multiscript); an explicit value an
            existing index was built without is applied after writing by re-tokenizing it.
    """

    store_uri: str
    collection_name: str
    source_dir: Path
    force: bool = False
    bm25_path: str | None = None
    fts5_path: str | None = None
    fts5_stemming: bool | None = None
    fts5_multiscript: bool | None = None


@dataclass(kw_only=True)
class StoreWriter:
    """Write chunked documents to the stores of one collection.

    Attributes:
        embedding_model: Embedding model spec, loaded on the first chunk embedded (a run
            whose files are all unchanged never loads it).
        logger: Logger for progress and the run's summary.
        embed_batch_size: Chunks per ``add_documents`` call (and per BM25 corpus batch).
        store_dir: Local vector store folder, never read as a source file.
        device: Device for the embedding model (``auto``, ``cpu``, ``cuda``).
        embeddings: Ready ``Embeddings`` to use; by default ones that load
            ``embedding_model`` on the first chunk embedded.
        metadata_map_path: The metadata map in use, never read as a source file; set by
            :meth:`load_and_fold_results` when it is given a map.
        report_missing: Log one error naming the source files not stored and why (a CLI
            that prints its own summary turns this off).
    """

    embedding_model: str
    logger: logging.Logger
    embed_batch_size: int = DEFAULT_EMBED_BATCH_SIZE
    store_dir: Path | None = None
    device: str = "auto"
    embeddings: Embeddings | None = None
    metadata_map_path: Path | None = None
    report_missing: bool = True

    def __post_init__(self) -> None:
        if self.embed_batch_size < 1:
            raise ValueError(f"embed_batch_size must be >= 1, got {self.embed_batch_size}")
        if self.store_dir is not None:
            self.store_dir = Path(self.store_dir)
        if self.embeddings is None:
            self.embeddings = LazyEmbeddings(self.embedding_model, self.device, self.logger)

    def source_files(self, source_dir: Path) -> list[Path]:
        """The files of ``source_dir`` to ingest; refuses two files of the same name."""
        return find_unique_source_files(
            source_dir,
            metadata_map_path=self.metadata_map_path,
            store_dir=self.store_dir,
            logger=self.logger,
        )

    def load_and_fold_results(
        self, source_dir: Path, metadata_map_path: str | Path | None = None
    ) -> FoldedResults:
        """Stream the cached chunks per file with the metadata map applied.

        The map is ``metadata_map_path`` when given, else the template ``chunk`` wrote
        (``<source>/.klea-cache/metadata-map.template.json``) when present, else each
        file's extracted metadata. Every source file with cached chunks must have an
        entry in an explicit or template map; all missing entries are reported at once,
        before anything is streamed. Files whose conversion failed (no cache entry) or
        produced no chunks need none: they are skipped and listed in ``missing``.

        Raises:
            MetadataMapError: The map is unreadable or lacks an entry for a source file.
            SourceLayoutError: Two source files share a name.
        """
        source_dir = Path(source_dir).resolve()
        map_path = Path(metadata_map_path).resolve() if metadata_map_path else None
        if map_path is not None:
            self.metadata_map_path = map_path
        files = self.source_files(source_dir)
        return fold_cached_results(source_dir, map_path, files, self.logger, self.report_missing)

    def write(
        self, results: Iterable[tuple[str, list[Document], Path]], targets: StoreTargets
    ) -> StoreSummary:
        """Write chunked documents to the stores ``targets`` names, incrementally.

        The manifest (``<source_dir>/.klea-cache/<collection>.manifest.json``) records the
        files in the collection; it is saved atomically after each file, so a crash loses
        at most the file in progress. Unchanged files are skipped, changed files' old ids
        are deleted and the file re-added, new files are added, and files no longer in the
        source are left alone. ``force`` drops the collection and rebuilds it. The FTS5
        index, if wanted, is updated the same way, file by file, with its own manifest
        beside it. Chunk ids are ``<file_name>:<chunk_index>``. Two source files with the
        same name are refused before anything is written. Only one run of a collection
        runs at a time: it holds ``<source_dir>/.klea-cache/<collection>.lock``, and a
        second one raises :class:`~klea_utils.stores.ingest_exceptions.CollectionBusyError`
        at once.

        Args:
            results: ``(file_hash, docs, file_path)`` per file; may be a lazy iterable
                such as :meth:`load_and_fold_results`' (whose missing files then land in
                the summary's ``missing_files``).
            targets: The vector store, collection and optional BM25 corpus and FTS5 index.
        """
        with collection_lock(Path(targets.source_dir), targets.collection_name):
            return self._write(results, targets)

    def _write(
        self, results: Iterable[tuple[str, list[Document], Path]], targets: StoreTargets
    ) -> StoreSummary:
        collection, force = targets.collection_name, targets.force
        source_dir = Path(targets.source_dir).resolve()
        uri = resolve_store_uri(targets.store_uri)  # once: the store's identity for the run
        bm25_path = resolve_local_path(targets.bm25_path)
        fts5_path = resolve_local_path(targets.fts5_path)
        manifest_path(source_dir, collection)  # validates the collection name first
        self.source_files(source_dir)  # refuses two files of the same name up front
        fts5 = (
            Fts5IndexWriter(
                fts5_path,
                collection,
                force=force,
                stemming=targets.fts5_stemming,
                multiscript=targets.fts5_multiscript,
            )
            if fts5_path
            else None
        )
        with backend_errors(uri, collection):
            store = self._open_store(uri, collection)
        manifest = StoreManifest.load(source_dir, collection, uri)
        vectors = vectors_key(self.embedding_model)
        if force or (manifest.vectors and manifest.vectors != vectors):
            if force:
                self.logger.info("--force: dropping collection %r in %s", collection, uri)
            else:
                self.logger.warning(
                    "collection %r in %s holds vectors of %s, and this run embeds with %s: "
                    "rebuilding the collection",
                    collection,
                    uri,
                    manifest.vectors,
                    vectors,
                )
            with backend_errors(uri, collection):
                drop_collection(store, uri, collection)
                store = self._open_store(uri, collection)
            manifest.clear()
        manifest.record_embedder(vectors, None)
        bm25 = (
            Bm25CorpusWriter(bm25_path, collection, uri, self.embed_batch_size, force=force)
            if bm25_path
            else None
        )
        run = VectorRun(store, manifest, self.embed_batch_size, StoreSummary())
        try:
            plan = planned_chunks(results, manifest)  # recorded counts: no chunk is read
            loading = bulk_load(store, uri, collection)
            with loading, StoreProgress(self.logger, plan=plan) as progress:
                files = embed_ahead(
                    named_files(results, source_dir),
                    self.embeddings,
                    lambda f: manifest.holds_version(f[0], f[1], len(f[2]), chunks_digest(f[2])),
                    self.logger,
                )
                for name, file_hash, stored in files:
                    with backend_errors(uri, collection):
                        run.write_file(name, file_hash, stored, progress)
                    if bm25 is not None:
                        bm25.add(name, stored)
                    if fts5 is not None:
                        run.summary.fts5_chunks += fts5.add(name, file_hash, stored)
                    del stored
            manifest.record_embedder(vectors, self.embedder_variant())
            manifest.save()
            if bm25 is not None:
                bm25.commit(keep=set(manifest.files))
                run.summary.bm25_chunks = bm25.written
            if fts5 is not None:
                fts5.retain(set(manifest.files))
        except BaseException:
            if bm25 is not None:
                bm25.abort()
            raise
        finally:
            close_store(store)
        if fts5 is not None:
            fts5.finish()  # an explicit tokenizer choice the index was built without: re-tokenize
        if isinstance(results, FoldedResults):
            run.summary.missing_files = list(results.missing)
        self.logger.info("Store %s collection %r: %s", uri, collection, run.summary.describe())
        return run.summary

    def embedder_variant(self) -> str | None:
        """The variant that embedded this writer's chunks (``None`` before any was embedded):
        ``onnxruntime-fp32`` or ``torch`` for the build's own embedder, else the class of the
        ``Embeddings`` given."""
        if isinstance(self.embeddings, LazyEmbeddings):
            return self.embeddings.variant
        variant = getattr(self.embeddings, "variant", None)
        return str(variant) if variant else type(self.embeddings).__name__

    def _open_store(self, store_uri: str, collection_name: str) -> Any:
        return instantiate_vector_store(
            store_uri, collection_name, self.embeddings, self.logger, create=True
        )
