"""What ``klea-stores-create`` prints around its work: logging set-up and the store summary.

:func:`configure_logging` sets the log levels for ``-v``/``-q``; :func:`finish_store` ends
``store`` and ``build``: it exports the query model, prints the summary and the
``klea-retrieve`` command that queries the result, and exits 1 when files were not stored;
:func:`run_step` turns a library error into one ``error:`` line and exit status 1.
"""

from __future__ import annotations

import logging
import os
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from klea_utils.stores.exceptions import KleaStoresError

if TYPE_CHECKING:
    from klea_utils.stores.store_writer import StoreSummary

__all__ = [
    "THIRD_PARTY_LOGGERS",
    "configure_logging",
    "export_query_model",
    "fail",
    "finish_store",
    "query_hint",
    "report_store",
    "run_step",
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


class _CurrentStderr(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes each record to ``sys.stderr`` as it is when the record is emitted.

    A handler that kept the stream it was configured with would write to a closed one
    after a caller (a test runner, an embedding application) swapped ``sys.stderr`` back.
    """

    @property
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, value: Any) -> None:
        """Ignored: the stream is always the current ``sys.stderr``."""


def configure_logging(verbose: int = 0, quiet: bool = False, debug: bool = False) -> logging.Logger:
    """Configure logging for -v/-q: WARNING by default, INFO with -v, DEBUG with -vv."""
    verbose = 2 if debug else verbose
    level = (
        logging.ERROR
        if quiet
        else (logging.DEBUG if verbose > 1 else logging.INFO if verbose else logging.WARNING)
    )
    logging.basicConfig(
        level=level, format="%(levelname)s %(message)s", handlers=[_CurrentStderr()], force=True
    )
    from klea_utils.stores._ingest.library_noise import route_library_noise

    route_library_noise()  # libraries' warnings: to the log at INFO (-v), not raw to stderr
    if verbose < 2:  # transformers' "Loading weights" bar, also in the workers
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    for name in THIRD_PARTY_LOGGERS:
        logging.getLogger(name).setLevel(
            logging.DEBUG if verbose > 1 else max(level, logging.WARNING)
        )
    return logging.getLogger("klea-stores-create")


def query_hint(
    store_uri: str,
    collection: str,
    bm25_store: Path | None,
    fts5_store: Path | None,
    write_stores_config: Path | None,
) -> str:
    """The ``klea-retrieve`` command that queries what was stored (and the config file)."""
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
    lines = ["Query what you built:", f"  {retrieve_command_for(config)}"]
    if write_stores_config is not None:
        path = write_config(write_stores_config, config)
        lines += [
            f"Stores configuration: {path}",
            f"  klea-retrieve --stores-config {shlex.quote(str(path))} 'your question'",
        ]
    return "\n".join(lines)


def export_query_model(model: str, logger: logging.Logger) -> None:
    """Export the packaged MiniLM to ONNX once, so klea-retrieve embeds queries without torch."""
    from klea_utils.stores.embedding_models import parse_embedding_model

    parsed = parse_embedding_model(model)
    if parsed.provider != "huggingface" or parsed.model not in {
        "all-MiniLM-L6-v2",
        "sentence-transformers/all-MiniLM-L6-v2",
    }:
        return
    from klea_utils.stores.onnx_minilm import export_minilm_onnx, minilm_onnx_path

    if minilm_onnx_path().is_file():
        return
    try:
        path = export_minilm_onnx()
    except Exception as exc:  # an optional speed-up: never fail the store for it
        logger.warning("could not export the query model to ONNX (%s); queries use torch", exc)
    else:
        logger.info("exported the query embedding model to %s", path)


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
