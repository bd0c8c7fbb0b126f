"""Turn search results, facet counts and graphs into JSON values and rich markup.

The JSON shapes are the ``--json`` output of the commands; they hold only strings,
numbers, booleans, lists, objects and null.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rich.markup import escape

if TYPE_CHECKING:
    from sci_etl_core.search.fusion import FusedHit
    from sci_etl_core.search.graph import DiscoveryGraph
    from sci_etl_core.search.hybrid_async import SearchOutcome
    from sci_etl_core.search.store_base import Snippet

__all__ = [
    "HIGHLIGHT_STYLE",
    "facets_json",
    "graph_json",
    "highlight_markup",
    "hit_json",
    "outcome_json",
]

HIGHLIGHT_STYLE = "bold yellow"
"""The rich style of a highlighted word in human output."""

_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")

FacetCounts = Mapping[str, Sequence[tuple[str, int]]]


def highlight_markup(
    text: str, highlights: Sequence[tuple[int, int]], style: str = HIGHLIGHT_STYLE
) -> str:
    """Return ``text`` as rich markup, with each ``[start, end)`` highlight in ``style``.

    Everything outside the highlights is escaped, so text holding ``[bold]`` prints as
    written, and control characters, line breaks included, become spaces so a snippet
    stays on its line. Overlapping or unordered highlights are merged; spans outside ``text`` are
    clipped to it, and empty spans are dropped.
    """
    text = _CONTROL.sub(" ", text)
    spans: list[list[int]] = []
    for start, end in sorted(highlights):
        start, end = max(0, start), min(len(text), end)
        if start >= end:
            continue
        if spans and start <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], end)
        else:
            spans.append([start, end])
    parts: list[str] = []
    position = 0
    for start, end in spans:
        parts.append(escape(text[position:start]))
        parts.append(f"[{style}]{escape(text[start:end])}[/{style}]")
        position = end
    parts.append(escape(text[position:]))
    return "".join(parts)


def _snippet_json(snippet: Snippet) -> dict[str, Any]:
    return {
        "field": snippet.field,
        "text": snippet.text,
        "highlights": [list(span) for span in snippet.highlights],
    }


def hit_json(rank: int, hit: FusedHit) -> dict[str, Any]:
    """Return one fused hit, with its 1-based ``rank``, as a JSON object."""
    return {
        "rank": rank,
        "record_id": hit.record_id,
        "title": hit.title,
        "score": hit.score,
        "lexical_rank": hit.lexical_rank,
        "semantic_rank": hit.semantic_rank,
        "snippet": hit.snippet,
        "highlights": [list(span) for span in hit.highlights],
        "snippets": [_snippet_json(snippet) for snippet in hit.snippets],
        "metadata": hit.metadata,
    }


def facets_json(counts: FacetCounts) -> dict[str, list[dict[str, Any]]]:
    """Return facet counts as ``{key: [{"value": ..., "count": ...}, ...]}``, order kept."""
    return {
        key: [{"value": value, "count": count} for value, count in values]
        for key, values in counts.items()
    }


def outcome_json(
    query: str,
    mode: str,
    outcome: SearchOutcome,
    facets: FacetCounts | None = None,
) -> dict[str, Any]:
    """Return a search's output for ``--json``: the query, the hits and the legs left out.

    ``facets`` is present only when facet counts were asked for.
    """
    result: dict[str, Any] = {
        "query": query,
        "mode": mode,
        "hits": [hit_json(rank, hit) for rank, hit in enumerate(outcome.hits, start=1)],
        "degraded": list(outcome.degraded),
        "skipped": list(outcome.skipped),
    }
    if facets is not None:
        result["facets"] = facets_json(facets)
    return result


def graph_json(graph: DiscoveryGraph) -> dict[str, Any]:
    """Return a discovery graph for ``--json``: its seed, nodes and edges."""
    return {
        "seed": graph.seed_record_id,
        "communities_converged": graph.communities_converged,
        "nodes": [
            {
                "record_id": node.record_id,
                "title": node.title,
                "degree": node.degree,
                "community": node.community,
                "metadata": node.metadata,
            }
            for node in graph.nodes
        ],
        "edges": [
            {
                "source": edge.source,
                "target": edge.target,
                "weight": edge.weight,
                "kind": edge.kind,
            }
            for edge in graph.edges
        ],
    }
