"""Options and checks that several commands share."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Annotated

import typer

from sci_etl_core.cli._index_file import index_file_problem
from sci_etl_core.cli._options import parse_search_filters
from sci_etl_core.cli._runtime import EXIT_FAILURE, EXIT_USAGE, fail
from sci_etl_core.cli._stores import recorded_facet_keys
from sci_etl_core.search.filters import SearchFilter

__all__ = [
    "DbOption",
    "FilterOption",
    "ModelOption",
    "RangeOption",
    "StoreOption",
    "VectorsOption",
    "existing_index",
    "facet_keys_of",
    "search_filters",
]

DbOption = Annotated[
    Path,
    typer.Option(
        "--db",
        help="The SQLite FTS5 text index file, as written by the index command.",
        envvar="SCI_ETL_SEARCH_DB",
        dir_okay=False,
    ),
]

VectorsOption = Annotated[
    Path | None,
    typer.Option(
        "--vectors",
        help="The SQLite vector memory file, as written by index --vectors.",
        envvar="SCI_ETL_SEARCH_VECTORS",
        dir_okay=False,
    ),
]

StoreOption = Annotated[
    str | None,
    typer.Option(
        "--store",
        help=(
            "Another system's vector store as the vector memory, COLLECTION=URI (such as "
            "papers=chroma:stores/chroma, written by klea-stores-create build), opened by "
            "the package registered for the URI's scheme; its record ids must be the "
            "index's. Instead of --vectors."
        ),
        metavar="COLLECTION=URI",
    ),
]

ModelOption = Annotated[
    str | None,
    typer.Option(
        "--embedding-model",
        "--model",
        help=(
            "The sentence-transformers model name or folder; use the model the vector "
            "memory was written with. Default: the packaged all-MiniLM-L6-v2."
        ),
        envvar="SCI_ETL_SEARCH_MODEL",
    ),
]

FilterOption = Annotated[
    list[str] | None,
    typer.Option(
        "--filter",
        help=(
            "Keep records tagged KEY=VALUE, or drop them with KEY!=VALUE. Repeat for "
            "several; values of one key are alternatives."
        ),
        metavar="KEY=VALUE",
    ),
]

RangeOption = Annotated[
    list[str] | None,
    typer.Option(
        "--range",
        help=(
            "Keep records with a KEY tag from LOW to HIGH, inclusive, or drop them with "
            "KEY!=LOW..HIGH. Either end may be empty (year=2020..). Integer bounds "
            "compare as numbers, any other bounds as text (ISO dates sort correctly)."
        ),
        metavar="KEY=LOW..HIGH",
    ),
]


def existing_index(db: Path, *, full_check: bool = False) -> tuple[str, ...]:
    """Exit with status 2 unless ``db`` exists; return the facet keys it is tagged by.

    A file that is damaged, not a text index, or cannot be opened exits with status 1
    and says so (``full_check`` checks every page, as ``maintain check`` does).
    """
    if not db.is_file():
        fail(f"--db {db}: no such text index; create it with the index command", EXIT_USAGE)
    problem = index_file_problem(db, full_check=full_check)
    if problem is not None:
        fail(f"--db {db}: {problem}", EXIT_FAILURE)
    return recorded_facet_keys(db) or ()


def existing_vectors(vectors: Path) -> None:
    """Exit with status 2 unless the vector memory ``vectors`` exists."""
    if not vectors.is_file():
        fail(
            f"--vectors {vectors}: no such vector memory; create it with index --vectors",
            EXIT_USAGE,
        )


def search_filters(
    filters: Sequence[str] | None, ranges: Sequence[str] | None
) -> list[SearchFilter]:
    """Parse ``--filter`` and ``--range`` values, exiting with status 2 on a bad one."""
    try:
        return parse_search_filters(filters or (), ranges or ())
    except ValueError as error:
        fail(str(error), EXIT_USAGE)


def facet_keys_of(db: Path, tagged: Sequence[str], wanted: Iterable[tuple[str, str]]) -> None:
    """Exit with status 2 unless every ``(option, key)`` of ``wanted`` is tagged in ``db``."""
    for option, key in wanted:
        if key not in tagged:
            listed = ", ".join(tagged) if tagged else "none"
            fail(
                f"{option}: key {key!r} is not tagged in {db} (tagged keys: {listed}); "
                f"add it with: sci-etl-search maintain rebuild-tags --db {db} "
                + " ".join(f"--facet-key {k}" for k in [*tagged, key]),
                EXIT_USAGE,
            )
