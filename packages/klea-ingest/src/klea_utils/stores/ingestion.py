"""Build stores from a directory of source documents.

:class:`StoresBuilder` converts and chunks documents with Docling (``chunk_all``), caching
the chunks on disk, and writes them to vector, BM25 and FTS5 stores (``store_all``,
``build``) through the :class:`~klea_utils.stores.store_writer.StoreWriter` it owns.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from klea_utils.stores._ingest.build_timing import BuildClock, count_pdf_pages, write_timing
from klea_utils.stores._ingest.chunking.chunking import (
    DEFAULT_OVERLAP_SENTENCES,
    resolve_max_tokens,
    tokenizer_for,
)
from klea_utils.stores._ingest.convert.chunk_phase import (
    check_ray_options,
    convert_uncached,
    record_and_prune,
    scan_sources,
    warn_if_forced_max_tokens,
    warn_if_pdfs_fall_back,
)
from klea_utils.stores._ingest.convert.conversion import validate_device
from klea_utils.stores._ingest.progress import format_summary
from klea_utils.stores._ingest.store.collection_lock import collection_lock
from klea_utils.stores._ingest.store.document_embedder import vectors_key
from klea_utils.stores._ingest.store.folded_results import FoldedResults
from klea_utils.stores._ingest.store.overlap_embedder import (
    OverlapEmbedder,
    start_overlap,
    stored_versions,
)
from klea_utils.stores._ingest.store.warm_imports import warm_store_imports
from klea_utils.stores.chunk_cache import ChunkCache
from klea_utils.stores.chunk_worker import (
    DEFAULT_WORKER_MEM_LIMIT,
    ChunkItemResult,
    ChunkWorkerConfig,
)
from klea_utils.stores.metadata import apply_store_metadata_policy
from klea_utils.stores.metadata_map import write_heading_template
from klea_utils.stores.store_writer import (
    DEFAULT_EMBED_BATCH_SIZE,
    StoreSummary,
    StoreTargets,
    StoreWriter,
)
from klea_utils.stores.utils import check_store_target
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

if TYPE_CHECKING:
    from klea_utils.stores.references import ReferenceLibrary

__all__ = [
    "DEFAULT_EMBED_BATCH_SIZE",
    "DEFAULT_WORKER_MEM_LIMIT",
    "StoresBuilder",
    "_apply_store_metadata_policy",  # the seed documents it here; it lives in metadata
]

_apply_store_metadata_policy = apply_store_metadata_policy
"""The seed's name for :func:`klea_utils.stores.metadata.apply_store_metadata_policy`."""


