"""Embed converted files while conversion goes on: one thread in the build's parent process.

Conversion workers write each file's chunks to the cache as they finish it; the dispatcher
hands the file to :meth:`OverlapEmbedder.submit`. A thread reads the file's cache entry
and embeds its chunk texts, one text per run, into an
:class:`~klea_utils.stores._ingest.store.early_vectors.EarlyVectors` table; the store
phase's embedder then looks each text up before embedding it. So the core a conversion
worker leaves idle (a worker starting, the last worker's tail) embeds, and the store phase
finds most of its vectors ready. The stored chunks and vectors are those of a build
without the thread, by construction: a vector depends on its text alone, and a text the
thread did not reach (or that a metadata map changed) is embedded by the store phase.

The thread's embedder has its own onnxruntime session with **one** intra-op thread (set in
code, not through ``OMP_NUM_THREADS``, which tesseract also reads): beside ``cores``
conversion workers it adds one busy thread at most. :meth:`OverlapEmbedder.close` stops it
between two texts, so the store phase (which embeds with every core) never runs beside it.

A file the collection already holds in this version (same bytes, same chunk count, per its
manifest; :func:`stored_versions`) is not embedded: a build after a change of the chunking
rules converts every file again, and the store phase then skips those whose chunks did not
change. A file whose chunks changed at the same count is left to the store phase.

A failure to embed a file stops the thread; the next :meth:`~OverlapEmbedder.submit`, or
:meth:`~OverlapEmbedder.close`, raises
:class:`~klea_utils.stores.ingest_exceptions.EmbeddingError` naming the file. Nothing in a
store is touched by the thread, so a crash anywhere leaves the stores as they were.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from pathlib import Path

from klea_utils.stores._ingest.store.document_embedder import (
    DocumentEmbedder,
    embedder_identity,
    load_overlap_embedder,
)
from klea_utils.stores._ingest.store.early_vectors import EarlyVectors
from klea_utils.stores._ingest.store.lazy_embeddings import LazyEmbeddings
from klea_utils.stores._ingest.store.manifest import StoreManifest
from klea_utils.stores.chunk_cache import ChunkCache
from klea_utils.stores.ingest_exceptions import EmbeddingError, IngestError
from langchain_core.embeddings import Embeddings

__all__ = ["OverlapEmbedder", "StoredCheck", "start_overlap", "stored_versions"]

_STOP = None

StoredCheck = Callable[[str, str, int], bool]
"""Whether the collection holds ``(file name, file hash, chunk count)`` already."""


def _nothing_stored(name: str, file_hash: str, chunks: int) -> bool:
    return False


def stored_versions(
    source_dir: Path, store_uri: str, collection: str, vectors: str, *, force: bool
) -> StoredCheck:
    """What the collection's manifest says it holds, read once before conversion.

    Nothing counts as held under ``force`` (the collection is dropped), when the manifest
    records another model's vectors (it is rebuilt) or cannot be read (the store phase
    reports that).
    """
    if force:
        return _nothing_stored
    try:
        manifest = StoreManifest.load(source_dir, collection, store_uri)
    except (IngestError, ValueError, OSError):
        return _nothing_stored
    if manifest.vectors and manifest.vectors != vectors:
        return _nothing_stored
    return manifest.is_current


def start_overlap(
    embeddings: Embeddings | None,
    source_dir: Path,
    logger: logging.Logger,
    stored: StoredCheck = _nothing_stored,
) -> OverlapEmbedder | None:
    """Start embedding during conversion for a build's store embedder, where it fits.

    Only for the build's own lazily loaded embedder (``embeddings`` a
    :class:`~klea_utils.stores._ingest.store.lazy_embeddings.LazyEmbeddings`: a caller's
    own ``Embeddings`` or Ray's are left alone); the thread then loads
    :func:`~klea_utils.stores._ingest.store.document_embedder.load_overlap_embedder`'s
    twin on the first file, and does nothing where that is ``None`` (torch, GPU, USE).
    The table is attached to ``embeddings`` as its :attr:`~LazyEmbeddings.early`.
    ``stored`` names the files the collection holds already (:func:`stored_versions`).
    """
    if not isinstance(embeddings, LazyEmbeddings):
        return None
    spec, device = embeddings.spec, embeddings.device
    table = EarlyVectors(identity="")
    embeddings.early = table
    overlap = OverlapEmbedder(
        lambda: load_overlap_embedder(spec, device), table, source_dir, logger, stored
    )
    return overlap.start()


class OverlapEmbedder:
    """A thread that embeds the cached chunks of each file handed to :meth:`submit`.

    Args:
        load: Loads the embedder (one text per run, vectors of their text alone) on the
            first file; ``None`` from it, or an error, and the thread embeds nothing.
        table: Where the vectors go; its ``identity`` is set to the embedder's once loaded.
        source_dir: The source folder whose cache the workers write.
        logger: Told how much was embedded early.
        stored: Whether the collection holds a file version already (not embedded then).
    """

    def __init__(
        self,
        load: Callable[[], DocumentEmbedder | None],
        table: EarlyVectors,
        source_dir: Path,
        logger: logging.Logger,
        stored: StoredCheck = _nothing_stored,
    ) -> None:
        self._load = load
        self._stored = stored
        self.embeddings: Embeddings | None = None
        self.embedder: DocumentEmbedder | None = None
        """The embedder once loaded (lent to the store phase by :meth:`lend`)."""
        self.table = table
        self.logger = logger
        self._cache = ChunkCache(Path(source_dir))
        self._queue: queue.SimpleQueue[tuple[str, str] | None] = queue.SimpleQueue()
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._run, name="klea-overlap-embedder", daemon=True
        )  # a daemon: it writes nothing, and one never closed must not keep the process alive
        self.failure: EmbeddingError | None = None
        self.files = 0
        """Files whose every chunk text was embedded (or already held)."""
        self.texts = 0
        """Texts embedded by the thread."""
        self.skipped = 0
        """Files not embedded: the collection holds them already."""
        self.cpu_s = 0.0
        """CPU seconds the thread used (its own clock)."""

    def start(self) -> OverlapEmbedder:
        """Start the thread; return ``self``."""
        self._thread.start()
        return self

    def submit(self, file_path: str, file_hash: str) -> None:
        """Embed the cached chunks of ``file_path`` (as of ``file_hash``) when the thread can.

        Raises:
            EmbeddingError: The thread failed on an earlier file (named in the error).
        """
        self.raise_failure()
        self._queue.put((file_path, file_hash))

    def raise_failure(self) -> None:
        """Raise the thread's failure, if it had one."""
        if self.failure is not None:
            raise self.failure

    def lend(self, embeddings: Embeddings | None) -> None:
        """Give the store phase's ``embeddings`` this thread's loaded session, once the
        thread is closed (the same variant and model file the store phase would load)."""
        if (
            isinstance(embeddings, LazyEmbeddings)
            and self.embedder is not None
            and not self._thread.is_alive()
            and embedder_identity(self.embedder) == self.table.identity
        ):
            embeddings.adopt(self.embedder)

    def detach(self, embeddings: Embeddings | None) -> None:
        """Drop the vectors still held and unhook the table from ``embeddings``."""
        if isinstance(embeddings, LazyEmbeddings) and embeddings.early is self.table:
            embeddings.early = None
        self.table.clear()

    def close(self, *, check: bool = True, finish: bool = False) -> None:
        """Stop the thread between two texts (files not reached are left to the store phase).

        With ``finish`` the thread first embeds every file already handed to it.

        Raises:
            EmbeddingError: With ``check``, when the thread failed on a file.
        """
        if self._thread.is_alive() or not self._stop.is_set():
            if not finish:
                self._stop.set()
            self._queue.put(_STOP)
            self._thread.join()
            self._stop.set()
            self._report()
        if check:
            self.raise_failure()

    def _report(self) -> None:
        if self.texts:
            self.logger.info(
                "embedded %d chunk(s) while converting, %d file(s) whole (%.1f CPU-s)",
                self.texts,
                self.files,
                self.cpu_s,
            )

    def _run(self) -> None:
        start = time.thread_time()
        try:
            while not self._stop.is_set():
                item = self._queue.get()
                if item is _STOP:
                    break
                if self.embeddings is None and not self._load_embedder():
                    break
                if not self._embed_file(*item):
                    break
        finally:
            self.cpu_s = time.thread_time() - start

    def _load_embedder(self) -> bool:
        """Load the embedder; whether there is one to embed with."""
        try:
            embedder = self._load()
        except Exception as exc:  # the store phase loads its own and reports its error
            self.logger.warning("no embedding during conversion: %s", type(exc).__name__)
            return False
        if embedder is None:
            return False
        self.embedder = embedder
        self.embeddings = embedder.embeddings
        self.table.identity = embedder_identity(embedder)
        return True

    def _embed_file(self, file_path: str, file_hash: str) -> bool:
        """Embed one file's texts; whether the thread should go on."""
        name = Path(file_path).name
        assert self.embeddings is not None
        try:
            count = self._cache.chunk_count(Path(file_path), file_hash)  # the entry's head
            if count and self._stored(name, file_hash, count):
                self.skipped += 1
                return True
            cached = self._cache.load(Path(file_path), file_hash)
            texts = [] if cached is None else [d.page_content for d in cached.docs]
            for text in dict.fromkeys(texts):
                if self._stop.is_set():
                    return False
                if text in self.table:
                    continue
                (vector,) = self.embeddings.embed_documents([text])
                self.texts += 1
                if not self.table.put(text, vector):
                    self.logger.info(
                        "early vectors reached their cap (%d bytes): the store phase embeds "
                        "the rest",
                        self.table.max_bytes,
                    )
                    return False
        except Exception as exc:  # any failure: named with the file, raised in the parent
            self.failure = EmbeddingError(name, _reason(exc))
            self.failure.__cause__ = exc
            return False
        self.files += 1
        return True


def _reason(exc: BaseException) -> str:
    """What went wrong, without a path: an ``OSError`` gives its ``strerror`` only."""
    if isinstance(exc, OSError):
        return f"{type(exc).__name__}: {exc.strerror or 'input/output error'}"
    return f"{type(exc).__name__}: {exc}"
