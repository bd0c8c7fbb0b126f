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

import logging
import os
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from klea_utils.stores.exceptions import KleaStoresError

if TYPE_CHECKING:
    from klea_utils.stores.ingestion import StoresBuilder
    from klea_utils.stores.store_writer import StoreSummary

__all__ = ["app", "main"]

DEFAULT_MODEL = "huggingface:all-MiniLM-L6-v2"
"""Default embedding model: the packaged all-MiniLM-L6-v2, which works offline."""

_HELP = """Build vector, BM25 and FTS5 stores from a folder of documents.

Review workflow, from a raw folder to a queried store:

1. pre-check SOURCE [--organise]: find the PDFs that need OCR (copies them into ocr/ and \
no-ocr/).

2. chunk SOURCE: convert and chunk every file into SOURCE/.klea-cache and write the \
metadata-map template SOURCE/.klea-cache/metadata-map.template.json.

3. Copy the template (e.g. to metadata-map.json) and edit it: fix each file's DEFAULT \
bibliographic fields; fill a heading entry only where a section needs its own metadata.

4. map-lint SOURCE --metadata-map metadata-map.json: check the map (exit code 1 on \
problems).

5. store SOURCE --metadata-map metadata-map.json --store chroma:DIR --collection NAME \
[--bm25-store FILE]: embed and write; reruns only re-embed changed files.

6. store-lint --bm25-store FILE: check the stored corpus and review sample chunks.

build SOURCE --store ... --collection ... does steps 2 and 5 without the review.

Exit status: 0 when the work is done (a file that fails conversion is skipped, named with \
its reason in the last line, and needs no metadata-map entry); 1 when it failed (no file \
could be stored, a lint found problems, or any file failed under --strict); 2 for a usage \
error.
"""

