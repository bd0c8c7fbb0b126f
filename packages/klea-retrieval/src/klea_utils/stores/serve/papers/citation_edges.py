"""Citation edges between search results, for the result graph.

A result is a passage; a citation relates papers. :func:`citation_edges` draws one edge
from the first (best-ranked) result of a citing paper to the first result of each paper it
cites that is among the results, with ``kind`` ``"citation"`` and weight 1.0, read from the
library's links (``references[*].target``, written by ``klea-stores-create build``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from klea_utils.stores._retrieval.citations_file import LibraryCitations

__all__ = ["CITATION", "EDGE_KINDS", "SIMILARITY", "citation_edges"]

SIMILARITY = "similarity"
CITATION = "citation"
EDGE_KINDS = (SIMILARITY, CITATION)
"""The kinds of edge ``POST /api/graph`` draws, in the order it draws them."""


def citation_edges(library: LibraryCitations, files: Mapping[str, str]) -> list[dict[str, Any]]:
    """Edges ``citing result -> cited result`` among results (``{record id: file name}``)."""
    first: dict[str, str] = {}
    for record_id, file_name in files.items():
        first.setdefault(file_name, record_id)
    edges: list[dict[str, Any]] = []
    for file_name, record_id in first.items():
        if file_name not in library:
            continue
        targets = {ref.get("target") for ref in library.of(file_name)["references"]}
        for target in sorted(t for t in targets if isinstance(t, str) and t != file_name):
            if target in first:
                edge = {"source": record_id, "target": first[target], "weight": 1.0}
                edges.append({**edge, "kind": CITATION})
    return edges
