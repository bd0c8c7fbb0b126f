"""Citation edges beside similarity edges in a discovery graph (issue 38), and their filter."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sci_etl_core.search.edges import CitationEdgeSource, MetadataEdgeSource
from sci_etl_core.search.graph import GraphParams, build_discovery_graph, filter_graph
from sci_etl_core.search.store_base import SearchDocument
from sci_etl_core.search.store_memory import InMemoryTextSearchStore

DOCS = [
    SearchDocument("a", "Review of dwarf galaxies", "", metadata={"authors": ["Kim"]}),
    SearchDocument("b", "Cusp-core problem", "", metadata={"authors": ["Kim", "Lee"]}),
    SearchDocument("c", "Quasar clustering", "", metadata={"authors": ["Ng"]}),
    SearchDocument("d", "Protein folding", "", metadata={"authors": ["Ortiz"]}),
]
LINKS = [("a", "c"), ("d", "a"), ("a", "a")]  # a cites c, d cites a; a self-link drops


async def test_a_record_neighbours_what_it_cites_and_what_cites_it() -> None:
    source = CitationEdgeSource(LINKS)
    assert source.kind == "citation"
    assert await source.neighbours(["a", "c", "b", "a"], limit=5) == {
        "a": [("c", 1.0), ("d", 1.0)],
        "c": [("a", 1.0)],
        "b": [],
    }
    assert (await source.neighbours(["a"], limit=1))["a"] == [("c", 1.0)]


@pytest.mark.parametrize("bad", [("a",), ("a", ""), ["a", "b"], ("a", 3)])
def test_a_malformed_link_is_refused(bad: object) -> None:
    with pytest.raises(ValueError, match="citation link"):
        CitationEdgeSource([bad])  # type: ignore[list-item]


async def test_the_graph_has_both_kinds_and_the_caller_filters_by_kind() -> None:
    store = InMemoryTextSearchStore(facet_keys=("authors",))
    await store.index(DOCS)
    sources = [CitationEdgeSource(LINKS), MetadataEdgeSource(store, keys=["authors"])]
    graph = await build_discovery_graph("a", sources, store, params=GraphParams(depth=2))
    kinds = {(e.source, e.target): e.kind for e in graph.edges}
    assert kinds == {("a", "b"): "metadata", ("a", "c"): "citation", ("a", "d"): "citation"}
    citations = filter_graph(graph, edge_kinds={"citation"})
    assert {(e.source, e.target) for e in citations.edges} == {("a", "c"), ("a", "d")}
    assert {n.record_id: n.degree for n in citations.nodes}["b"] == 0
    similar = filter_graph(graph, edge_kinds={"metadata"})
    assert [(e.source, e.target) for e in similar.edges] == [("a", "b")]
    assert filter_graph(graph) == graph


@given(
    st.lists(st.tuples(st.sampled_from("abcdef"), st.sampled_from("abcdef")), max_size=20),
    st.integers(min_value=0, max_value=6),
)
async def test_citation_neighbours_are_symmetric_and_never_the_record(
    links: list[tuple[str, str]], limit: int
) -> None:
    source = CitationEdgeSource(links)
    result = await source.neighbours(list("abcdef"), limit=6)
    for record, neighbours in result.items():
        assert record not in {n for n, _ in neighbours}
        for other, weight in neighbours:
            assert weight == 1.0
            assert record in {n for n, _ in result[other]}
    cut = await source.neighbours(list("abcdef"), limit=limit)
    assert all(len(n) <= limit for n in cut.values())
