"""The options ``klea-stores-create`` shares across its commands, declared once.

Each is an ``Annotated`` type alias that a command's signature names; the flag, help text
and checks live here, the default stays with the command. Also the app's help text, the
default embedding model, and the option checks and builder set-up the commands share.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    import logging

    from klea_utils.stores.ingestion import StoresBuilder
    from klea_utils.stores.references import ReferenceLibrary

__all__ = [
    "APP_HELP",
    "DEFAULT_MODEL",
    "BibFiles",
    "Bm25",
    "Collection",
    "Debug",
    "DeviceOpt",
    "EmbedBatch",
    "FileTimeout",
    "Force",
    "ForceMaxTokens",
    "Fts5",
    "Fts5Multiscript",
    "Fts5Stemming",
    "MapPath",
    "MaxTokens",
    "MemLimit",
    "Model",
    "Ocr",
    "OldModel",
    "OverlapSentences",
    "Quiet",
    "RayAddress",
    "RayEmbed",
    "Source",
    "StoreUri",
    "Strict",
    "Verbose",
    "WorkerBatch",
    "WriteConfig",
    "ZoteroDir",
    "check_fts5_options",
    "load_references",
    "make_builder",
]

DEFAULT_MODEL = "huggingface:all-MiniLM-L6-v2"
"""Default embedding model: the packaged all-MiniLM-L6-v2, which works offline."""

APP_HELP = """Build vector, BM25 and FTS5 stores from a folder of documents.

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
OverlapSentences = Annotated[
    int | None,
    typer.Option(
        "--overlap-sentences",
        min=0,
        metavar="N",
        help="Repeat the last N sentences of a text cut to the budget at the start of its "
        "next chunk (default: 0). A changed value re-chunks cached files.",
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


def parse_workers(value: str) -> int | None:
    """``--workers``: ``auto`` (``None``) or a count of at least 1."""
    if value.strip().lower() == "auto":
        return None
    try:
        count = int(value)
    except ValueError:
        count = 0
    if count < 1:
        raise typer.BadParameter(
            f"{value!r} is neither 'auto' nor a whole number >= 1", param_hint="'--workers'"
        )
    return count


Workers = Annotated[
    str,
    typer.Option(
        "--workers",
        metavar="N|auto",
        help="Conversion workers running at once (auto: the usable cores, as many as "
        "available memory holds at --worker-mem-limit each).",
    ),
]
EmbedDuringConversion = Annotated[
    bool,
    typer.Option(
        "--embed-during-conversion/--no-embed-during-conversion",
        help="Embed each converted file's chunks in one thread of this process while the "
        "workers convert the others (the packaged MiniLM on onnxruntime; the same vectors).",
    ),
]
FileTimeout = Annotated[
    float,
    typer.Option(
        "--file-timeout",
        min=1,
        help="Seconds a conversion worker may spend on one file without progress before "
        "it is killed; a file that times out twice is not stored (reason: time-out).",
    ),
]
MapPath = Annotated[
    Path | None,
    typer.Option("--metadata-map", help="Reviewed metadata map (default: the generated template)."),
]
BibFiles = Annotated[
    list[Path] | None,
    typer.Option(
        "--bib",
        exists=True,
        dir_okay=False,
        help="Reference library: BibTeX/BibLaTeX or CSL-JSON export (repeatable); each file's "
        "metadata comes from its matched entry.",
    ),
]
ZoteroDir = Annotated[
    Path | None,
    typer.Option(
        "--zotero",
        exists=True,
        file_okay=False,
        help="Zotero data folder (zotero.sqlite + storage/), read from a copy.",
    ),
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
        "'inhibition'. Default: as the index was built; a new index stems.",
        show_default=False,
    ),
]
Fts5Multiscript = Annotated[
    bool | None,
    typer.Option(
        "--fts5-multiscript/--no-fts5-multiscript",
        help="Find words in Chinese, Japanese, Korean, Thai and Arabic-script chunks "
        "(Han/Kana bigrams, Korean particles cut, Arabic letters normalised); English "
        "words index as before. Default: as the index was built; a new index is multiscript.",
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


def make_builder(
    model: str,
    logger: logging.Logger,
    *,
    max_tokens: int | None = None,
    force_max_tokens: bool = False,
    overlap_sentences: int | None = None,
    do_ocr: bool = True,
    embed_batch_size: int = 256,
    store_uri: str | None = None,
    device: str = "auto",
    ray_address: str | None = None,
    ray_embed: bool = False,
    file_timeout_s: float = 900.0,
    embed_during_conversion: bool = True,
) -> StoresBuilder:
    from klea_utils.stores._ingest.chunking.chunking import DEFAULT_OVERLAP_SENTENCES
    from klea_utils.stores.ingestion import StoresBuilder
    from klea_utils.stores.store_uri import StoreURI

    local = StoreURI.vector(store_uri).local_path if store_uri else None
    overlap = DEFAULT_OVERLAP_SENTENCES if overlap_sentences is None else overlap_sentences
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
        overlap_sentences=overlap,
        file_timeout_s=file_timeout_s,
        embed_during_conversion=embed_during_conversion,
    )
    builder.writer.report_missing = False  # report_store prints the one summary line
    return builder


def check_fts5_options(
    fts5_store: Path | None, fts5_stemming: bool | None, fts5_multiscript: bool | None = None
) -> None:
    """Refuse ``--(no-)fts5-stemming`` or ``--(no-)fts5-multiscript`` without ``--fts5-store``.

    Either is a usage error (exit 2): it sets how an index that is not written is tokenized.
    """
    if fts5_store is not None:
        return
    for name, value in (("stemming", fts5_stemming), ("multiscript", fts5_multiscript)):
        if value is not None:
            flag = f"--fts5-{name}" if value else f"--no-fts5-{name}"
            raise typer.BadParameter(
                "it sets how the FTS5 index is tokenized; give --fts5-store PATH too",
                param_hint=f"'{flag}'",
            )


def load_references(
    bib: list[Path] | None, zotero: Path | None, logger: logging.Logger
) -> ReferenceLibrary | None:
    """The library ``--bib`` and ``--zotero`` name, or ``None`` when neither is given."""
    if not bib and zotero is None:
        return None
    from klea_utils.stores.references import load_reference_library

    library = load_reference_library(bib or (), zotero)
    named = [str(p) for p in bib or ()] + ([str(zotero)] if zotero is not None else [])
    logger.info("Reference library: %d entries from %s", len(library), ", ".join(named))
    return library
