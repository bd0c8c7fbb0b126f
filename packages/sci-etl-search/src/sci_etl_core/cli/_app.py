"""The Typer application: every command of ``sci-etl-search`` registered in one place."""

from __future__ import annotations

from typing import Annotated

import typer

from sci_etl_core.cli._cmd_backfill import backfill_command
from sci_etl_core.cli._cmd_graph import graph_command
from sci_etl_core.cli._cmd_index import index_command
from sci_etl_core.cli._cmd_maintain import maintain_app
from sci_etl_core.cli._cmd_search import facets_command, search_command

__all__ = ["build_app"]

HELP = """Index scholarly records and search them by Boolean query, by meaning, or both.

Results go to standard output and everything else (progress, warnings, errors) to
standard error. Exit status: 0 on success, 1 when the work failed (unreadable input,
a broken store, a model that cannot load), 2 when the command line is wrong (a bad
option value or a malformed query).

Store paths can also come from the environment: SCI_ETL_SEARCH_DB for --db,
SCI_ETL_SEARCH_VECTORS for --vectors, SCI_ETL_SEARCH_MODEL for --embedding-model.
"""


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"sci-etl-search {version('sci-etl-search')}")
        raise typer.Exit()


def _main(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
    verbose: Annotated[
        int,
        typer.Option("-v", "--verbose", count=True, help="More log output (-vv: debug)."),
    ] = 0,
    quiet: Annotated[bool, typer.Option("-q", "--quiet", help="Log errors only.")] = False,
) -> None:
    """Index scholarly records and search them by Boolean query, by meaning, or both."""
    import logging
    import os

    if quiet:
        level = logging.ERROR
    else:
        level = logging.DEBUG if verbose > 1 else logging.INFO if verbose else logging.WARNING
    logging.basicConfig(level=level, format="%(levelname)s %(message)s", force=True)
    for name in ("sentence_transformers", "transformers", "huggingface_hub", "httpx"):
        logging.getLogger(name).setLevel(logging.DEBUG if verbose > 1 else max(level, 30))
    if verbose < 2:  # the model's "Loading weights" bar would cross the output
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")


def build_app() -> typer.Typer:
    """Return the ``sci-etl-search`` application with every command registered."""
    app = typer.Typer(
        name="sci-etl-search",
        help=HELP,
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    app.callback()(_main)
    app.command("index")(index_command)
    app.command("search")(search_command)
    app.command("facets")(facets_command)
    app.command("graph")(graph_command)
    app.command("backfill")(backfill_command)
    app.add_typer(maintain_app, name="maintain")
    return app
