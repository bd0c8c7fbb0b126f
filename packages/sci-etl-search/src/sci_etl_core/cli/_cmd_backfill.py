"""The ``backfill`` command: the text index from the text already in the vector memory."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from sci_etl_core.cli._common import existing_vectors
from sci_etl_core.cli._runtime import out, print_json, run_async
from sci_etl_core.cli._stores import open_text_store, open_vector_store, recorded_facet_keys
from sci_etl_core.embeddings.chunking import DEFAULT_OVERLAP_WORDS

if TYPE_CHECKING:
    from sci_etl_core.search.backfill_async import BackfillReport

__all__ = ["backfill_command"]


async def _backfill(
    db: Path,
    vectors: Path,
    facet_keys: tuple[str, ...],
    overlap_words: int,
    replace_existing: bool,
    batch_size: int,
) -> BackfillReport:
    from sci_etl_core.search.backfill_async import backfill_text_index

    async with (
        open_vector_store(vectors) as vector_store,
        open_text_store(db, facet_keys) as text_store,
    ):
        return await backfill_text_index(
            vector_store,
            text_store,
            overlap_words=overlap_words,
            replace_existing=replace_existing,
            batch_size=batch_size,
        )


def backfill_command(
    db: Annotated[
        Path,
        typer.Option(
            "--db",
            help="The SQLite FTS5 text index file to fill; created when missing.",
            envvar="SCI_ETL_SEARCH_DB",
            dir_okay=False,
        ),
    ],
    vectors: Annotated[
        Path,
        typer.Option(
            "--vectors",
            help="The SQLite vector memory file to read the passages from.",
            envvar="SCI_ETL_SEARCH_VECTORS",
            dir_okay=False,
        ),
    ],
    overlap_words: Annotated[
        int,
        typer.Option(
            "--overlap-words",
            help=(
                "The overlap of the chunker that wrote the passages, so words at window "
                "boundaries are counted once. Default: that of index --vectors (50)."
            ),
            min=0,
        ),
    ] = DEFAULT_OVERLAP_WORDS,
    replace_existing: Annotated[
        bool,
        typer.Option(
            "--replace-existing",
            help=(
                "Overwrite records already in the text index. By default they are left "
                "alone, since they hold an abstract and metadata a backfill lacks."
            ),
        ),
    ] = False,
    batch_size: Annotated[
        int,
        typer.Option("--batch-size", help="Documents written per transaction.", min=1),
    ] = 100,
    json_output: Annotated[
        bool,
        typer.Option(
            "--json", help="Print the counts indexed, skipped_existing and skipped_empty as JSON."
        ),
    ] = False,
) -> None:
    """Fill the text index from the passages already stored in the vector memory.

    Each record's passages are joined back into one text, without the words the
    sliding windows repeat, and indexed with the title from the chunk metadata. No
    abstract is available, and only the metadata the chunks carry is kept.
    """
    existing_vectors(vectors)
    facet_keys = recorded_facet_keys(db) or ()
    report = run_async(
        lambda: _backfill(db, vectors, facet_keys, overlap_words, replace_existing, batch_size)
    )
    counts = {
        "indexed": report.indexed,
        "skipped_existing": report.skipped_existing,
        "skipped_empty": report.skipped_empty,
    }
    if json_output:
        print_json(counts)
        return
    out.print(
        f"indexed {report.indexed} records into {db}; left {report.skipped_existing} "
        f"already indexed and {report.skipped_empty} without text",
        markup=False,
        highlight=False,
    )
