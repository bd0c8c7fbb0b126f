"""``klea-stores-create``: build vector, BM25 and FTS5 stores from a folder of documents.

The review workflow::

    klea-stores-create pre-check papers/ --organise     # which PDFs need OCR
    klea-stores-create chunk papers/                    # convert, chunk, write the template
    cp papers/.klea-cache/metadata-map.template.json metadata-map.json   # then edit it
    klea-stores-create map-lint papers/ --metadata-map metadata-map.json
    klea-stores-create store papers/ --metadata-map metadata-map.json \\
        --store chroma:stores/papers --collection papers --bm25-store stores/papers.bm25
    klea-stores-create store-lint --bm25-store stores/papers.bm25

``build`` runs chunk and store in one go, without the review step.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from klea_utils.stores._ingest.cli_logging import configure_logging
from klea_utils.stores._ingest.cli_options import (
    APP_HELP,
    DEFAULT_MODEL,
    BibFiles,
    Bm25,
    Collection,
    Debug,
    DeviceOpt,
    EmbedBatch,
    EmbedDuringConversion,
    FileTimeout,
    Force,
    ForceMaxTokens,
    Fts5,
    Fts5Multiscript,
    Fts5Stemming,
    MapPath,
    MaxTokens,
    MemLimit,
    Model,
    Ocr,
    OldModel,
    OverlapSentences,
    Quiet,
    RayAddress,
    RayEmbed,
    Source,
    StoreUri,
    Strict,
    Verbose,
    WorkerBatch,
    Workers,
    WriteConfig,
    ZoteroDir,
    check_fts5_options,
    load_references,
    make_builder,
    parse_workers,
)
from klea_utils.stores._ingest.cli_report import finish_store, query_hint, run_step

__all__ = ["app", "main"]

app = typer.Typer(
    name="klea-stores-create",
    help=APP_HELP,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"klea-stores-create (klea-ingest {version('klea-ingest')})")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """Build vector, BM25 and FTS5 stores from a folder of documents."""


@app.command("pre-check")
def pre_check(
    source: Source,
    organise: Annotated[
        bool, typer.Option("--organise", help="Copy files into ocr/ and no-ocr/.")
    ] = False,
    verbose: Verbose = 0,
    quiet: Quiet = False,
    debug: Debug = False,
) -> None:
    """Classify the PDFs under SOURCE as text or scanned (needing OCR)."""
    from klea_utils.stores.precheck import (
        classify_directory,
        format_precheck_report,
        organise_directory,
    )

    configure_logging(verbose, quiet, debug)

    def step() -> None:
        classes = classify_directory(source)
        typer.echo(format_precheck_report(classes))
        if organise:
            ocr_dir, no_ocr_dir = organise_directory(source, classes)
            typer.echo(f"Copied scanned PDFs to {ocr_dir} and everything else to {no_ocr_dir}")

    run_step(step)


def _chunk(
    builder: Any,
    source: Path,
    force: bool,
    mem: int,
    batch: int,
    references: Any = None,
    workers: int | None = None,
) -> dict[str, Any]:
    return dict(
        builder.chunk_all(
            source.resolve(),
            force=force,
            worker_mem_limit=mem or None,
            worker_batch_size=batch,
            references=references,
            workers=workers,
        )
    )


@app.command()
def chunk(
    source: Source,
    max_tokens: MaxTokens = None,
    force_max_tokens: ForceMaxTokens = False,
    overlap_sentences: OverlapSentences = None,
    ocr: Ocr = True,
    force: Force = False,
    worker_mem_limit: MemLimit = 4 * 1024**3,
    worker_batch_size: WorkerBatch = 200,
    workers: Workers = "auto",
    file_timeout: FileTimeout = 900.0,
    strict: Strict = False,
    model: Model = DEFAULT_MODEL,
    old_model: OldModel = None,
    verbose: Verbose = 0,
    quiet: Quiet = False,
    device: DeviceOpt = "auto",
    ray: RayAddress = None,
    bib: BibFiles = None,
    zotero: ZoteroDir = None,
    debug: Debug = False,
) -> None:
    """Convert and chunk SOURCE into its cache and write the metadata-map template."""
    from klea_utils.stores._ingest.convert.failures import (
        format_not_chunked,
        read_conversion_failures,
    )
    from klea_utils.stores._ingest.progress import zero_chunk_reason
    from klea_utils.stores.map_lint import format_metadata_lint_report, lint_metadata_map
    from klea_utils.stores.metadata_map import write_heading_template
    from klea_utils.stores.source_files import find_source_files

    pool = parse_workers(workers)
    logger = configure_logging(verbose, quiet, debug)

    def step() -> None:
        references = load_references(bib, zotero, logger)
        builder = make_builder(
            old_model or model,
            logger,
            max_tokens=max_tokens,
            force_max_tokens=force_max_tokens,
            overlap_sentences=overlap_sentences,
            do_ocr=ocr,
            device=device,
            ray_address=ray,
            file_timeout_s=file_timeout,
        )
        headings = _chunk(
            builder, source, force, worker_mem_limit, worker_batch_size, references, pool
        )
        path = write_heading_template(headings, source.resolve(), logger)
        typer.echo(format_metadata_lint_report(lint_metadata_map(headings)))
        files = find_source_files(source.resolve(), store_dir=None)
        failed = sorted(p.name for p in files if p.name not in headings)
        typer.echo(f"Chunked {len(headings)} of {len(files)} file(s).")
        if path is not None:
            typer.echo(f"Template: {path}")
            typer.echo("Next: copy it, edit it, then run map-lint and store with --metadata-map.")
        if failed:
            reasons = read_conversion_failures(source.resolve())
            for name in failed:
                reasons.setdefault(name, f"produced no chunks ({zero_chunk_reason(name)})")
            typer.echo(format_not_chunked(failed, reasons), err=True)
            if strict or not headings:
                raise typer.Exit(1)

    run_step(step)


@app.command("map-lint")
def map_lint(
    source: Source,
    metadata_map: MapPath = None,
    verbose: Verbose = 0,
    quiet: Quiet = False,
    debug: Debug = False,
) -> None:
    """Check a metadata map against the files in SOURCE (failed files need no entry)."""
    from klea_utils.stores._ingest.convert.failures import (
        format_not_stored,
        read_conversion_failures,
    )
    from klea_utils.stores.map_lint import format_metadata_lint_report, lint_metadata_map
    from klea_utils.stores.metadata_map import load_metadata_map, template_path
    from klea_utils.stores.source_files import find_source_files

    configure_logging(verbose, quiet, debug)

    def step() -> None:
        path = metadata_map or template_path(source)
        data = load_metadata_map(path)
        files = find_source_files(source.resolve(), metadata_map_path=path.resolve())
        failed = read_conversion_failures(source.resolve())
        names = [p.name for p in files if p.name not in failed]
        report = lint_metadata_map(data, names)
        typer.echo(format_metadata_lint_report(report))
        skipped = [p.name for p in files if p.name in failed]
        if skipped:
            typer.echo(f"Not required, {format_not_stored(skipped, failed)}")
        if report["missing_keys"] or report["issues"]:
            raise typer.Exit(1)

    run_step(step)


@app.command()
def store(
    source: Source,
    store_uri: StoreUri,
    collection: Collection,
    metadata_map: MapPath = None,
    bm25_store: Bm25 = None,
    fts5_store: Fts5 = None,
    fts5_stemming: Fts5Stemming = None,
    fts5_multiscript: Fts5Multiscript = None,
    embed_batch_size: EmbedBatch = 256,
    force: Force = False,
    strict: Strict = False,
    write_stores_config: WriteConfig = None,
    model: Model = DEFAULT_MODEL,
    old_model: OldModel = None,
    verbose: Verbose = 0,
    quiet: Quiet = False,
    debug: Debug = False,
) -> None:
    """Embed the cached chunks of SOURCE into a vector store (incremental)."""
    check_fts5_options(fts5_store, fts5_stemming, fts5_multiscript)
    logger = configure_logging(verbose, quiet, debug)

    def step() -> None:
        builder = make_builder(
            old_model or model,
            logger,
            max_tokens=1,  # store does not chunk: no chunk-size warning
            embed_batch_size=embed_batch_size,
            store_uri=store_uri,
        )
        summary = builder.store_all(
            builder._load_and_fold_results(source, metadata_map),
            store_uri,
            collection,
            source.resolve(),
            force=force,
            bm25_path=str(bm25_store) if bm25_store else None,
            fts5_path=str(fts5_store) if fts5_store else None,
            fts5_stemming=fts5_stemming,
            fts5_multiscript=fts5_multiscript,
        )
        hint = query_hint(
            store_uri,
            collection,
            bm25_store,
            fts5_store,
            write_stores_config,
            embedding_model=old_model or model,
        )
        finish_store(summary, source, old_model or model, logger, strict, hint)

    run_step(step)


@app.command("store-lint")
def store_lint(
    bm25_store: Annotated[
        Path, typer.Option("--bm25-store", exists=True, dir_okay=False, help="BM25 corpus.")
    ],
    samples: Annotated[
        int, typer.Option("--samples", min=0, help="Sampling locations to show.")
    ] = 3,
    verbose: Verbose = 0,
    quiet: Quiet = False,
    debug: Debug = False,
) -> None:
    """Check a stored chunk corpus (the BM25 corpus) and show sample chunks."""
    from klea_utils.stores.postcheck import (
        format_store_lint_report,
        lint_store,
        select_sample_windows,
    )
    from klea_utils.stores.retrieval.bm25 import read_corpus

    configure_logging(verbose, quiet, debug)

    def step() -> None:
        docs = read_corpus(bm25_store)
        if not docs:
            from klea_utils.stores.exceptions import StoreBackendError

            raise StoreBackendError(f"BM25 corpus {str(bm25_store)!r} holds no chunks")
        report = lint_store(docs)
        typer.echo(format_store_lint_report(report, select_sample_windows(docs, samples)))
        keys = ("empty", "missing_metadata", "no_file_name", "invalid_content", "invalid_year")
        if any(report[k] for k in keys):
            raise typer.Exit(1)

    run_step(step)


@app.command()
def build(
    source: Source,
    store_uri: StoreUri,
    collection: Collection,
    metadata_map: MapPath = None,
    bm25_store: Bm25 = None,
    fts5_store: Fts5 = None,
    fts5_stemming: Fts5Stemming = None,
    fts5_multiscript: Fts5Multiscript = None,
    max_tokens: MaxTokens = None,
    force_max_tokens: ForceMaxTokens = False,
    overlap_sentences: OverlapSentences = None,
    ocr: Ocr = True,
    force: Force = False,
    worker_mem_limit: MemLimit = 4 * 1024**3,
    worker_batch_size: WorkerBatch = 200,
    workers: Workers = "auto",
    file_timeout: FileTimeout = 900.0,
    embed_batch_size: EmbedBatch = 256,
    embed_during_conversion: EmbedDuringConversion = True,
    strict: Strict = False,
    write_stores_config: WriteConfig = None,
    model: Model = DEFAULT_MODEL,
    old_model: OldModel = None,
    verbose: Verbose = 0,
    quiet: Quiet = False,
    device: DeviceOpt = "auto",
    ray: RayAddress = None,
    ray_embed: RayEmbed = False,
    bib: BibFiles = None,
    zotero: ZoteroDir = None,
    debug: Debug = False,
) -> None:
    """Chunk and store SOURCE in one go (no review step unless --metadata-map is given)."""
    check_fts5_options(fts5_store, fts5_stemming, fts5_multiscript)
    if ray_embed and ray is None:
        raise typer.BadParameter(
            "it embeds on a Ray cluster; give --ray ADDRESS too", param_hint="'--ray-embed'"
        )
    pool = parse_workers(workers)
    logger = configure_logging(verbose, quiet, debug)

    def step() -> None:
        references = load_references(bib, zotero, logger)
        if references is not None and metadata_map:
            logger.warning(
                "--bib/--zotero fill the template; --metadata-map %s is used as it is",
                metadata_map,
            )
        builder = make_builder(
            old_model or model,
            logger,
            max_tokens=max_tokens,
            force_max_tokens=force_max_tokens,
            overlap_sentences=overlap_sentences,
            do_ocr=ocr,
            embed_batch_size=embed_batch_size,
            store_uri=store_uri,
            device=device,
            ray_address=ray,
            ray_embed=ray_embed,
            file_timeout_s=file_timeout,
            embed_during_conversion=embed_during_conversion,
        )
        summary = builder.build(
            str(source),
            store_uri,
            collection,
            force=force,
            metadata_map_path=str(metadata_map) if metadata_map else None,
            bm25_path=str(bm25_store) if bm25_store else None,
            worker_mem_limit=worker_mem_limit or None,
            worker_batch_size=worker_batch_size,
            workers=pool,
            fts5_path=str(fts5_store) if fts5_store else None,
            fts5_stemming=fts5_stemming,
            fts5_multiscript=fts5_multiscript,
            references=references,
        )
        if builder.last_timing is not None and not quiet:
            for line in builder.last_timing.lines():
                typer.echo(f"Timing {line}")
        from klea_utils.stores._ingest.citations.build_links import citations_path

        links = citations_path(source.resolve(), collection)
        hint = query_hint(
            store_uri,
            collection,
            bm25_store,
            fts5_store,
            write_stores_config,
            links,
            embedding_model=old_model or model,
        )
        finish_store(summary, source, old_model or model, logger, strict, hint)

    run_step(step)


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":
    main()
