"""What ``klea-stores-create`` prints after its work: the store summary and what to run next.

:func:`finish_store` ends ``store`` and ``build``: it exports the query model
(:mod:`~klea_utils.stores._ingest.query_model`), prints the summary and the
``klea-retrieve`` command that queries the result, and exits 1 when files were not stored;
:func:`run_step` turns a library error into one ``error:`` line and exit status 1. Log
levels are :mod:`~klea_utils.stores._ingest.cli_logging`'s.
"""

from __future__ import annotations

import logging
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from klea_utils.stores.exceptions import KleaStoresError

if TYPE_CHECKING:
    from klea_utils.stores._ingest.store.summary import StoreSummary

__all__ = [
    "fail",
    "finish_store",
    "query_hint",
    "report_store",
    "run_step",
]


def query_hint(
    store_uri: str,
    collection: str,
    bm25_store: Path | None,
    fts5_store: Path | None,
    write_stores_config: Path | None,
    citations: Path | None = None,
    embedding_model: str | None = None,
) -> str:
    """The ``klea-retrieve`` command that queries what was stored (and the config file).

    ``citations``, the collection's citation-links file, is named in the configuration
    when the build wrote one (``klea-serve`` answers a paper's citations from it).
    ``embedding_model``, the spec that embedded the vectors, is named in both when it is
    not the packaged MiniLM, so the queries are embedded by the same model.
    """
    from klea_utils.stores._ingest.store.document_embedder import vectors_key
    from klea_utils.stores.embedding_models import DEFAULT_EMBEDDING_MODEL
    from klea_utils.stores.store_args import (
        direct_stores_config,
        retrieve_command_for,
    )
    from klea_utils.stores.store_args import (
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
    if embedding_model and vectors_key(embedding_model) != vectors_key(DEFAULT_EMBEDDING_MODEL):
        config.domains[collection].embedding_model = embedding_model
    if citations is not None and citations.is_file():
        config.domains[collection].citations = str(citations.absolute())
    lines = ["Query what you built:", f"  {retrieve_command_for(config)}"]
    if write_stores_config is not None:
        path = write_config(write_stores_config, config)
        lines += [
            f"Stores configuration: {path}",
            f"  klea-retrieve --stores-config {shlex.quote(str(path))} 'your question'",
        ]
    return "\n".join(lines)


def report_store(summary: StoreSummary, source: Path, strict: bool, hint: str = "") -> None:
    """Print the one summary; exit 1 when every file failed, or any did under ``--strict``."""
    from klea_utils.stores._ingest.convert.failures import (
        format_not_stored,
        read_conversion_failures,
    )

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


def finish_store(
    summary: StoreSummary,
    source: Path,
    model: str,
    logger: logging.Logger,
    strict: bool,
    hint: str,
) -> None:
    """End ``store`` or ``build``: export the query model, then :func:`report_store`."""
    from klea_utils.stores._ingest.query_model import export_query_model

    export_query_model(model, logger)
    report_store(summary, source, strict, hint)


def fail(message: str) -> typer.Exit:
    """Print ``error: message`` to stderr; return the exit-1 to raise."""
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(1)


def run_step(step: Any) -> None:
    """Run ``step``; report library errors as one line and exit 1."""
    try:
        step()
    except typer.Exit:
        raise
    except (KleaStoresError, OSError) as exc:
        raise fail(str(exc)) from exc
