"""Discovery graphs: grow a seed record's neighbourhood and label its communities."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from sci_etl_core.search._graph_values import DiscoveryGraph, GraphEdge, GraphNode, GraphParams
from sci_etl_core.search.filters import SearchFilter, matches_filters, validate_filters

if TYPE_CHECKING:
    from sci_etl_core.search.edges import AsyncEdgeSource
    from sci_etl_core.search.store_base import AsyncTextSearchStore

__all__ = [
    "DiscoveryGraph",
    "GraphEdge",
    "GraphNode",
    "GraphParams",
    "build_discovery_graph",
    "filter_graph",
    "label_communities",
    "select_edges",
]

NeighbourLists = Mapping[str, Sequence[tuple[str, float]]]


def select_edges(
    neighbour_lists: Sequence[tuple[str, NeighbourLists]],
    nodes: Collection[str],
    *,
    min_weight: float,
    mutual_only: bool,
) -> list[GraphEdge]:
    """Turn each edge source's neighbour lists into undirected edges between ``nodes``.

    ``neighbour_lists`` pairs each source's edge kind with its lists, which map a record
    to its nearest records, already cut to the fanout. A record gets an edge of that kind
    to a neighbour in its list when both are in ``nodes``, they differ, and the weight is
    at least ``min_weight``. With ``mutual_only``, the record must also be in the
    neighbour's list. Edges of one kind between one pair merge, keeping the heaviest
    weight. Edges are sorted by source, target, and kind.
    """
    members = set(nodes)
    best: dict[tuple[str, str, str], float] = {}
    for kind, lists in neighbour_lists:
        listed = {record: {n for n, _ in neighbours} for record, neighbours in lists.items()}
        for record, neighbours in lists.items():
            if record not in members:
                continue
            for neighbour, weight in neighbours:
                if neighbour == record or neighbour not in members:
                    continue
                if not math.isfinite(weight) or weight < min_weight:
                    continue
                if mutual_only and record not in listed.get(neighbour, set()):
                    continue
                source, target = sorted((record, neighbour))
                key = (source, target, kind)
                if key not in best or weight > best[key]:
                    best[key] = weight
    return [
        GraphEdge(source, target, weight, kind)
        for (source, target, kind), weight in sorted(best.items())
    ]


def _adjacency(nodes: Sequence[str], edges: Sequence[GraphEdge]) -> dict[str, dict[str, float]]:
    members = set(nodes)
    adjacency: dict[str, dict[str, float]] = {node: {} for node in members}
    for edge in edges:
        a, b = edge.source, edge.target
        if a == b or a not in members or b not in members:
            continue
        weight = max(edge.weight, adjacency[a].get(b, -math.inf))
        adjacency[a][b] = weight
        adjacency[b][a] = weight
    return adjacency


def label_communities(
    nodes: Sequence[str],
    edges: Sequence[GraphEdge],
    *,
    max_iterations: int = 20,
) -> tuple[dict[str, int], bool]:
    """Assign each node a community by label propagation.

    Returns the communities at convergence and ``True``, or, if a pass limit of
    ``max_iterations`` is reached first, the communities after the last pass and
    ``False``. The result does not depend on the order of ``nodes`` or ``edges``:

    - A pair joined by several edges gets the heaviest weight, in both directions.
      Self-loops and edges touching a record outside ``nodes`` are ignored.
    - Each node starts with its index in sorted ``record_id`` order as its label.
    - A pass visits nodes in sorted order and updates labels in place. A node sums edge
      weights per neighbouring label, visiting neighbours in sorted order, and switches
      only when the heaviest label's total is strictly greater than its current label's;
      among labels tied for heaviest, it takes the lowest.
    - A pass that changes no label ends the run as converged. ``max_iterations`` counts
      every pass, including that last one.
    - Communities are numbered 0, 1, 2, ... in order of their smallest member.

    Raises:
        ValueError: ``max_iterations`` is below 1.
    """
    if isinstance(max_iterations, bool) or not isinstance(max_iterations, int):
        raise ValueError(f"max_iterations must be an int, got {max_iterations!r}")
    if max_iterations < 1:
        raise ValueError(f"max_iterations must be >= 1, got {max_iterations}")
    order = sorted(set(nodes))
    adjacency = _adjacency(order, edges)
    labels = {node: index for index, node in enumerate(order)}
    converged = False
    for _ in range(max_iterations):
        changed = False
        for node in order:
            totals: dict[int, float] = {}
            for neighbour in sorted(adjacency[node]):
                label = labels[neighbour]
                totals[label] = totals.get(label, 0.0) + adjacency[node][neighbour]
            if not totals:
                continue
            heaviest = max(totals.values())
            best = min(label for label, total in totals.items() if total == heaviest)
            if heaviest > totals.get(labels[node], 0.0) and best != labels[node]:
                labels[node] = best
                changed = True
        if not changed:
            converged = True
            break
    numbering: dict[int, int] = {}
    for node in order:
        numbering.setdefault(labels[node], len(numbering))
    return {node: numbering[labels[node]] for node in order}, converged


def filter_graph(
    graph: DiscoveryGraph,
    *,
    matched_ids: Collection[str] | None = None,
    filters: Sequence[SearchFilter] = (),
    edge_kinds: Collection[str] | None = None,
) -> DiscoveryGraph:
    """Keep the nodes whose record is in ``matched_ids`` and whose metadata passes ``filters``.

    The seed is always kept. ``edge_kinds`` (default: every kind) keeps only the edges of
    those kinds, such as ``{"citation"}`` for the citation network alone or
    ``{"semantic"}`` for similarity alone; nodes are kept either way. Edges losing an
    endpoint are dropped, and degrees count the remaining edges; communities are kept as
    they were, so a UI's colours stay stable while filtering. ``matched_ids`` usually comes
    from the text store's ``filter_ids``, which also answers a pure negation, and
    ``filters`` are applied in memory with the same semantics as the stores, so a facet
    toggle needs no I/O.

    Raises:
        ValueError: Two filters share a key.
    """
    validate_filters(filters)
    matched = None if matched_ids is None else set(matched_ids)
    kept = {
        node.record_id
        for node in graph.nodes
        if node.record_id == graph.seed_record_id
        or (
            (matched is None or node.record_id in matched)
            and matches_filters(node.metadata, filters)
        )
    }
    kinds = None if edge_kinds is None else set(edge_kinds)
    edges = tuple(
        e
        for e in graph.edges
        if e.source in kept and e.target in kept and (kinds is None or e.kind in kinds)
    )
    degree = _degrees(edges)
    nodes = tuple(
        replace(node, degree=degree.get(node.record_id, 0))
        for node in graph.nodes
        if node.record_id in kept
    )
    return DiscoveryGraph(nodes, edges, graph.seed_record_id, graph.communities_converged)


def _degrees(edges: Sequence[GraphEdge]) -> dict[str, int]:
    neighbours: dict[str, set[str]] = {}
    for edge in edges:
        neighbours.setdefault(edge.source, set()).add(edge.target)
        neighbours.setdefault(edge.target, set()).add(edge.source)
    return {record: len(others) for record, others in neighbours.items()}


def _clean(
    lists: Mapping[str, Sequence[tuple[str, float]]], record_ids: Sequence[str], fanout: int
) -> dict[str, list[tuple[str, float]]]:
    cleaned: dict[str, list[tuple[str, float]]] = {}
    for record in record_ids:
        best: dict[str, float] = {}
        for neighbour, weight in lists.get(record, ()):
            weight = float(weight)
            if neighbour == record or not math.isfinite(weight):
                continue
            if neighbour not in best or weight > best[neighbour]:
                best[neighbour] = weight
        ranked = sorted(best.items(), key=lambda item: (-item[1], item[0]))
        cleaned[record] = ranked[:fanout]
    return cleaned


async def _fetch(
    sources: Sequence[AsyncEdgeSource],
    record_ids: list[str],
    fanout: int,
    lists: list[dict[str, list[tuple[str, float]]]],
) -> None:
    """Fetch every source's lists for ``record_ids`` concurrently, into ``lists``."""
    if not record_ids:
        return
    results = await asyncio.gather(
        *(source.neighbours(record_ids, fanout) for source in sources), return_exceptions=True
    )
    for result in results:
        if isinstance(result, BaseException):
            raise result
    for index, result in enumerate(results):
        assert not isinstance(result, BaseException)
        lists[index].update(_clean(result, record_ids, fanout))