app = typer.Typer(
    name="klea-stores-create",
    help=_HELP,
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


Source = Annotated[
    Path,
    typer.Argument(exists=True, file_okay=False, dir_okay=True, help="Folder of source documents."),
]
Debug = Annotated[bool, typer.Option("--debug", hidden=True, help="Same as -vv.")]
Verbose = Annotated[
    int, typer.Option("-v", "--verbose", count=True, help="More log output (-vv: debug).")
]
Quiet = Annotated[bool, typer.Option("-q", "--quiet", help="Only errors and the summary.")]
OldModel = Annotated[str | None, typer.Option("--model", hidden=True)]
Model = Annotated[
    str,
    typer.Option(
        "--embedding-model", help="Embedding model spec (default: the packaged MiniLM, offline)."
    ),
]
MaxTokens = Annotated[
    int | None,
    typer.Option(
        "--max-tokens",
        min=1,
        help="Maximum tokens per chunk (default: what the embedding model reads, at most 450).",
        show_default=False,
    ),
]
ForceMaxTokens = Annotated[
    bool,
    typer.Option(
        "--force-max-tokens",
        help="Accept a --max-tokens above what the embedding model reads (chunk ends are cut).",
    ),
]
Ocr = Annotated[bool, typer.Option("--ocr/--no-ocr", help="Run OCR on scanned PDFs.")]
Force = Annotated[bool, typer.Option("--force", help="Re-process everything.")]
MemLimit = Annotated[
    int,
    typer.Option(
        "--worker-mem-limit", min=0, help="Max RSS per conversion worker in bytes (0: no cap)."
    ),
]
WorkerBatch = Annotated[
    int, typer.Option("--worker-batch-size", min=1, help="Max files per conversion worker.")
]
MapPath = Annotated[
    Path | None,
    typer.Option("--metadata-map", help="Reviewed metadata map (default: the generated template)."),
]
StoreUri = Annotated[
    str, typer.Option("--store", help="Vector store URI: chroma:DIR, qdrant:DIR|URL, pgvector:URL.")
]
Collection = Annotated[str, typer.Option("--collection", help="Collection name.")]
Bm25 = Annotated[Path | None, typer.Option("--bm25-store", help="Write the BM25 corpus here.")]
Fts5 = Annotated[Path | None, typer.Option("--fts5-store", help="Also write an FTS5 index here.")]
Fts5Stemming = Annotated[
    bool | None,
    typer.Option(
        "--fts5-stemming/--no-fts5-stemming",
        help="Match words by their Porter stem (FTS5's porter tokenizer) so 'inhibits' finds "
        "'inhibition'. Default: as the index was built; a new index does not stem.",
        show_default=False,
    ),
]
Strict = Annotated[
    bool,
    typer.Option(
        "--strict",
        help="Exit 1 when any file failed (default: exit 0 when every other file was stored).",
    ),
]
WriteConfig = Annotated[
    Path | None,
    typer.Option(
        "--write-stores-config",
        help="Also write a stores configuration for klea-retrieve --stores-config here "
        "(store paths relative to it).",
    ),
]
EmbedBatch = Annotated[
    int, typer.Option("--embed-batch-size", min=1, help="Chunks embedded per add_documents call.")
]
RayAddress = Annotated[
    str | None,
    typer.Option(
        "--ray",
        metavar="ADDRESS",
        help="Convert on a Ray cluster (pip install 'klea-ingest[ray]'): 'auto' joins the "
        "cluster 'ray start' made, 'local' starts a private one, or HOST:PORT.",
        show_default=False,
    ),
]
RayEmbed = Annotated[
    bool, typer.Option("--ray-embed", help="Also embed on the Ray cluster (needs --ray).")
]
DeviceOpt = Annotated[
    str,
    typer.Option(
        "--device",
        help="auto, cpu, cuda (cuda:N) or mps for Docling's models and the embedder; with "
        "--ray, cuda asks Ray for one GPU per worker.",
    ),
]


THIRD_PARTY_LOGGERS = (
    "docling",
    "docling_core",
    "docling_parse",
    "transformers",
    "sentence_transformers",
    "huggingface_hub",
    "chromadb",
    "httpx",
    "urllib3",
    "PIL",
    "rapidocr",
)
"""Loggers kept at WARNING unless -vv: their INFO lines would run through the progress bar."""


def _logger(verbose: int = 0, quiet: bool = False, debug: bool = False) -> logging.Logger:
    """Configure logging for -v/-q: WARNING by default, INFO with -v, DEBUG with -vv."""
    verbose = 2 if debug else verbose
    level = (
        logging.ERROR
        if quiet
        else (logging.DEBUG if verbose > 1 else logging.INFO if verbose else logging.WARNING)
    )
    logging.basicConfig(
        level=level, format="%(levelname)s %(message)s", stream=sys.stderr, force=True
    )
    if verbose < 2:  # transformers' "Loading weights" bar, also in the workers
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    for name in THIRD_PARTY_LOGGERS:
        logging.getLogger(name).setLevel(
            logging.DEBUG if verbose > 1 else max(level, logging.WARNING)
        )
    return logging.getLogger("klea-stores-create")


def _fail(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(1)


def _builder(
    model: str,
    logger: logging.Logger,
    *,
    max_tokens: int | None = None,
    force_max_tokens: bool = False,
    do_ocr: bool = True,
    embed_batch_size: int = 256,
    store_uri: str | None = None,
    device: str = "auto",
    ray_address: str | None = None,
    ray_embed: bool = False,
) -> StoresBuilder:
    from klea_utils.stores.ingestion import StoresBuilder
    from klea_utils.stores.store_uri import StoreURI

    local = StoreURI.vector(store_uri).local_path if store_uri else None
    builder = StoresBuilder(
        model,
        logger,
        max_tokens=max_tokens,
        force_max_tokens=force_max_tokens,
        do_ocr=do_ocr,
        embed_batch_size=embed_batch_size,
        store_dir=local.resolve() if local is not None else None,
        device=device,
        ray_address=ray_address,
        ray_embed=ray_embed,
    )
    builder.writer.report_missing = False  # _report_store prints the one summary line
    return builder


def _check_fts5_options(fts5_store: Path | None, fts5_stemming: bool | None) -> None:
    """Refuse ``--(no-)fts5-stemming`` without ``--fts5-store`` (a usage error, exit 2)."""
    if fts5_stemming is not None and fts5_store is None:
        flag = "--fts5-stemming" if fts5_stemming else "--no-fts5-stemming"
        raise typer.BadParameter(
            "it sets how the FTS5 index is tokenized; give --fts5-store PATH too",
            param_hint=f"'{flag}'",
        )


def _run(step: Any) -> None:
    """Run ``step``; report library errors as one line and exit 1."""
    try:
        step()
    except typer.Exit:
        raise
    except (KleaStoresError, OSError) as exc:
        raise _fail(str(exc)) from exc


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

    _logger(verbose, quiet, debug)

    def step() -> None:
        classes = classify_directory(source)
        typer.echo(format_precheck_report(classes))
        if organise:
            ocr_dir, no_ocr_dir = organise_directory(source, classes)
            typer.echo(f"Copied scanned PDFs to {ocr_dir} and everything else to {no_ocr_dir}")

    _run(step)


def _chunk(builder: Any, source: Path, force: bool, mem: int, batch: int) -> dict[str, Any]:
    return dict(
        builder.chunk_all(
            source.resolve(), force=force, worker_mem_limit=mem or None, worker_batch_size=batch
        )
    )


@app.command()
def chunk(
    source: Source,
    max_tokens: MaxTokens = None,
    force_max_tokens: ForceMaxTokens = False,
    ocr: Ocr = True,
    force: Force = False,
    worker_mem_limit: MemLimit = 4 * 1024**3,
    worker_batch_size: WorkerBatch = 200,
    strict: Strict = False,
    model: Model = DEFAULT_MODEL,
    old_model: OldModel = None,
    verbose: Verbose = 0,
    quiet: Quiet = False,
    device: DeviceOpt = "auto",
    ray: RayAddress = None,
    debug: Debug = False,
) -> None:
    """Convert and chunk SOURCE into its cache and write the metadata-map template."""
    from klea_utils.stores._ingest.failures import format_not_chunked, read_conversion_failures
    from klea_utils.stores._ingest.progress import zero_chunk_reason
    from klea_utils.stores.map_lint import format_metadata_lint_report, lint_metadata_map
    from klea_utils.stores.metadata_map import write_heading_template
    from klea_utils.stores.source_files import find_source_files

    logger = _logger(verbose, quiet, debug)

    def step() -> None:
        builder = _builder(
            old_model or model,
            logger,
            max_tokens=max_tokens,
            force_max_tokens=force_max_tokens,
            do_ocr=ocr,
            device=device,
            ray_address=ray,
        )
        headings = _chunk(builder, source, force, worker_mem_limit, worker_batch_size)
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

    _run(step)


@app.command("map-lint")
def map_lint(
    source: Source,
    metadata_map: MapPath = None,
    verbose: Verbose = 0,
    quiet: Quiet = False,
    debug: Debug = False,
) -> None:
    """Check a metadata map against the files in SOURCE (failed files need no entry)."""
    from klea_utils.stores._ingest.failures import read_conversion_failures
    from klea_utils.stores.map_lint import format_metadata_lint_report, lint_metadata_map
    from klea_utils.stores.metadata_map import load_metadata_map, template_path
    from klea_utils.stores.source_files import find_source_files

    _logger(verbose, quiet, debug)

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
            typer.echo(f"Not required (conversion failed): {', '.join(skipped)}")
        if report["missing_keys"] or report["issues"]:
            raise typer.Exit(1)

    _run(step)


def _query_hint(
    store_uri: str,
    collection: str,
    bm25_store: Path | None,
    fts5_store: Path | None,
    write_stores_config: Path | None,
) -> str:
    """The ``klea-retrieve`` command that queries what was stored (and the config file)."""
    from klea_utils.stores._retrieval.store_args import (
        direct_stores_config,
        retrieve_command_for,
    )
    from klea_utils.stores._retrieval.store_args import (
        write_stores_config as write_config,
    )

    bm25 = [str(bm25_store)] if bm25_store else []
    bm25 += [f"fts5:{fts5_store}"] if fts5_store else []
    config = direct_stores_config(
        [f"{collection}={store_uri}"],
        bm25,
        description=f"collection {collection!r} built by klea-stores-create",
        domain_name=collection,
    )
    lines = ["Query what you built:", f"  {retrieve_command_for(config)}"]
    if write_stores_config is not None:
        path = write_config(write_stores_config, config)
        lines += [
            f"Stores configuration: {path}",
            f"  klea-retrieve --stores-config {shlex.quote(str(path))} 'your question'",
        ]
    return "\n".join(lines)


def _export_query_model(model: str, logger: logging.Logger) -> None:
    """Export the packaged MiniLM to ONNX once, so klea-retrieve embeds queries without torch."""
    from klea_utils.stores.embedding_models import parse_embedding_model

    parsed = parse_embedding_model(model)
    if parsed.provider != "huggingface" or parsed.model not in {
        "all-MiniLM-L6-v2",
        "sentence-transformers/all-MiniLM-L6-v2",
    }:
        return
    from klea_utils.stores._retrieval.onnx_minilm import export_minilm_onnx, minilm_onnx_path

    if minilm_onnx_path().is_file():
        return
    try:
        path = export_minilm_onnx()
    except Exception as exc:  # an optional speed-up: never fail the store for it
        logger.warning("could not export the query model to ONNX (%s); queries use torch", exc)
    else:
        logger.info("exported the query embedding model to %s", path)


def _report_store(summary: StoreSummary, source: Path, strict: bool, hint: str = "") -> None:
    """Print the one summary; exit 1 when every file failed, or any did under ``--strict``."""
    from klea_utils.stores._ingest.failures import format_not_stored, read_conversion_failures

    typer.echo(f"Summary: {summary.describe()}")
    missing = summary.missing_files
    stored = summary.files_added + summary.files_replaced + summary.files_skipped
    if hint and stored:
        typer.echo(hint)
    if not missing:
        return
    typer.echo(format_not_stored(missing, read_conversion_failures(source.resolve())), err=True)
    if strict or not stored:
        raise typer.Exit(1)


@app.command()
def store(
    source: Source,
    store_uri: StoreUri,
    collection: Collection,
    metadata_map: MapPath = None,
    bm25_store: Bm25 = None,
    fts5_store: Fts5 = None,
    fts5_stemming: Fts5Stemming = None,
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
    _check_fts5_options(fts5_store, fts5_stemming)
    logger = _logger(verbose, quiet, debug)

    def step() -> None:
        builder = _builder(
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
        )
        _export_query_model(old_model or model, logger)
        hint = _query_hint(store_uri, collection, bm25_store, fts5_store, write_stores_config)
        _report_store(summary, source, strict, hint)

    _run(step)


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

    _logger(verbose, quiet, debug)

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

    _run(step)


@app.command()
def build(
    source: Source,
    store_uri: StoreUri,
    collection: Collection,
    metadata_map: MapPath = None,
    bm25_store: Bm25 = None,
    fts5_store: Fts5 = None,
    fts5_stemming: Fts5Stemming = None,
    max_tokens: MaxTokens = None,
    force_max_tokens: ForceMaxTokens = False,
    ocr: Ocr = True,
    force: Force = False,
    worker_mem_limit: MemLimit = 4 * 1024**3,
    worker_batch_size: WorkerBatch = 200,
    embed_batch_size: EmbedBatch = 256,
    strict: Strict = False,
    write_stores_config: WriteConfig = None,
    model: Model = DEFAULT_MODEL,
    old_model: OldModel = None,
    verbose: Verbose = 0,
    quiet: Quiet = False,
    device: DeviceOpt = "auto",
    ray: RayAddress = None,
    ray_embed: RayEmbed = False,
    debug: Debug = False,
) -> None:
    """Chunk and store SOURCE in one go (no review step unless --metadata-map is given)."""
    _check_fts5_options(fts5_store, fts5_stemming)
    if ray_embed and ray is None:
        raise typer.BadParameter(
            "it embeds on a Ray cluster; give --ray ADDRESS too", param_hint="'--ray-embed'"
        )
    logger = _logger(verbose, quiet, debug)

    def step() -> None:
        builder = _builder(
            old_model or model,
            logger,
            max_tokens=max_tokens,
            force_max_tokens=force_max_tokens,
            do_ocr=ocr,
            embed_batch_size=embed_batch_size,
            store_uri=store_uri,
            device=device,
            ray_address=ray,
            ray_embed=ray_embed,
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
            fts5_path=str(fts5_store) if fts5_store else None,
            fts5_stemming=fts5_stemming,
        )
        _export_query_model(old_model or model, logger)
        hint = _query_hint(store_uri, collection, bm25_store, fts5_store, write_stores_config)
        _report_store(summary, source, strict, hint)

    _run(step)


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":
    main()
