"""The value types of a discovery graph: nodes, edges, the graph, and its parameters."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

__all__ = ["DiscoveryGraph", "GraphEdge", "GraphNode", "GraphParams"]


def _positive_int(owner: str, name: str, value: object, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{owner}.{name} must be an int, got {value!r}")
    if value < minimum:
        raise ValueError(f"{owner}.{name} must be >= {minimum}, got {value}")


@dataclass(frozen=True)
class GraphNode:
    """A record in a discovery graph.

    ``degree`` counts the distinct records the node shares an edge with. ``community``
    is the canonical id :func:`~sci_etl_core.search.graph.label_communities` assigned.
    ``title`` and ``metadata`` come from the text index, and are empty for a record the
    index does not hold.

    Raises:
        ValueError: ``record_id`` is empty, or ``degree`` or ``community`` is negative.
    """

    record_id: str
    title: str = ""
    degree: int = 0
    community: int = 0
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.record_id, str) or not self.record_id:
            raise ValueError(f"GraphNode.record_id must be a non-empty string: {self.record_id!r}")
        _positive_int("GraphNode", "degree", self.degree, 0)
        _positive_int("GraphNode", "community", self.community, 0)


@dataclass(frozen=True)
class GraphEdge:
    """An undirected weighted edge, with ``source`` sorting before ``target``.

    ``kind`` names the edge source that produced it, such as ``"semantic"``,
    ``"metadata"``, or ``"citation"``.

    Raises:
        ValueError: ``source`` does not sort strictly before ``target``, ``weight`` is
            not finite, or ``kind`` is empty.
    """

    source: str
    target: str
    weight: float
    kind: str

    def __post_init__(self) -> None:
        if not isinstance(self.source, str) or not isinstance(self.target, str):
            raise ValueError("GraphEdge.source and target must be strings")
        if not self.source < self.target:
            raise ValueError(
                f"GraphEdge.source must sort before target: {self.source!r}, {self.target!r}"
            )
        if not math.isfinite(self.weight):
            raise ValueError(f"GraphEdge.weight must be finite, got {self.weight!r}")
        if not isinstance(self.kind, str) or not self.kind:
            raise ValueError("GraphEdge.kind must be a non-empty string")


@dataclass(frozen=True)
class DiscoveryGraph:
    """The neighbourhood of a seed record, as topology only.

    It holds no coordinates, colours, or layout: layout is a rendering concern, so a UI
    runs force-directed layout over this data. ``communities_converged`` is ``False``
    when label propagation stopped at its pass limit, so a UI can say the communities
    are approximate.
    """

    nodes: tuple[GraphNode, ...]
    edges: tuple[GraphEdge, ...]
    seed_record_id: str | None
    communities_converged: bool

    def __post_init__(self) -> None:
        object.__setattr__(self, "nodes", tuple(self.nodes))
        object.__setattr__(self, "edges", tuple(self.edges))


@dataclass(frozen=True)
class GraphParams:
    """How far and how densely a discovery graph grows around its seed.

    The graph grows ``depth`` breadth-first levels. Each record expands to the up to
    ``fanout`` neighbours per edge source whose weight is at least ``min_weight``.
    ``max_nodes`` is a hard cap, checked before each level is expanded. With
    ``mutual_only``, an edge is kept only when each record is among the other's
    ``fanout`` nearest, which keeps a hub record from connecting to everything.
    ``max_iterations`` bounds label propagation.

    Raises:
        ValueError: ``depth`` is negative, ``fanout``, ``max_nodes`` or
            ``max_iterations`` is below 1, or ``min_weight`` is not finite.
    """

    depth: int = 2
    fanout: int = 8
    min_weight: float = 0.35
    max_nodes: int = 200
    mutual_only: bool = True
    max_iterations: int = 20

    def __post_init__(self) -> None:
        _positive_int("GraphParams", "depth", self.depth, 0)
        _positive_int("GraphParams", "fanout", self.fanout, 1)
        _positive_int("GraphParams", "max_nodes", self.max_nodes, 1)
        _positive_int("GraphParams", "max_iterations", self.max_iterations, 1)
        if (
            isinstance(self.min_weight, bool)
            or not isinstance(self.min_weight, (int, float))
            or not math.isfinite(self.min_weight)
        ):
            raise ValueError(f"GraphParams.min_weight must be finite, got {self.min_weight!r}")