class StoresBuilder:
    """Build stores from a directory of source documents.

    Uses Docling for document conversion and token-aware chunking, then embeds chunks and
    writes them to a vector store backend. Optionally also writes the combined chunked
    corpus for BM25 retrieval.

    Args:
        embedding_model: Embedding model spec used by the store phase.
        logger: Logger for progress, warnings and errors.
        max_tokens: Token budget per chunk, its headings included. ``None``: what the
            embedding model reads, at most 450. A larger explicit value than the model reads
            raises ``ValueError`` unless ``force_max_tokens``.
        merge_peers: Merge undersized chunks that share headings.
        tokenizer_model: Hugging Face tokenizer for chunking. ``None``: the embedding
            model's own (see ``tokenizer_for``); falls back to the packaged MiniLM
            tokenizer when it cannot be loaded offline.
        do_ocr: OCR scanned PDFs (Docling's OCR when its models exist, else tesseract).
        embed_batch_size: Chunks per embedding call in ``store_all()``.
        store_dir: Local vector store folder, excluded from ingestion when inside the source.
        device: ``auto``, ``cpu``, ``cuda`` (``cuda:N``) or ``mps`` for Docling's models
            and the embedder.
        artifacts_path: Folder of Docling models (``docling-tools models download``);
            without it the Hugging Face cache is searched, then the model-free pipeline used.
        file_timeout_s: A conversion worker with no progress for this long is killed.
        embeddings: Ready ``Embeddings`` for the store phase instead of loading
            ``embedding_model`` (which is otherwise loaded on the first chunk embedded).
        force_max_tokens: Accept a ``max_tokens`` above what the embedding model reads.
        ray_address: Convert uncached files on a Ray cluster instead of local workers:
            ``auto`` joins the cluster ``ray start`` made, ``local`` starts a private
            local instance, or ``host:port``; needs ``klea-ingest[ray]`` (see
            docs/guides/scaling-out.md). ``None`` (default) keeps everything local.
        ray_embed: Also embed on the cluster, in workers that load the model once
            (needs ``ray_address``); ``embeddings`` then must be ``None``.
        overlap_sentences: Sentences that end a piece of a text cut to the budget and are
            repeated at the start of its next piece. The chunk cache keys entries on this,
            ``max_tokens``, ``merge_peers`` and the tokenizer: a change re-chunks.
        embed_during_conversion: In :meth:`build`, embed each converted file's chunks in a
            thread of this process while the workers convert the others (default), where
            a vector depends on its text alone (the packaged MiniLM on onnxruntime, the
            CPU default); the store phase then embeds only what the thread did not reach.
            Same chunks and vectors either way. An addition to the original signature.

    Attributes:
        writer: The :class:`~klea_utils.stores.store_writer.StoreWriter` of the store phase
            (embedding model, batch size, store folder); ``store_all`` and ``build`` use it.
    """

    DEFAULT_EMBED_BATCH_SIZE = DEFAULT_EMBED_BATCH_SIZE
    """Number of chunks embedded per ``add_documents`` call in ``store_all()``: mostly a
    progress-granularity knob, not a throughput one."""

    def __init__(
        self,
        embedding_model: str,
        logger: logging.Logger,
        max_tokens: int | None = None,
        merge_peers: bool = True,
        tokenizer_model: str | None = None,
        do_ocr: bool = True,
        embed_batch_size: int = 256,
        store_dir: Path | None = None,
        *,
        device: str = "auto",
        artifacts_path: Path | None = None,
        file_timeout_s: float = 900.0,
        embeddings: Embeddings | None = None,
        force_max_tokens: bool = False,
        ray_address: str | None = None,
        ray_embed: bool = False,
        overlap_sentences: int = DEFAULT_OVERLAP_SENTENCES,
        embed_during_conversion: bool = True,
    ) -> None:
        if overlap_sentences < 0:
            raise ValueError(f"overlap_sentences must be >= 0, got {overlap_sentences}")
        self.overlap_sentences = overlap_sentences
        self.embed_during_conversion = embed_during_conversion
        max_tokens = resolve_max_tokens(embedding_model, max_tokens, force=force_max_tokens)
        self.embedding_model = embedding_model
        self.logger = logger
        self.max_tokens = max_tokens
        self.merge_peers = merge_peers
        self.tokenizer_model = tokenizer_model or tokenizer_for(embedding_model)
        self.do_ocr = do_ocr
        self.device = validate_device(device)
        self.artifacts_path = Path(artifacts_path) if artifacts_path is not None else None
        self.file_timeout_s = file_timeout_s
        check_ray_options(ray_address, ray_embed, embeddings)
        self.ray_address = ray_address
        self.ray_embed = ray_embed
        if ray_embed and ray_address is not None:
            from klea_utils.stores._ingest.workers.ray_embeddings import RayEmbeddings

            embeddings = RayEmbeddings(
                embedding_model, ray_address, device=self.device, logger=logger
            )
        self.writer = StoreWriter(
            embedding_model=embedding_model,
            logger=logger,
            embed_batch_size=embed_batch_size,
            store_dir=store_dir,
            device=self.device,
            embeddings=embeddings,
        )
        warn_if_forced_max_tokens(embedding_model, max_tokens, logger)
        self.converted_files: list[Path] = []
        """The files the last :meth:`chunk_all` converted (not those found in the cache)."""
        self.last_timing: BuildClock | None = None
        """The phases of the last :meth:`build`, timed (also saved, see :mod:`.build_timing`)."""

    def worker_config(self, source_path: Path, mem_limit_bytes: int | None) -> ChunkWorkerConfig:
        """Return the picklable worker configuration for ``source_path``."""
        return ChunkWorkerConfig(
            source_path=str(source_path),
            max_tokens=self.max_tokens,
            tokenizer_model=self.tokenizer_model,
            do_ocr=self.do_ocr,
            mem_limit_bytes=mem_limit_bytes,
            log_level=self.logger.getEffectiveLevel(),
            merge_peers=self.merge_peers,
            device=self.device,
            artifacts_path=str(self.artifacts_path) if self.artifacts_path else None,
            file_timeout_s=self.file_timeout_s,
            overlap_sentences=self.overlap_sentences,
        )

    def chunk_all(
        self,
        source_path: Path,
        force: bool = False,
        worker_mem_limit: int | None = DEFAULT_WORKER_MEM_LIMIT,
        worker_batch_size: int = 200,
        *,
        in_process: bool = False,
        references: ReferenceLibrary | None = None,
        workers: int | None = None,
    ) -> dict[str, dict[str, Any]]:
        """Convert, chunk, and cache all files in memory-bounded workers.

        Uncached files are converted in short-lived spawned workers
        (:mod:`klea_utils.stores.chunk_worker`); cache hits are handled in-process. Chunks
        live in the on-disk cache and are never accumulated in this process. Cache entries
        whose source file no longer exists (or has changed) are pruned at the end.

        Args:
            source_path: Source directory.
            force: Re-process all files even if cached.
            worker_mem_limit: Maximum RSS per conversion worker in bytes (it includes the
                ~1-1.5 GiB Docling occupies at start-up). ``None`` disables the cap;
                workers are then bounded only by ``worker_batch_size``.
            worker_batch_size: Maximum files handed to any single conversion worker.
            in_process: Convert in this process instead of workers (small corpora, tests).
            workers: Conversion workers running at once, each on its own batch and under
                its own ``worker_mem_limit``; ``None`` (auto): the usable cores, no more
                than the available memory holds at the cap
                (:func:`~klea_utils.stores._ingest.workers.pool_size.auto_workers`).
                Ignored ``in_process`` (serial) and on Ray. An addition to the original
                signature.
            references: A reference-manager library
                (:func:`~klea_utils.stores.references.load_reference_library`): each file's
                ``DEFAULT`` becomes its matched entry's record, and every ``DEFAULT`` gets
                its match report line (``_match``).

        Returns:
            ``{file_name: {"DEFAULT": {extracted metadata}, "heading > heading": {}, ...}}``
            for template generation, for every file with chunks.

        Raises:
            SourceLayoutError: Two source files share a name.
            NotADirectoryError: ``source_path`` is not a folder.
        """
        return self._chunk_all(
            source_path,
            force,
            worker_mem_limit,
            worker_batch_size,
            in_process=in_process,
            references=references,
            workers=workers,
        )

    def _chunk_all(
        self,
        source_path: Path,
        force: bool,
        worker_mem_limit: int | None,
        worker_batch_size: int,
        *,
        in_process: bool = False,
        references: ReferenceLibrary | None = None,
        workers: int | None = None,
        on_converted: Callable[[ChunkItemResult], object] | None = None,
    ) -> dict[str, dict[str, Any]]:
        """:meth:`chunk_all`, telling ``on_converted`` of each file cached as it lands."""
        source_path = Path(source_path).resolve()
        files = self.writer.source_files(source_path)
        cache = ChunkCache(source_path, chunking=self.worker_config(source_path, None).chunking())
        file_headings, live, todo = scan_sources(files, cache, force, self.logger)
        self.converted_files = [Path(path) for path, _hash in todo]
        self.logger.info(
            "%d source file(s): %d cached, %d to convert",
            len(files),
            len(files) - len(todo),
            len(todo),
        )
        if todo:
            warn_if_pdfs_fall_back(todo, self.artifacts_path, self.logger)
            config = self.worker_config(source_path, None if in_process else worker_mem_limit)
            results = convert_uncached(
                config,
                todo,
                ray_address=self.ray_address,
                worker_batch_size=worker_batch_size,
                in_process=in_process,
                logger=self.logger,
                workers=workers,
                on_converted=on_converted,
            )
            for result in results:
                if result.status == "ok" and result.file_headings_entry is not None:
                    file_headings[result.file_name] = result.file_headings_entry
            self.logger.info("%s", format_summary(results))
        else:
            results = []
        record_and_prune(source_path, results, cache, live, self.logger)
        if references is not None:
            from klea_utils.stores._ingest.biblio.refmgr.apply import apply_reference_library

            file_headings = apply_reference_library(
                references, file_headings, files, cache, live, self.logger
            )
        return {p.name: file_headings[p.name] for p in files if p.name in file_headings}

    # -- store phase: the writer (klea_utils.stores.store_writer) ---------------------------

    @property
    def metadata_map_path(self) -> Path | None:
        """The loaded metadata map, excluded from ingestion when it lies in the source."""
        return self.writer.metadata_map_path

    @metadata_map_path.setter
    def metadata_map_path(self, path: Path | None) -> None:
        self.writer.metadata_map_path = path

    def write_heading_template(
        self, file_headings: dict[str, dict[str, Any]], source_dir: Path
    ) -> None:
        """Write a metadata-map template JSON file organised per source file.

        Delegates to :func:`klea_utils.stores.metadata_map.write_heading_template`.
        """
        write_heading_template(file_headings, source_dir, logger=self.logger)

    def store_all(
        self,
        results: Iterable[tuple[str, list[Document], Path]],
        store_uri: str,
        collection_name: str,
        source_dir: Path,
        force: bool = False,
        bm25_path: str | None = None,
        *,
        fts5_path: str | None = None,
        fts5_stemming: bool | None = None,
        fts5_multiscript: bool | None = None,
    ) -> StoreSummary:
        """Write chunked documents to a vector store; return what was done.

        Incremental: unchanged files are skipped, changed ones replaced, new ones added,
        files gone from the source left alone; ``force`` rebuilds the collection. See
        :meth:`StoreWriter.write <klea_utils.stores.store_writer.StoreWriter.write>` (this
        is :attr:`writer`'s) and :class:`~klea_utils.stores.store_writer.StoreTargets` for
        each argument. ``fts5_path``, an addition to the original signature, also writes an
        FTS5 index of the chunks (``sci_etl_core.search``), servable as a ``fts5:`` BM25
        store; ``fts5_stemming`` chooses Porter stemming for it and ``fts5_multiscript``
        its segmentation of non-Latin scripts (a new index is multiscript). The original returned
        ``None``; the summary is an addition.
        """
        targets = StoreTargets(
            store_uri,
            collection_name,
            source_dir,
            force,
            bm25_path,
            fts5_path,
            fts5_stemming,
            fts5_multiscript,
        )
        return self.writer.write(results, targets)

    def build(
        self,
        source_dir: str,
        store_uri: str,
        collection_name: str,
        force: bool = False,
        metadata_map_path: str | None = None,
        bm25_path: str | None = None,
        worker_mem_limit: int | None = DEFAULT_WORKER_MEM_LIMIT,
        worker_batch_size: int = 200,
        *,
        fts5_path: str | None = None,
        fts5_stemming: bool | None = None,
        fts5_multiscript: bool | None = None,
        references: ReferenceLibrary | None = None,
        workers: int | None = None,
    ) -> StoreSummary:
        """Full pipeline: chunk documents, then write them to the stores.

        :meth:`chunk_all` converts in memory-capped workers into the on-disk cache; the
        cached chunks are then streamed one file at a time, with the metadata map applied
        (:meth:`StoreWriter.load_and_fold_results
        <klea_utils.stores.store_writer.StoreWriter.load_and_fold_results>`), into
        :meth:`store_all`. Without a ``metadata_map_path`` the template is
        (re)generated from the extracted metadata and used as the map, so ``build`` needs
        no prior ``chunk`` (at the cost of no review step). The store URI and the
        collection name are checked first, so a bad one fails before any conversion, and
        the collection's lock is held from chunking to storing (a second run raises
        :class:`~klea_utils.stores.ingest_exceptions.CollectionBusyError`).
        ``fts5_path``, ``fts5_stemming`` and ``fts5_multiscript`` as for :meth:`store_all`,
        ``references`` and ``workers`` as for :meth:`chunk_all` (``references`` fills the
        template; a given map still wins). Returns the store summary, whose
        ``missing_files`` lists the files without cached chunks. Each stored file's
        reference list is then parsed from the cache and the collection's citation links
        written to ``<source>/.klea-cache/<collection>.citations.json`` (see
        docs/guides/citations.md).
        """
        check_store_target(store_uri, collection_name)
        source = Path(source_dir).resolve()
        targets = StoreTargets(
            store_uri,
            collection_name,
            source,
            force,
            bm25_path,
            fts5_path,
            fts5_stemming,
            fts5_multiscript,
        )
        if metadata_map_path:
            self.metadata_map_path = Path(metadata_map_path).resolve()
        clock = BuildClock(("conversion", "store", "rest"))
        with collection_lock(source, collection_name):  # across chunking and storing
            overlap = self._start_overlap(source, targets)
            try:
                return self._build_locked(
                    clock,
                    source,
                    targets,
                    metadata_map_path,
                    overlap,
                    force=force,
                    worker_mem_limit=worker_mem_limit,
                    worker_batch_size=worker_batch_size,
                    references=references,
                    workers=workers,
                )
            finally:
                if overlap is not None:
                    overlap.close(check=False)
                    overlap.detach(self.writer.embeddings)

    def _start_overlap(self, source: Path, targets: StoreTargets) -> OverlapEmbedder | None:
        """The thread embedding converted files during conversion, where the build has one."""
        if not self.embed_during_conversion or self.ray_address is not None:
            return None
        stored = stored_versions(
            source,
            targets.store_uri,
            targets.collection_name,
            vectors_key(self.embedding_model),
            force=targets.force,
        )
        return start_overlap(self.writer.embeddings, source, self.logger, stored)

    def _build_locked(
        self,
        clock: BuildClock,
        source: Path,
        targets: StoreTargets,
        metadata_map_path: str | None,
        overlap: OverlapEmbedder | None,
        *,
        force: bool,
        worker_mem_limit: int | None,
        worker_batch_size: int,
        references: ReferenceLibrary | None,
        workers: int | None,
    ) -> StoreSummary:
        """:meth:`build`'s phases, the collection's lock held; ``overlap`` embeds early."""
        collection_name = targets.collection_name
        warm_store_imports(targets.store_uri)  # while the workers convert
        with clock.phase("conversion") as conversion:
            file_headings = self._chunk_all(
                source,
                force,
                worker_mem_limit,
                worker_batch_size,
                references=references,
                workers=workers,
                on_converted=None if overlap is None else _submitter(overlap),
            )
            conversion.pages = count_pdf_pages(self.converted_files)
            if overlap is not None:
                overlap.close()  # stops between two texts; raises its EmbeddingError
                overlap.lend(self.writer.embeddings)  # its session: no second one loaded
                conversion.chunks = overlap.texts or None
        with clock.phase("rest"):
            if not metadata_map_path:
                write_heading_template(file_headings, source, self.logger)
            del file_headings
        with clock.phase("store") as store:
            results = self._load_and_fold_results(source, metadata_map_path)
            summary = self.writer.write(results, targets)
            store.chunks = summary.chunks_added
        with clock.phase("rest"):
            self._write_citation_links(source, collection_name, metadata_map_path)
        self._save_timing(clock, source, collection_name)
        return summary

    def _save_timing(self, clock: BuildClock, source: Path, collection_name: str) -> None:
        """Keep the build's phase timing (:attr:`last_timing`), save it beside the manifest;
        a timing file that cannot be written is reported, never fatal."""
        self.last_timing = clock
        for line in clock.lines():
            self.logger.debug("timing: %s", line)
        try:
            write_timing(clock, source, collection_name)
        except OSError as exc:
            self.logger.warning("build timing of %r not written: %s", collection_name, exc)

    def _write_citation_links(
        self, source: Path, collection_name: str, metadata_map_path: str | None
    ) -> None:
        """Parse every stored file's references from the cache; write the links file.

        See docs/guides/citations.md. It reads the cached chunks again (no conversion), so
        a paper added later links the stored papers that cite it.
        """
        from klea_utils.stores._ingest.citations.build_links import write_collection_links

        results = self._load_and_fold_results(source, metadata_map_path)
        try:
            library = write_collection_links(results, source, collection_name)
        except (ValueError, OSError) as exc:  # the stores are written: report, go on
            self.logger.warning("citations of collection %r not written: %s", collection_name, exc)
            return
        self.logger.info(
            "citations: %d paper(s), %d link(s) inside the library",
            len(library),
            len(library.links()),
        )

    def _load_and_fold_results(
        self, source_dir: Path, metadata_map_path: str | Path | None = None
    ) -> FoldedResults:
        """Stream the cached chunks per file with the metadata map applied.

        :meth:`StoreWriter.load_and_fold_results
        <klea_utils.stores.store_writer.StoreWriter.load_and_fold_results>` of
        :attr:`writer`; pass the result to :meth:`store_all`.
        """
        return self.writer.load_and_fold_results(source_dir, metadata_map_path)


def _submitter(overlap: OverlapEmbedder) -> Callable[[ChunkItemResult], None]:
    """Hand each file cached to ``overlap``."""

    def submit(result: ChunkItemResult) -> None:
        if result.file_path is not None:
            overlap.submit(result.file_path, result.file_hash)

    return submit
