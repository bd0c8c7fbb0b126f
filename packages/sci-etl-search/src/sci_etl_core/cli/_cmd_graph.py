"""The ``graph`` command: the discovery graph around one record."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AsyncExitStack
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from sci_etl_core.cli._common import (
    DbOption,
    ModelOption,
    VectorsOption,
    existing_index,
    existing_vectors,
    facet_keys_of,
)
from sci_etl_core.cli._render import graph_json, highlight_markup
from sci_etl_core.cli._runtime import EXIT_USAGE, fail, out, print_json, run_async
from sci_etl_core.cli._stores import load_embedder, open_text_store, open_vector_store

if TYPE_CHECKING:
    from sci_etl_core.search.edges import AsyncEdgeSource
    from sci_etl_core.search.graph import DiscoveryGraph, GraphParams

__all__ = ["DEFAULT_METADATA_KEYS", "EdgeKind", "graph_command"]

DEFAULT_METADATA_KEYS = ("categories", "authors")
"""The keys metadata edges compare when no ``--metadata-key`` is given, if tagged."""


class EdgeKind(StrEnum):
    """The edge sources a graph can grow along."""

    semantic = "semantic"
    metadata = "metadata"


async def _graph(
    seed: str,
    db: Path,
    tagged: Sequence[str],
    vectors: Path | None,
    model: str | None,
    kinds: Sequence[EdgeKind],
    metadata_keys: Sequence[str],
    params: GraphParams,
) -> DiscoveryGraph:
    from sci_etl_core.search.edges import EmbeddingEdgeSource, MetadataEdgeSource
    from sci_etl_core.search.graph import build_discovery_graph

    async with AsyncExitStack() as stack:
        text_store = await stack.enter_async_context(open_text_store(db, tagged))
        if seed not in await text_store.get_documents([seed]):
            fail(f"record {seed!r} is not in the text index {db}")
        sources: list[AsyncEdgeSource] = []
        for kind in kinds:
            if kind is EdgeKind.metadata:
                sources.append(MetadataEdgeSource(text_store, tuple(metadata_keys)))
            elif vectors is not None:
                vector_store = await stack.enter_async_context(open_vector_store(vectors))
                sources.append(EmbeddingEdgeSource(load_embedder(model), vector_store, text_store))
        return await build_discovery_graph(seed, sources, text_store, params=params)


def _print_graph(graph: DiscoveryGraph) -> None:
    out.print(
        f"[bold]{len(graph.nodes)} records, {len(graph.edges)} links[/bold]"
        + ("" if graph.communities_converged else " [dim](communities approximate)[/dim]"),
        highlight=False,
    )
    for node in sorted(graph.nodes, key=lambda n: (n.community, -n.degree, n.record_id)):
        marker = "*" if node.record_id == graph.seed_record_id else " "
        out.print(
            f" {marker} [dim]community {node.community}[/dim]  "
            f"{highlight_markup(node.record_id, ())}  "
            f"{highlight_markup(node.title or '(untitled)', ())}  "
            f"[dim]degree {node.degree}[/dim]",
            highlight=False,
        )
    for edge in graph.edges:
        out.print(
            f"   {highlight_markup(edge.source, ())} -- {highlight_markup(edge.target, ())}  "
            f"[dim]{edge.kind} {edge.weight:.3f}[/dim]",
            highlight=False,
        )


def graph_command(
    seed: Annotated[str, typer.Argument(help="The record_id the graph grows around.")],
    db: DbOption,
    vectors: VectorsOption = None,
    model: ModelOption = None,
    edges: Annotated[
        list[EdgeKind] | None,
        typer.Option(
            "--edges",
            help=(
                "An edge source: semantic (similar meaning, needs --vectors) or metadata "
                "(shared tag values). Repeat for both. Default: metadata, plus semantic "
                "when --vectors is given."
            ),
            case_sensitive=False,
        ),
    ] = None,
    metadata_key: Annotated[
        list[str] | None,
        typer.Option(
            "--metadata-key",
            help=(
                "A tagged metadata key whose shared values link records, for metadata "
                "edges; repeat for several. Default: categories and authors, those of them tagged."
            ),
        ),
    ] = None,
    depth: Annotated[
        int, typer.Option("--depth", help="Breadth-first levels grown from the seed.", min=1)
    ] = 2,
    fanout: Annotated[
        int,
        typer.Option("--fanout", help="Neighbours each record expands to, per edge source.", min=1),
    ] = 8,
    min_weight: Annotated[
        float,
        typer.Option("--min-weight", help="The lowest edge weight kept (cosine or Jaccard)."),
    ] = 0.35,
    max_nodes: Annotated[
        int, typer.Option("--max-nodes", help="The most records the graph holds.", min=1)
    ] = 200,
    all_edges: Annotated[
        bool,
        typer.Option(
            "--all-edges",
            help="Keep one-sided edges too, not only pairs that are among each other's nearest.",
        ),
    ] = False,
    json_output: Annotated[
        bool,
        typer.Option(
            "--json",
            help=(
                "Print one JSON object: seed, communities_converged, nodes (record_id, "
                "title, degree, community, metadata) and edges (source, target, weight, kind)."
            ),
        ),
    ] = False,
) -> None:
    """Grow the discovery graph around SEED and print its records, communities and links.

    Records are linked by similar meaning (semantic edges, from the vector memory)
    and by shared metadata values (metadata edges, from the text index's tags).
    Communities come from deterministic label propagation.
    """
    from sci_etl_core.search.graph import GraphParams

    tagged = existing_index(db)
    explicit = list(dict.fromkeys(edges or []))
    kinds = explicit or [EdgeKind.metadata, EdgeKind.semantic]
    if vectors is None and not explicit:
        kinds = [EdgeKind.metadata]
    if EdgeKind.semantic in kinds and vectors is None:
        fail(
            "--edges semantic needs --vectors, the vector memory to compare records in", EXIT_USAGE
        )
    if metadata_key:
        keys = list(dict.fromkeys(metadata_key))
        if EdgeKind.metadata in kinds:
            facet_keys_of(db, tagged, [("--metadata-key", key) for key in keys])
    else:
        keys = [key for key in DEFAULT_METADATA_KEYS if key in tagged]
        if not keys and EdgeKind.metadata in kinds:
            if explicit or vectors is None:
                fail(
                    f"metadata edges need tagged keys, and {db} has no tags for "
                    f"{' or '.join(DEFAULT_METADATA_KEYS)}; give --metadata-key KEY for a "
                    "tagged key, or --vectors for semantic edges",
                    EXIT_USAGE,
                )
            kinds = [kind for kind in kinds if kind is not EdgeKind.metadata]
    try:
        params = GraphParams(
            depth=depth,
            fanout=fanout,
            min_weight=min_weight,
            max_nodes=max_nodes,
            mutual_only=not all_edges,
        )
    except ValueError as error:
        fail(str(error), EXIT_USAGE)
    if vectors is not None and EdgeKind.semantic in kinds:
        existing_vectors(vectors)
    graph = run_async(lambda: _graph(seed, db, tagged, vectors, model, kinds, keys, params))
    if json_output:
        print_json(graph_json(graph))
    else:
        _print_graph(graph)
