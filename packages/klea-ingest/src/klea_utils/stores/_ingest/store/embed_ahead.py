"""Embed the store phase's next file while this one is written: embedding beside the writes.

The store phase takes the files one at a time: embed a file's chunks, then write them to
the vector store, the BM25 corpus and the FTS5 index. The writes run in the build's one
thread, so while they run no text is embedded, and a core stays idle. :func:`embed_ahead`
wraps the phase's ``(name, file hash, stored docs)`` stream: before it hands out file *k*
it waits until *k*'s texts are embedded, then starts embedding file *k + 1* in a thread of
its own and hands out *k*, so *k + 1* is embedded while *k* is written. The vectors go to
the build embedder's :class:`~.early_vectors.EarlyVectors` table, where the store phase's
``embed_documents`` finds them (:class:`~.lazy_embeddings.LazyEmbeddings`).

Only where a vector depends on its text alone (the onnxruntime variants, one text per run,
as :func:`~.document_embedder.load_overlap_embedder` decides): then the vectors stored are
those of a build without the look-ahead, by construction. A file the collection holds in
this version (unchanged, or a resumed one) is not embedded ahead: the store phase skips
it, or embeds only what it lacks. The look-ahead writes nothing; any failure in it stops
it quietly, and the store phase embeds the rest itself (and reports its own errors). At
most one file's chunks are held beside the one being written.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor

from klea_utils.stores._ingest.store.document_embedder import VARIANT_ONNX, VARIANT_ONNX_INT8
from klea_utils.stores._ingest.store.early_vectors import EarlyVectors
from klea_utils.stores._ingest.store.lazy_embeddings import LazyEmbeddings
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

__all__ = ["StoredFile", "embed_ahead"]

StoredFile = tuple[str, str, list[Document]]
"""``(file name, file hash, stored docs)`` as the store phase writes them."""

_TEXT_ONLY_VARIANTS = (VARIANT_ONNX, VARIANT_ONNX_INT8)


class _Ahead:
    """The thread's side: embed one file's texts into the table, or stop for good."""

    def __init__(
        self, embeddings: LazyEmbeddings, held: Callable[[StoredFile], bool], logger: logging.Logger
    ) -> None:
        self.embeddings = embeddings
        self.held = held
        self.logger = logger
        self.stopped = False
        self.texts = 0
        self.table: EarlyVectors | None = None
        self.created = False
        """Whether :attr:`table` is this look-ahead's own (no overlap thread made one)."""

    def _open(self) -> EarlyVectors | None:
        """The table to fill, once the model is loaded; ``None`` where none fits."""
        lazy = self.embeddings
        lazy.model()  # loads the model (once), here in the thread
        if lazy.variant not in _TEXT_ONLY_VARIANTS or not lazy.identity:
            return None
        if lazy.early is None:
            lazy.early = EarlyVectors(identity=lazy.identity)
            self.created = True
        return lazy.early if lazy.early.identity == lazy.identity else None

    def embed(self, item: StoredFile) -> None:
        try:
            if self.stopped or self.held(item):
                return
            if self.table is None:
                self.table = self._open()
            table = self.table
            if table is None:
                self.stopped = True
                return
            missing = [t for t in dict.fromkeys(d.page_content for d in item[2]) if t not in table]
            if not missing:
                return
            vectors = self.embeddings.model().embed_documents(missing)
            for text, vector in zip(missing, vectors, strict=True):
                if not table.put(text, vector):
                    self.stopped = True  # the cap: the store phase embeds the rest
                    return
            self.texts += len(missing)
        except Exception as exc:  # the store phase embeds the file again and reports errors
            self.logger.debug("no embedding ahead from %s on: %s", item[0], type(exc).__name__)
            self.stopped = True

    def close(self) -> None:
        """Unhook a table of its own (the vectors left in it are of files not written)."""
        if self.created and self.embeddings.early is self.table:
            self.embeddings.early = None


def embed_ahead(
    files: Iterator[StoredFile],
    embeddings: Embeddings | None,
    held: Callable[[StoredFile], bool],
    logger: logging.Logger,
) -> Iterator[StoredFile]:
    """``files`` as they come, each one's texts embedded before it is handed out, the next
    one's embedding started in a thread as it is.

    ``held`` says whether the collection holds a file in this version already (not
    embedded ahead). ``embeddings`` other than the build's own
    :class:`~.lazy_embeddings.LazyEmbeddings` get ``files`` unchanged.
    """
    if not isinstance(embeddings, LazyEmbeddings):
        yield from files
        return
    ahead = _Ahead(embeddings, held, logger)
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="klea-embed-ahead")
    try:
        current = next(files, None)
        pending: Future[None] | None = (
            None if current is None else pool.submit(ahead.embed, current)
        )
        while current is not None:
            following = next(files, None)
            if pending is not None:
                pending.result()  # the thread's own failures stop it; none is raised here
            pending = None if following is None else pool.submit(ahead.embed, following)
            yield current
            current = following
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        ahead.close()
        if ahead.texts:
            logger.info("embedded %d chunk(s) of the next file while writing", ahead.texts)
