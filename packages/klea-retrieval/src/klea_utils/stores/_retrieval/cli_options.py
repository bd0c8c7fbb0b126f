"""What ``klea-retrieve`` and ``klea-serve`` share on the command line, declared once.

The options that mean the same in both are ``Annotated`` type aliases that a command's
signature names; the flag, help text and checks live here, the default stays with the
command. Also the ``--version`` option (it prints the program's own name), the log level
of ``-v``/``-q`` and the console entry point's exit status. Imports nothing heavy, so that
``--help`` stays fast.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Annotated

import typer

__all__ = [
    "CONTEXT_MODES",
    "Bm25Stores",
    "Context",
    "ContextTokens",
    "Domains",
    "Quiet",
    "Rerank",
    "StoreUris",
    "Verbose",
    "Version",
    "check_context",
    "log_level",
    "run_app",
]

CONTEXT_MODES = ("off", "neighbours", "section")
"""The values of ``--context``."""

StoreUris = Annotated[
    list[str] | None,
    typer.Option(
        "--store",
        metavar="COLLECTION=URI",
        help="A vector store, e.g. papers=chroma:stores/chroma (repeatable).",
    ),
]
Bm25Stores = Annotated[
    list[str] | None,
    typer.Option(
        "--bm25-store",
        metavar="PATH",
        help="A BM25 corpus file, or fts5:INDEX.sqlite (repeatable).",
    ),
]
Domains = Annotated[
    list[str] | None,
    typer.Option("--domain", help="Only this domain (repeatable; default: every domain)."),
]
Rerank = Annotated[
    str | None, typer.Option("--rerank", metavar="MODEL", help="Cross-encoder to re-rank with.")
]
Verbose = Annotated[
    int, typer.Option("-v", "--verbose", count=True, help="More log output (-vv: debug).")
]
Quiet = Annotated[bool, typer.Option("-q", "--quiet", help="Only errors.")]
Context = Annotated[
    str | None,
    typer.Option(
        "--context",
        metavar="off|neighbours|section",
        help="Widen each hit with the chunks around it in its section: the next and "
        "previous one (neighbours) or as many as fit (section), up to --context-tokens "
        "(default: neighbours; off: the chunks as stored).",
        show_default=False,
    ),
]
# "neighbours" above: klea_utils.stores._retrieval.context.DEFAULT_CONTEXT (a test keeps
# them equal; importing it here would make --help slow).
ContextTokens = Annotated[
    int | None,
    typer.Option(
        "--context-tokens",
        min=1,
        help="Token budget of a widened passage (default: 768).",
        show_default=False,
    ),
]


def check_context(context: str | None) -> None:
    """Refuse a ``--context`` value that is not one of :data:`CONTEXT_MODES`.

    Raises:
        typer.BadParameter: Naming the option and the value.
    """
    if context is not None and context not in CONTEXT_MODES:
        raise typer.BadParameter(
            f"must be off, neighbours or section, got {context!r}", param_hint="'--context'"
        )


def _print_version(ctx: typer.Context, value: bool) -> None:
    if value:
        from importlib.metadata import version

        program = ctx.find_root().info_name or "klea-retrieval"
        typer.echo(f"{program} (klea-retrieval {version('klea-retrieval')})")
        raise typer.Exit()


Version = Annotated[
    bool,
    typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version."),
]


def log_level(verbose: int, quiet: bool) -> int:
    """The logging level of ``-v``/``-vv``/``-q``: ERROR, DEBUG, INFO, or WARNING."""
    if quiet:
        return logging.ERROR
    if verbose > 1:
        return logging.DEBUG
    return logging.INFO if verbose else logging.WARNING


def run_app(app: typer.Typer, argv: Sequence[str] | None, prog_name: str) -> int:
    """Run ``app`` as ``prog_name``; the exit status (0 ok, 1 failed, 2 usage error)."""
    try:
        app(args=list(argv) if argv is not None else None, prog_name=prog_name)
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    return 0
