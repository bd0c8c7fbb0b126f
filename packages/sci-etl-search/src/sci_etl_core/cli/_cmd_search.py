"""The ``search`` and ``facets`` commands."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AsyncExitStack
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from sci_etl_core.cli._common import (
    DbOption,
    FilterOption,
    ModelOption,
    RangeOption,
    StoreOption,
    VectorsOption,
    existing_index,
    existing_vectors,
    facet_keys_of,
    search_filters,
)
from sci_etl_core.cli._options import parse_facet_keys
from sci_etl_core.cli._render import facets_json, highlight_markup, outcome_json
from sci_etl_core.cli._runtime import (
    EXIT_USAGE,
    err,
    fail,
    fail_query,
    out,
    print_json,
    run_async,
    warn,
)
from sci_etl_core.cli._stores import (
    load_embedder,
    open_plugin_store,
    open_text_store,
    open_vector_store,
)
from sci_etl_core.exceptions import SearchQueryError
from sci_etl_core.search.filters import SearchFilter

if TYPE_CHECKING:
    from sci_etl_core.embeddings.plugins import OpenedVectorStore
    from sci_etl_core.search.fusion import FusedHit
    from sci_etl_core.search.hybrid_async import SearchOutcome
    from sci_etl_core.search.query import Node

__all__ = ["Fusion", "Mode", "facets_command", "search_command"]

FacetCounts = Mapping[str, Sequence[tuple[str, int]]]


class Mode(StrEnum):
    """Which retrieval legs a search runs."""

    lexical = "lexical"
    semantic = "semantic"
    hybrid = "hybrid"


class Fusion(StrEnum):
    """How a hybrid search fuses the lexical and the semantic ranking."""

    rrf = "rrf"
    normalized = "normalized"


def _parse(query: str, mode: Mode) -> Node:
    """Parse ``query`` as ``mode`` needs it, exiting with a caret under a fault."""
    from sci_etl_core.search.parser import parse_ranked_query, parse_semantic_query

    try:
        if mode is Mode.semantic:
            node, _ = parse_semantic_query(query)
            return node
        return parse_ranked_query(query)
    except SearchQueryError as error:
        fail_query(error, query)


def _parse_any(query: str) -> Node:
    from sci_etl_core.search.parser import parse_query

    try:
        return parse_query(query)
    except SearchQueryError as error:
        fail_query(error, query)


async def _search(
    query: str,
    db: Path,
    tagged: Sequence[str],
    vectors: Path | None,
    model: str | None,
    mode: Mode,
    fusion: Fusion,
    top_k: int,
    filters: Sequence[SearchFilter],
    facet_keys: Sequence[str],
    plugin: OpenedVectorStore | None = None,
) -> tuple[SearchOutcome, FacetCounts | None]:
    from sci_etl_core.embeddings.finder_async import AsyncSimilarArticleFinder
    from sci_etl_core.search.fusion import normalized_score_fusion, reciprocal_rank_fusion
    from sci_etl_core.search.hybrid_async import AsyncHybridSearcher

    strategy = reciprocal_rank_fusion if fusion is Fusion.rrf else normalized_score_fusion
    async with AsyncExitStack() as stack:
        text_store = await stack.enter_async_context(open_text_store(db, tagged))
        finder = None
        if plugin is not None:
            stack.push_async_callback(plugin.store.aclose)
            finder = AsyncSimilarArticleFinder(plugin.embedder, plugin.store)
        elif vectors is not None and mode is not Mode.lexical:
            vector_store = await stack.enter_async_context(open_vector_store(vectors))
            finder = AsyncSimilarArticleFinder(load_embedder(model), vector_store)
        searcher = AsyncHybridSearcher(text_store, finder, strategy=strategy, logger=warn)
        outcome = await searcher.search(query, top_k, mode=mode.value, filters=filters)
        counts: FacetCounts | None = None
        if facet_keys:
            node = _parse_any(query)
            counts = await text_store.facet_counts(facet_keys, query=node, filters=filters)
    return outcome, counts


def _print_hit(rank: int, hit: FusedHit) -> None:
    title = hit.title.strip() or "(untitled)"
    out.print(
        f"[bold]{rank}.[/bold] {highlight_markup(title, ())}  "
        f"[dim]{highlight_markup(hit.record_id, ())}[/dim]",
        highlight=False,
    )
    legs = []
    if hit.lexical_rank is not None:
        legs.append(f"lexical #{hit.lexical_rank}")
    if hit.semantic_rank is not None:
        legs.append(f"semantic #{hit.semantic_rank}")
    if legs:
        out.print(f"   [dim]{' · '.join(legs)}[/dim]", highlight=False)
    if hit.snippets:
        for snippet in hit.snippets:
            text = highlight_markup(snippet.text, snippet.highlights)
            out.print(f"   [dim]{snippet.field}:[/dim] {text}", highlight=False)
    elif hit.snippet:
        out.print(f"   {highlight_markup(hit.snippet, hit.highlights)}", highlight=False)


def _print_facets(counts: FacetCounts) -> None:
    for key, values in counts.items():
        out.print(f"[bold]{highlight_markup(key, ())}[/bold]", highlight=False)
        if not values:
            out.print("   [dim](no values)[/dim]", highlight=False)
        for value, count in values:
            out.print(f"   {count:>6}  {highlight_markup(value, ())}", highlight=False)


def search_command(
    query: Annotated[
        str,
        typer.Argument(
            help=(
                'The Boolean query: words, "phrases", prefix*, title:/abstract:/body: '
                "scopes, NEAR(a b, 5), AND, OR, NOT or -word, and parentheses. Put a "
                "query starting with - after --, as in: search --db DB -- -word."
            ),
        ),
    ],
    db: DbOption,
    vectors: VectorsOption = None,
    store: StoreOption = None,
    model: ModelOption = None,
    mode: Annotated[
        Mode,
        typer.Option(
            "--mode",
            help=(
                "lexical ranks by BM25 in the text index; semantic by meaning in the "
                "vector memory (needs --vectors or --store); hybrid fuses both, and falls "
                "back to lexical results when the embedder fails or no vector memory is given."
            ),
            case_sensitive=False,
        ),
    ] = Mode.hybrid,
    top_k: Annotated[
        int, typer.Option("--top-k", "-k", help="How many records to show.", min=1)
    ] = 10,
    filter_: FilterOption = None,
    range_: RangeOption = None,
    facets: Annotated[
        str | None,
        typer.Option(
            "--facets",
            help="Also count the lexical matches per value of these comma-separated keys.",
            metavar="KEY,...",
        ),
    ] = None,
    fusion: Annotated[
        Fusion,
        typer.Option(
            "--fusion",
            help=(
                "How hybrid mode fuses the two rankings: rrf (reciprocal rank fusion) or "
                "normalized (min-max normalized scores)."
            ),
            case_sensitive=False,
        ),
    ] = Fusion.rrf,
    any_words: Annotated[
        bool,
        typer.Option(
            "--any",
            help=(
                "Read QUERY as a natural-language question: match any of its words "
                "(their OR, each quoted, less English function and question words), "
                "ranked by BM25, instead of the Boolean syntax."
            ),
        ),
    ] = False,
    json_output: Annotated[
        bool,
        typer.Option(
            "--json",
            help=(
                "Print one JSON object: query, mode, hits (rank, record_id, title, score, "
                "lexical_rank, semantic_rank, snippet, highlights, snippets, metadata), "
                "degraded, skipped, and facets when asked for."
            ),
        ),
    ] = False,
) -> None:
    """Search the index and print the best records, best first.

    Human output shows each record's rank, title and id, which legs found it, and
    snippets with the query's words highlighted. A malformed query is printed with a
    caret under the fault, and the command exits with status 2.
    """
    if any_words:
        from sci_etl_core.search.questions import question_query

        query = question_query(query)
        if not query:
            fail("--any: the question has no words to search for", EXIT_USAGE)
    filters = search_filters(filter_, range_)
    try:
        facet_keys = parse_facet_keys(facets)
    except ValueError as error:
        fail(str(error), EXIT_USAGE)
    _parse(query, mode)
    if vectors is not None and store is not None:
        fail("give --vectors or --store, not both: one vector memory per search", EXIT_USAGE)
    if mode is Mode.semantic and vectors is None and store is None:
        fail(
            "--mode semantic needs --vectors or --store, the vector memory to search",
            EXIT_USAGE,
        )
    tagged = existing_index(db)
    facet_keys_of(
        db,
        tagged,
        [
            *((f"--filter/--range {f.key}", f.key) for f in filters),
            *(("--facets", k) for k in facet_keys),
        ],
    )
    if vectors is not None and mode is not Mode.lexical:
        existing_vectors(vectors)
    plugin = open_plugin_store(store, model) if store and mode is not Mode.lexical else None
    outcome, counts = run_async(
        lambda: _search(
            query, db, tagged, vectors, model, mode, fusion, top_k, filters, facet_keys, plugin
        )
    )
    if outcome.degraded:
        warn(f"showing results without the {', '.join(outcome.degraded)} leg, which failed")
    if outcome.skipped and mode is Mode.hybrid:
        err.print(
            f"note: the {', '.join(outcome.skipped)} leg was skipped"
            + (" (no --vectors or --store given)" if vectors is None and store is None else ""),
            markup=False,
            highlight=False,
        )
    if json_output:
        print_json(outcome_json(query, mode.value, outcome, counts))
        return
    if not outcome.hits:
        hint = (
            ""
            if any_words
            else ("; to match any of the words of a question, ranked by BM25, add --any")
        )
        err.print(f"no matching records{hint}", markup=False, highlight=False)
    for rank, hit in enumerate(outcome.hits, start=1):
        _print_hit(rank, hit)
    if counts is not None:
        _print_facets(counts)


def facets_command(
    keys: Annotated[list[str], typer.Argument(help="The metadata keys to count values of.")],
    db: DbOption,
    query: Annotated[
        str | None,
        typer.Option(
            "--query",
            "-q",
            help="Count only the records matching this Boolean query; any query, even -word.",
        ),
    ] = None,
    filter_: FilterOption = None,
    range_: RangeOption = None,
    json_output: Annotated[
        bool,
        typer.Option("--json", help='Print {"KEY": [{"value": ..., "count": ...}, ...]} as JSON.'),
    ] = False,
) -> None:
    """Count the records per value of each metadata key, most frequent first.

    A key's counts ignore the filter on that key itself, so each count says how many
    records that value would give if it were selected instead.
    """
    filters = search_filters(filter_, range_)
    node = _parse_any(query) if query is not None else None
    tagged = existing_index(db)
    facet_keys_of(
        db,
        tagged,
        [*((f"--filter/--range {f.key}", f.key) for f in filters), *(("KEYS", k) for k in keys)],
    )
    unique = list(dict.fromkeys(keys))

    async def count() -> FacetCounts:
        async with open_text_store(db, tagged) as store:
            return await store.facet_counts(unique, query=node, filters=filters)

    counts = run_async(count)
    if json_output:
        print_json(facets_json(counts))
    else:
        _print_facets(counts)
