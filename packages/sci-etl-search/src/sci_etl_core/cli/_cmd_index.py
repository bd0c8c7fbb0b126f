"""The ``index`` command: records into the text index and, optionally, the vector memory."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AsyncExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from sci_etl_core.cli._records import InputRecord, read_records, skipped_files
from sci_etl_core.cli._runtime import EXIT_USAGE, err, fail, out, print_json, run_async
from sci_etl_core.cli._stores import (
    load_embedder,
    open_text_store,
    open_vector_store,
    recorded_facet_keys,
)

if TYPE_CHECKING:
    from sci_etl_core.embeddings.ingest_async import AsyncChunkIngestor
    from sci_etl_core.search.store_base import SearchDocument
    from sci_etl_core.search.store_sqlite_fts5 import AsyncSqliteFts5Store

__all__ = ["BATCH_SIZE", "index_command", "vector_text"]

BATCH_SIZE = 64
"""How many records are written to the text index per transaction."""


def vector_text(record: InputRecord) -> str:
    """Return the text the vector memory chunks for ``record``: its abstract and full text.

    The non-blank parts are joined by a blank line, so a record with only an abstract
    is still found by meaning. The title is not repeated; it goes into each chunk's
    metadata.
    """
    return "\n\n".join(part for part in (record.abstract, record.text) if part.strip())


def _document(record: InputRecord) -> SearchDocument:
    from sci_etl_core.search.store_base import SearchDocument

    return SearchDocument(
        record_id=record.record_id,
        title=record.title,
        abstract=record.abstract,
        body=record.text,
        metadata=dict(record.metadata),
    )


def _progress(disable: bool) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        disable=disable,
    )


async def _ingestor(
    stack: AsyncExitStack,
    records: Sequence[InputRecord],
    vectors: Path,
    model: str | None,
    chunk_words: int,
    overlap_words: int | None,
) -> AsyncChunkIngestor:
    from sci_etl_core.embeddings.chunking import SlidingWindowChunker
    from sci_etl_core.embeddings.ingest_async import AsyncChunkIngestor

    chunker = SlidingWindowChunker(chunk_words, overlap_words)
    store = await stack.enter_async_context(open_vector_store(vectors))
    keys = sorted({key for record in records for key in record.metadata})
    return AsyncChunkIngestor(load_embedder(model), store, chunker, metadata_keys=keys)


async def _index(
    records: Sequence[InputRecord],
    db: Path,
    facet_keys: tuple[str, ...],
    retag: bool,
    vectors: Path | None,
    model: str | None,
    chunk_words: int,
    overlap_words: int | None,
    no_progress: bool,
    stemming: bool | None,
    multiscript: bool | None = None,
) -> dict[str, int]:
    counts = {"records": len(records), "indexed": 0, "cleared": 0, "chunks": 0}
    async with AsyncExitStack() as stack:
        text_store = await stack.enter_async_context(
            open_text_store(db, facet_keys, stemming, multiscript)
        )
        ingestor = None
        if vectors is not None:
            ingestor = await _ingestor(stack, records, vectors, model, chunk_words, overlap_words)
        with _progress(no_progress) as progress:
            task = progress.add_task("indexing", total=len(records))
            for start in range(0, len(records), BATCH_SIZE):
                batch = records[start : start + BATCH_SIZE]
                documents = [_document(record) for record in batch if not record.is_blank]
                await text_store.index(documents)
                for record in batch:
                    if record.is_blank:
                        await text_store.delete_record(record.record_id)
                counts["indexed"] += len(documents)
                counts["cleared"] += len(batch) - len(documents)
                if ingestor is not None:
                    for record in batch:
                        counts["chunks"] += await ingestor.ingest(record, vector_text(record))
                progress.advance(task, len(batch))
        if retag:
            err.print(f"re-tagging every document for: {', '.join(facet_keys) or '(no keys)'}")
            await text_store.rebuild_tags()
        changes = _tokenizer_changes(text_store, stemming, multiscript)
        if changes:
            err.print(f"re-tokenizing every document {changes}")
            await text_store.rebuild_index()
    return counts


def _tokenizer_changes(
    store: AsyncSqliteFts5Store, stemming: bool | None, multiscript: bool | None
) -> str:
    """Say which explicit choices the open index was not built with ('' when none)."""
    wanted = (
        ("stemming", stemming, store.stemming),
        ("multiscript", multiscript, store.multiscript),
    )
    return " and ".join(
        f"{'with' if want else 'without'} {name}"
        for name, want, built in wanted
        if want is not None and want != built
    )


def _note_skipped(folder: Path) -> None:
    """Say which files a folder index leaves out, and where PDFs and the like can go."""
    skipped = skipped_files(folder)
    if not skipped:
        return
    shown = ", ".join(skipped[:5]) + (f" and {len(skipped) - 5} more" if len(skipped) > 5 else "")
    err.print(
        f"note: skipped {len(skipped)} file(s) that are not .txt or .md: {shown}. To search "
        "PDF, DOCX, HTML and the rest, index the folder with klea-stores-create build "
        f"{folder} --fts5-store INDEX.sqlite ... and search that index with --db INDEX.sqlite",
        markup=False,
        highlight=False,
    )


def index_command(
    source: Annotated[
        Path,
        typer.Argument(
            help="A JSONL file of records, or a folder of .txt/.md files read recursively.",
            exists=True,
            readable=True,
        ),
    ],
    db: Annotated[
        Path,
        typer.Option(
            "--db",
            help="The SQLite FTS5 text index file to write; created when missing.",
            envvar="SCI_ETL_SEARCH_DB",
            dir_okay=False,
        ),
    ],
    facet_key: Annotated[
        list[str] | None,
        typer.Option(
            "--facet-key",
            help=(
                "A metadata key to tag for filters and facets; repeat for several. "
                "Default: the keys the index is already tagged by. Giving a different "
                "set re-tags every stored document."
            ),
        ),
    ] = None,
    vectors: Annotated[
        Path | None,
        typer.Option(
            "--vectors",
            help=(
                "Also chunk, embed and store each record's abstract and text in this "
                "SQLite vector memory file (created when missing)."
            ),
            envvar="SCI_ETL_SEARCH_VECTORS",
            dir_okay=False,
        ),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            help=(
                "The sentence-transformers model name or folder for --vectors. "
                "Default: the packaged all-MiniLM-L6-v2, which loads offline."
            ),
            envvar="SCI_ETL_SEARCH_MODEL",
        ),
    ] = None,
    chunk_words: Annotated[
        int,
        typer.Option("--chunk-words", help="Words per passage in the vector memory.", min=1),
    ] = 350,
    overlap_words: Annotated[
        int | None,
        typer.Option(
            "--overlap-words",
            help="Words shared by neighbouring passages. Default: 50, or half of --chunk-words.",
            min=0,
        ),
    ] = None,
    stemming: Annotated[
        bool | None,
        typer.Option(
            "--stemming/--no-stemming",
            help=(
                "Match words by their Porter stem (FTS5's porter tokenizer), so 'inhibits' "
                "finds 'inhibition'. Default: as the index was built; a new index does not "
                "stem. Changing it re-tokenizes every stored document."
            ),
        ),
    ] = None,
    multiscript: Annotated[
        bool | None,
        typer.Option(
            "--multiscript/--no-multiscript",
            help=(
                "Find words in Chinese, Japanese, Korean, Thai, Lao and Arabic-script text "
                "(Han/Kana bigrams, Korean particles cut, Arabic letters normalised); English "
                "words index as with unicode61. Default: as the index was built; a new index "
                "is not multiscript. Changing it re-tokenizes every stored document."
            ),
        ),
    ] = None,
    no_progress: Annotated[
        bool, typer.Option("--no-progress", help="Do not draw the progress bar.")
    ] = False,
    json_output: Annotated[
        bool, typer.Option("--json", help="Print the counts as a JSON object.")
    ] = False,
) -> None:
    """Index records into the text index, and optionally into the vector memory.

    Every record is read and checked first, so a malformed line stops the command
    before anything is written. A record whose title, abstract and text are all blank
    is removed from the index. Re-indexing a record replaces it.
    """
    if overlap_words is not None and overlap_words >= chunk_words:
        fail(
            f"--overlap-words ({overlap_words}) must be below --chunk-words ({chunk_words})",
            EXIT_USAGE,
        )
    try:
        records = read_records(source)
    except (ValueError, OSError) as error:
        fail(str(error))
    if source.is_dir():
        _note_skipped(source)
    recorded = recorded_facet_keys(db)
    keys = tuple(sorted(set(facet_key))) if facet_key else (recorded or ())
    retag = recorded is not None and keys != recorded
    counts = run_async(
        lambda: _index(
            records,
            db,
            keys,
            retag,
            vectors,
            model,
            chunk_words,
            overlap_words,
            no_progress,
            stemming,
            multiscript,
        )
    )
    if json_output:
        print_json(counts)
        return
    summary: dict[str, Any] = counts
    line = f"indexed {summary['indexed']} of {summary['records']} records into {db}"
    if summary["cleared"]:
        line += f" ({summary['cleared']} blank records removed)"
    if vectors is not None:
        line += f"; {summary['chunks']} passages into {vectors}"
    out.print(line, markup=False, highlight=False)
