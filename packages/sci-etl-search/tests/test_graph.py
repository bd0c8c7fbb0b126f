"""Discovery graphs: edge selection, label propagation, filtering, and building."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sci_etl_core.search.edges import AsyncEdgeSource
from sci_etl_core.search.filters import MetadataFilter
from sci_etl_core.search.graph import (
    DiscoveryGraph,
    GraphEdge,
    GraphNode,
    GraphParams,
    build_discovery_graph,
    filter_graph,
    label_communities,
    select_edges,
)
from sci_etl_core.search.store_base import SearchDocument
from sci_etl_core.search.store_sqlite_fts5 import AsyncSqliteFts5Store


class TableEdgeSource(AsyncEdgeSource):
    """An edge source answering from a fixed neighbour table, recording its calls."""

    def __init__(self, kind: str, table: Mapping[str, Sequence[tuple[str, float]]]) -> None:
        self._kind = kind
        self.table = table
        self.calls: list[list[str]] = []

    @property
    def kind(self) -> str:
        return self._kind

    async def neighbours(
        self, record_ids: Sequence[str], limit: int
    ) -> dict[str, list[tuple[str, float]]]:
        self.calls.append(list(record_ids))
        await asyncio.sleep(0)
        return {rid: list(self.table.get(rid, ()))[: limit + 2] for rid in record_ids}


class BrokenEdgeSource(TableEdgeSource):
    """An edge source that fails after ``delay`` seconds."""

    def __init__(self, kind: str, delay: float = 0.0) -> None:
        super().__init__(kind, {})
        self.delay = delay

    async def neighbours(
        self, record_ids: Sequence[str], limit: int
    ) -> dict[str, list[tuple[str, float]]]:
        await asyncio.sleep(self.delay)
        raise RuntimeError(f"{self._kind} source is down")


class SlowEdgeSource(TableEdgeSource):
    finished = False

    async def neighbours(
        self, record_ids: Sequence[str], limit: int
    ) -> dict[str, list[tuple[str, float]]]:
        await asyncio.sleep(0.05)
        self.finished = True
        return await super().neighbours(record_ids, limit)


def _symmetric(pairs: Sequence[tuple[str, str, float]]) -> dict[str, list[tuple[str, float]]]:
    table: dict[str, list[tuple[str, float]]] = {}
    for a, b, w in pairs:
        table.setdefault(a, []).append((b, w))
        table.setdefault(b, []).append((a, w))
    return {k: sorted(v, key=lambda p: -p[1]) for k, v in table.items()}


TWO_TRIANGLES = _symmetric(
    [
        ("a", "b", 0.9),
        ("b", "c", 0.8),
        ("a", "c", 0.85),
        ("c", "d", 0.4),
        ("d", "e", 0.9),
        ("e", "f", 0.9),
        ("d", "f", 0.9),
    ]
)


@pytest.fixture
async def text_store(tmp_path: Path) -> AsyncIterator[AsyncSqliteFts5Store]:
    store = AsyncSqliteFts5Store(tmp_path / "text.sqlite", facet_keys=("year",))
    await store.index(
        [
            SearchDocument(rid, title=f"Title {rid}", metadata={"year": 2020 + i})
            for i, rid in enumerate("abcdef")
        ]
    )
    yield store
    await store.aclose()


def test_select_edges_mutual_min_weight_and_merge() -> None:
    lists = {
        "a": [("b", 0.9), ("c", 0.5), ("a", 1.0)],
        "b": [("a", 0.7)],
        "c": [("d", 0.9)],
    }
    edges = select_edges(
        [("semantic", lists), ("metadata", {"a": [("c", 0.6)]})],
        "abc",
        min_weight=0.4,
        mutual_only=True,
    )
    assert edges == [GraphEdge("a", "b", 0.9, "semantic")]
    loose = select_edges([("semantic", lists)], "abc", min_weight=0.6, mutual_only=False)
    assert loose == [GraphEdge("a", "b", 0.9, "semantic")]
    loose = select_edges([("semantic", lists)], "abcd", min_weight=0.0, mutual_only=False)
    assert [(e.source, e.target) for e in loose] == [("a", "b"), ("a", "c"), ("c", "d")]


def test_label_communities_two_triangles() -> None:
    edges = select_edges([("s", TWO_TRIANGLES)], "abcdef", min_weight=0.0, mutual_only=False)
    communities, converged = label_communities(list("fedcba"), edges)
    assert converged
    assert communities == {"a": 0, "b": 0, "c": 0, "d": 1, "e": 1, "f": 1}


def test_label_communities_pass_limit_and_validation() -> None:
    chain = [GraphEdge(f"n{i}", f"n{i + 1}", 1.0, "s") for i in range(6)]
    _, converged = label_communities([f"n{i}" for i in range(7)], chain, max_iterations=1)
    assert converged is False
    with pytest.raises(ValueError, match="max_iterations must be >= 1"):
        label_communities(["a"], [], max_iterations=0)
    assert label_communities([], []) == ({}, True)


EDGE_LISTS = st.lists(
    st.tuples(
        st.sampled_from("abcdefg"),
        st.sampled_from("abcdefg"),
        st.sampled_from([0.2, 0.5, 0.9, 1.0]),
    ),
    max_size=14,
)


@given(pairs=EDGE_LISTS, data=st.data())
def test_label_communities_is_order_independent(
    pairs: list[tuple[str, str, float]], data: st.DataObject
) -> None:
    edges = [GraphEdge(*sorted((a, b)), w, "s") for a, b, w in pairs if a != b]
    nodes = list("abcdefg")
    expected = label_communities(nodes, edges)
    shuffled_nodes = data.draw(st.permutations(nodes))
    shuffled_edges = data.draw(st.permutations(edges))
    assert label_communities(shuffled_nodes, shuffled_edges) == expected
    communities = expected[0]
    firsts = {}
    for node in sorted(communities):
        firsts.setdefault(communities[node], node)
    assert list(firsts) == list(range(len(firsts)))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"depth": -1}, "depth must be >= 0"),
        ({"fanout": 0}, "fanout must be >= 1"),
        ({"max_nodes": 0}, "max_nodes must be >= 1"),
        ({"min_weight": float("nan")}, "min_weight must be finite"),
        ({"max_iterations": 0}, "max_iterations must be >= 1"),
    ],
)
def test_graph_params_validation(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        GraphParams(**kwargs)  # type: ignore[arg-type]


def test_graph_edge_validation() -> None:
    with pytest.raises(ValueError, match="source must sort before target"):
        GraphEdge("b", "a", 1.0, "s")


async def test_build_graph_two_communities(text_store: AsyncSqliteFts5Store) -> None:
    source = TableEdgeSource("semantic", TWO_TRIANGLES)
    graph = await build_discovery_graph(
        "a", [source], text_store, params=GraphParams(depth=3, min_weight=0.3)
    )
    assert graph.seed_record_id == "a"
    assert graph.communities_converged
    assert [n.record_id for n in graph.nodes] == list("abcdef")
    assert {n.record_id: n.community for n in graph.nodes} == {
        "a": 0,
        "b": 0,
        "c": 0,
        "d": 1,
        "e": 1,
        "f": 1,
    }
    node_c = next(n for n in graph.nodes if n.record_id == "c")
    assert (node_c.title, node_c.degree, node_c.metadata) == ("Title c", 3, {"year": 2022})
    fetched = [rid for call in source.calls for rid in call]
    assert sorted(fetched) == sorted(set(fetched))  # each record's lists are fetched once


async def test_min_weight_cuts_the_bridge(text_store: AsyncSqliteFts5Store) -> None:
    source = TableEdgeSource("semantic", TWO_TRIANGLES)
    graph = await build_discovery_graph(
        "a", [source], text_store, params=GraphParams(depth=3, min_weight=0.5)
    )
    assert [n.record_id for n in graph.nodes] == ["a", "b", "c"]


async def test_max_nodes_is_respected(text_store: AsyncSqliteFts5Store) -> None:
    star = _symmetric([("a", f"x{i}", 0.9) for i in range(10)] + [("x0", "y", 0.9)])
    for max_nodes in (1, 3, 6):
        graph = await build_discovery_graph(
            "a",
            [TableEdgeSource("semantic", star)],
            text_store,
            params=GraphParams(fanout=20, max_nodes=max_nodes, mutual_only=False),
        )
        assert 1 <= len(graph.nodes) <= max_nodes
        assert "a" in {n.record_id for n in graph.nodes}


async def test_mutual_only_drops_hub_edges(text_store: AsyncSqliteFts5Store) -> None:
    table = {
        "hub": [("a", 0.9), ("b", 0.9)],
        "a": [("c", 0.95), ("hub", 0.5)],
        "b": [("c", 0.95)],
        "c": [("a", 0.95), ("b", 0.95)],
    }
    params = GraphParams(fanout=1, min_weight=0.1)
    graph = await build_discovery_graph(
        "hub", [TableEdgeSource("semantic", table)], text_store, params=params
    )
    assert [n.record_id for n in graph.nodes] == ["hub"]
    assert graph.edges == ()


async def test_failing_source_raises_after_others_finish(text_store: AsyncSqliteFts5Store) -> None:
    slow = SlowEdgeSource("semantic", TWO_TRIANGLES)
    with pytest.raises(RuntimeError, match="metadata source is down"):
        await build_discovery_graph(
            "a",
            [slow, BrokenEdgeSource("metadata"), BrokenEdgeSource("citation", delay=0.01)],
            text_store,
        )
    assert slow.finished


async def test_build_validation(text_store: AsyncSqliteFts5Store) -> None:
    with pytest.raises(ValueError, match="at least one edge source"):
        await build_discovery_graph("a", [], text_store)
    with pytest.raises(ValueError, match="seed_record_id"):
        await build_discovery_graph("", [TableEdgeSource("s", {})], text_store)
    with pytest.raises(ValueError, match="distinct kinds"):
        await build_discovery_graph(
            "a", [TableEdgeSource("s", {}), TableEdgeSource("s", {})], text_store
        )


async def test_sources_clean_self_loops_and_non_finite(text_store: AsyncSqliteFts5Store) -> None:
    table = {"a": [("a", 1.0), ("b", float("nan")), ("c", 0.2), ("c", 0.8)], "c": [("a", 0.8)]}
    graph = await build_discovery_graph("a", [TableEdgeSource("semantic", table)], text_store)
    assert graph.edges == (GraphEdge("a", "c", 0.8, "semantic"),)


def test_filter_graph_keeps_seed_and_communities() -> None:
    nodes = (
        GraphNode("a", degree=2, community=0, metadata={"year": 2020}),
        GraphNode("b", degree=2, community=0, metadata={"year": 2021}),
        GraphNode("c", degree=2, community=1, metadata={"year": 2021}),
    )
    edges = (
        GraphEdge("a", "b", 1.0, "s"),
        GraphEdge("a", "c", 1.0, "s"),
        GraphEdge("b", "c", 1.0, "s"),
    )
    graph = DiscoveryGraph(nodes, edges, "a", True)
    kept = filter_graph(graph, filters=[MetadataFilter("year", {"2021"})], matched_ids={"a", "c"})
    assert [(n.record_id, n.degree, n.community) for n in kept.nodes] == [("a", 1, 0), ("c", 1, 1)]
    assert kept.edges == (GraphEdge("a", "c", 1.0, "s"),)
    with pytest.raises(ValueError, match="second filter on key 'year'"):
        filter_graph(graph, filters=[MetadataFilter("year", {"1"}), MetadataFilter("year", {"2"})])