def _connected(seed: str, edges: Sequence[GraphEdge]) -> set[str]:
    adjacency: dict[str, set[str]] = {}
    for edge in edges:
        adjacency.setdefault(edge.source, set()).add(edge.target)
        adjacency.setdefault(edge.target, set()).add(edge.source)
    reached = {seed}
    frontier = [seed]
    while frontier:
        nxt = []
        for record in frontier:
            for other in adjacency.get(record, ()):
                if other not in reached:
                    reached.add(other)
                    nxt.append(other)
        frontier = nxt
    return reached


async def build_discovery_graph(
    seed_record_id: str,
    sources: Sequence[AsyncEdgeSource],
    text_store: AsyncTextSearchStore,
    *,
    params: GraphParams | None = None,
) -> DiscoveryGraph:
    """Grow the discovery graph around ``seed_record_id``.

    Each breadth-first level issues one batched ``neighbours`` call per source, with the
    sources running concurrently. A record's neighbour lists are fetched at most once per
    build, and reused for the mutual check. When sources fail, every source is awaited
    first, and then the first failure in source order is raised. Each source's lists are
    cleaned before use: a record never neighbours itself, a repeated neighbour keeps its
    heaviest weight, weights that are not finite are dropped, and each list is cut to the
    fanout.

    Edges are chosen by :func:`select_edges`, and only records connected to the seed
    through them are kept; the seed always is. Communities come from
    :func:`label_communities`, and titles and metadata from one ``get_documents`` call on
    ``text_store``.

    A neighbour query costs what the source costs. With an exact-scan vector store, a
    build issues up to one query per node, each scanning every stored chunk, so keep
    ``max_nodes`` small for large memories or use an approximate nearest-neighbour store
    behind the same interface.

    Raises:
        ValueError: ``seed_record_id`` is empty, ``sources`` is empty, or two sources
            share a ``kind``.
    """
    params = params if params is not None else GraphParams()
    if not isinstance(seed_record_id, str) or not seed_record_id:
        raise ValueError(f"seed_record_id must be a non-empty string, got {seed_record_id!r}")
    sources = list(sources)
    if not sources:
        raise ValueError("build_discovery_graph needs at least one edge source")
    kinds = [source.kind for source in sources]
    if len(set(kinds)) != len(kinds):
        raise ValueError(f"edge sources must have distinct kinds, got {kinds}")

    lists: list[dict[str, list[tuple[str, float]]]] = [{} for _ in sources]
    nodes: list[str] = [seed_record_id]
    seen = {seed_record_id}
    frontier = [seed_record_id]
    for _level in range(params.depth):
        if not frontier or len(nodes) >= params.max_nodes:
            break
        await _fetch(sources, frontier, params.fanout, lists)
        added: list[str] = []
        for record in frontier:
            for source_lists in lists:
                for neighbour, weight in source_lists.get(record, ()):
                    if weight < params.min_weight or neighbour in seen:
                        continue
                    if len(nodes) >= params.max_nodes:
                        break
                    seen.add(neighbour)
                    nodes.append(neighbour)
                    added.append(neighbour)
        frontier = added
    unfetched = [record for record in nodes if record not in lists[0]]
    await _fetch(sources, unfetched, params.fanout, lists)

    edges = select_edges(
        list(zip(kinds, lists, strict=True)),
        nodes,
        min_weight=params.min_weight,
        mutual_only=params.mutual_only,
    )
    kept = _connected(seed_record_id, edges)
    edges = [e for e in edges if e.source in kept and e.target in kept]
    order = sorted(kept)
    communities, converged = label_communities(order, edges, max_iterations=params.max_iterations)
    documents = await text_store.get_documents(order)
    degree = _degrees(edges)
    graph_nodes = []
    for record in order:
        document = documents.get(record)
        graph_nodes.append(
            GraphNode(
                record,
                title=document.title if document is not None else "",
                degree=degree.get(record, 0),
                community=communities[record],
                metadata=dict(document.metadata) if document is not None else {},
            )
        )
    return DiscoveryGraph(tuple(graph_nodes), tuple(edges), seed_record_id, converged)
