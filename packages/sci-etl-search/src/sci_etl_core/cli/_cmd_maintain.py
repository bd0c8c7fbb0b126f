"""The ``maintain`` commands: optimize, rebuild the index or the tags, check integrity."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from sci_etl_core.cli._common import DbOption, existing_index
from sci_etl_core.cli._runtime import EXIT_FAILURE, err, out, print_json, run_async
from sci_etl_core.cli._stores import open_text_store

if TYPE_CHECKING:
    from sci_etl_core.search.store_sqlite_fts5 import AsyncSqliteFts5Store

__all__ = ["maintain_app"]

maintain_app = typer.Typer(
    name="maintain",
    help="Keep the text index fast and consistent: optimize, rebuild-index, rebuild-tags, check.",
    no_args_is_help=True,
    add_completion=False,
)


def _maintain(
    db: Path,
    keys: tuple[str, ...],
    action: Callable[[AsyncSqliteFts5Store], Awaitable[None]],
    done: str,
    stemming: bool | None = None,
    multiscript: bool | None = None,
) -> None:
    """Run ``action`` on the text index at ``db`` tagging ``keys``, then print ``done``."""

    async def work() -> None:
        async with open_text_store(db, keys, stemming, multiscript) as store:
            await action(store)

    run_async(work)
    out.print(done, markup=False, highlight=False)


@maintain_app.command("optimize")
def optimize_command(db: DbOption) -> None:
    """Merge the FTS5 index's segments, which speeds up later queries. Reads no text."""
    _maintain(db, existing_index(db), lambda store: store.optimize(), f"optimized {db}")


@maintain_app.command("rebuild-index")
def rebuild_index_command(
    db: DbOption,
    stemming: Annotated[
        bool | None,
        typer.Option(
            "--stemming/--no-stemming",
            help="Rebuild with or without Porter stemming. Default: as the index was built.",
        ),
    ] = None,
    multiscript: Annotated[
        bool | None,
        typer.Option(
            "--multiscript/--no-multiscript",
            help="Rebuild with or without multiscript segmentation (Chinese, Japanese, "
            "Korean, Thai, Arabic script). Default: as the index was built.",
        ),
    ] = None,
) -> None:
    """Re-tokenize every stored document into a fresh FTS5 index.

    Repairs an index that check reports inconsistent, from the text already stored,
    and switches stemming or multiscript segmentation on or off.
    """
    tagged = existing_index(db)
    done = f"rebuilt the full-text index of {db}"
    choices = (("stemming", stemming), ("multiscript", multiscript))
    done += "".join(
        f" {'with' if value else 'without'} {name}" for name, value in choices if value is not None
    )
    _maintain(db, tagged, lambda store: store.rebuild_index(), done, stemming, multiscript)


@maintain_app.command("rebuild-tags")
def rebuild_tags_command(
    db: DbOption,
    facet_key: Annotated[
        list[str] | None,
        typer.Option(
            "--facet-key",
            help=(
                "A metadata key to tag for filters and facets; repeat for several. The "
                "index is tagged by exactly these keys afterwards; none removes every tag. "
                "Default: the keys it is tagged by now."
            ),
        ),
    ] = None,
) -> None:
    """Re-derive every document's tags from its stored metadata, for the given keys."""
    tagged = existing_index(db)
    keys = tuple(sorted(set(facet_key))) if facet_key is not None else tagged
    listed = ", ".join(keys) if keys else "no keys"
    done = f"tagged every document of {db} by {listed}"
    _maintain(db, keys, lambda store: store.rebuild_tags(), done)


@maintain_app.command("check")
def check_command(
    db: DbOption,
    json_output: Annotated[
        bool,
        typer.Option(
            "--json", help="Print {ok, documents, facet_keys} as JSON, whatever the result."
        ),
    ] = False,
) -> None:
    """Check that the FTS5 index agrees with the stored documents; exit 1 when it does not.

    The file itself is checked first (``PRAGMA integrity_check``): a damaged file is
    reported as damaged, since rebuilding the index cannot repair it.
    """
    tagged = existing_index(db, full_check=True)

    async def work() -> tuple[bool, int]:
        async with open_text_store(db, tagged) as store:
            return await store.integrity_check(), await store.count()

    ok, documents = run_async(work)
    if json_output:
        print_json({"ok": ok, "documents": documents, "facet_keys": list(tagged)})
    elif ok:
        out.print(
            f"ok: {db} holds {documents} documents, tagged by "
            f"{', '.join(tagged) if tagged else 'no keys'}",
            markup=False,
            highlight=False,
        )
    if not ok:
        err.print(
            f"{db}: the full-text index disagrees with the stored documents; "
            f"repair it with: sci-etl-search maintain rebuild-index --db {db}",
            markup=False,
            highlight=False,
        )
        raise typer.Exit(EXIT_FAILURE)
