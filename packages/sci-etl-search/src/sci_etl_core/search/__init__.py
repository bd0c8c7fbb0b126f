"""Boolean, hybrid and graph search over scholarly records, in the standard library only.

Every public name of the submodules is importable from here. Names are imported on first
use, so ``import sci_etl_core.search`` stays cheap and loads nothing outside the standard
library; type checkers see ordinary imports.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sci_etl_core.search.backfill_async import (
        BackfillReport,
        backfill_text_index,
        merge_passages,
        stored_record_document,
    )
    from sci_etl_core.search.compile_fts5 import (
        FILTER_LEAF,
        is_rankable,
        require_rankable,
        to_filter_expression,
        to_match_expression,
    )
    from sci_etl_core.search.edges import (
        AsyncEdgeSource,
        EmbeddingEdgeSource,
        MetadataEdgeSource,
    )
    from sci_etl_core.search.evaluate import (
        TokenizedDocument,
        matches,
        near_hits,
        near_occurrences,
        occurrences,
        trim_near,
    )
    from sci_etl_core.search.filters import (
        SNIPPET_CLOSE,
        SNIPPET_ELLIPSIS,
        SNIPPET_OPEN,
        SNIPPET_TOKENS,
        MetadataFilter,
        RangeFilter,
        SearchFilter,
        encode_metadata,
        matches_filters,
        sanitize_text,
        split_markers,
        tag_in_range,
        tag_rows,
        validate_facet_keys,
        validate_filters,
    )
    from sci_etl_core.search.fusion import (
        FusedHit,
        FusionParams,
        FusionStrategy,
        normalized_score_fusion,
        reciprocal_rank_fusion,
    )
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
    from sci_etl_core.search.hybrid_async import (
        SEARCH_MODES,
        AsyncHybridSearcher,
        HybridParams,
        SearchMode,
        SearchOutcome,
    )
    from sci_etl_core.search.index_async import (
        AsyncSearchIndexer,
    )
    from sci_etl_core.search.parser import (
        MAX_GROUP_DEPTH,
        parse_query,
        parse_ranked_query,
        parse_semantic_query,
    )
    from sci_etl_core.search.query import (
        FIELDS,
        NEAR_DISTANCE,
        And,
        Near,
        Node,
        Not,
        Or,
        Phrase,
        QueryChip,
        Term,
        describe,
        normalize,
        semantic_text,
    )
    from sci_etl_core.search.snippets import (
        passage_snippet,
        snippet_window,
    )
    from sci_etl_core.search.stemming import (
        FTS5_PORTER_TOKENIZE,
        PorterTokenizer,
        porter_stem,
    )
    from sci_etl_core.search.store_base import (
        AsyncTextSearchStore,
        BM25Weights,
        SearchDocument,
        Snippet,
        TextHit,
    )
    from sci_etl_core.search.store_memory import (
        InMemoryTextSearchStore,
    )
    from sci_etl_core.search.store_sqlite_fts5 import (
        AsyncSqliteFts5Store,
        fts5_available,
    )
    from sci_etl_core.search.tokenize import (
        FTS5_MAX_TOKEN_BYTES,
        SURROGATE_CODE_POINTS,
        Token,
        Tokenizer,
        Unicode61Tokenizer,
    )

_EXPORTS: dict[str, str] = {
    "FIELDS": "query",
    "NEAR_DISTANCE": "query",
    "Term": "query",
    "Phrase": "query",
    "Near": "query",
    "And": "query",
    "Or": "query",
    "Not": "query",
    "Node": "query",
    "QueryChip": "query",
    "normalize": "query",
    "describe": "query",
    "semantic_text": "query",
    "MAX_GROUP_DEPTH": "parser",
    "parse_query": "parser",
    "parse_ranked_query": "parser",
    "parse_semantic_query": "parser",
    "Token": "tokenize",
    "Tokenizer": "tokenize",
    "Unicode61Tokenizer": "tokenize",
    "SURROGATE_CODE_POINTS": "tokenize",
    "FTS5_MAX_TOKEN_BYTES": "tokenize",
    "PorterTokenizer": "stemming",
    "porter_stem": "stemming",
    "FTS5_PORTER_TOKENIZE": "stemming",
    "TokenizedDocument": "evaluate",
    "matches": "evaluate",
    "occurrences": "evaluate",
    "near_occurrences": "evaluate",
    "trim_near": "evaluate",
    "near_hits": "evaluate",
    "FILTER_LEAF": "compile_fts5",
    "is_rankable": "compile_fts5",
    "require_rankable": "compile_fts5",
    "to_match_expression": "compile_fts5",
    "to_filter_expression": "compile_fts5",
    "MetadataFilter": "filters",
    "RangeFilter": "filters",
    "SearchFilter": "filters",
    "tag_in_range": "filters",
    "validate_filters": "filters",
    "validate_facet_keys": "filters",
    "matches_filters": "filters",
    "tag_rows": "filters",
    "encode_metadata": "filters",
    "sanitize_text": "filters",
    "split_markers": "filters",
    "SNIPPET_OPEN": "filters",
    "SNIPPET_CLOSE": "filters",
    "SNIPPET_ELLIPSIS": "filters",
    "SNIPPET_TOKENS": "filters",
    "SearchDocument": "store_base",
    "Snippet": "store_base",
    "TextHit": "store_base",
    "BM25Weights": "store_base",
    "AsyncTextSearchStore": "store_base",
    "InMemoryTextSearchStore": "store_memory",
    "AsyncSqliteFts5Store": "store_sqlite_fts5",
    "fts5_available": "store_sqlite_fts5",
    "snippet_window": "snippets",
    "passage_snippet": "snippets",
    "AsyncSearchIndexer": "index_async",
    "BackfillReport": "backfill_async",
    "merge_passages": "backfill_async",
    "stored_record_document": "backfill_async",
    "backfill_text_index": "backfill_async",
    "FusedHit": "fusion",
    "FusionParams": "fusion",
    "FusionStrategy": "fusion",
    "reciprocal_rank_fusion": "fusion",
    "normalized_score_fusion": "fusion",
    "SearchMode": "hybrid_async",
    "SEARCH_MODES": "hybrid_async",
    "HybridParams": "hybrid_async",
    "SearchOutcome": "hybrid_async",
    "AsyncHybridSearcher": "hybrid_async",
    "GraphNode": "graph",
    "GraphEdge": "graph",
    "DiscoveryGraph": "graph",
    "GraphParams": "graph",
    "select_edges": "graph",
    "label_communities": "graph",
    "filter_graph": "graph",
    "build_discovery_graph": "graph",
    "AsyncEdgeSource": "edges",
    "MetadataEdgeSource": "edges",
    "EmbeddingEdgeSource": "edges",
}

__all__ = [
    "FIELDS",
    "FILTER_LEAF",
    "FTS5_MAX_TOKEN_BYTES",
    "FTS5_PORTER_TOKENIZE",
    "MAX_GROUP_DEPTH",
    "NEAR_DISTANCE",
    "SEARCH_MODES",
    "SNIPPET_CLOSE",
    "SNIPPET_ELLIPSIS",
    "SNIPPET_OPEN",
    "SNIPPET_TOKENS",
    "SURROGATE_CODE_POINTS",
    "And",
    "AsyncEdgeSource",
    "AsyncHybridSearcher",
    "AsyncSearchIndexer",
    "AsyncSqliteFts5Store",
    "AsyncTextSearchStore",
    "BM25Weights",
    "BackfillReport",
    "DiscoveryGraph",
    "EmbeddingEdgeSource",
    "FusedHit",
    "FusionParams",
    "FusionStrategy",
    "GraphEdge",
    "GraphNode",
    "GraphParams",
    "HybridParams",
    "InMemoryTextSearchStore",
    "MetadataEdgeSource",
    "MetadataFilter",
    "Near",
    "Node",
    "Not",
    "Or",
    "Phrase",
    "PorterTokenizer",
    "QueryChip",
    "RangeFilter",
    "SearchDocument",
    "SearchFilter",
    "SearchMode",
    "SearchOutcome",
    "Snippet",
    "Term",
    "TextHit",
    "Token",
    "TokenizedDocument",
    "Tokenizer",
    "Unicode61Tokenizer",
    "backfill_text_index",
    "build_discovery_graph",
    "describe",
    "encode_metadata",
    "filter_graph",
    "fts5_available",
    "is_rankable",
    "label_communities",
    "matches",
    "matches_filters",
    "merge_passages",
    "near_hits",
    "near_occurrences",
    "normalize",
    "normalized_score_fusion",
    "occurrences",
    "parse_query",
    "parse_ranked_query",
    "parse_semantic_query",
    "passage_snippet",
    "porter_stem",
    "reciprocal_rank_fusion",
    "require_rankable",
    "sanitize_text",
    "select_edges",
    "semantic_text",
    "snippet_window",
    "split_markers",
    "stored_record_document",
    "tag_in_range",
    "tag_rows",
    "to_filter_expression",
    "to_match_expression",
    "trim_near",
    "validate_facet_keys",
    "validate_filters",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
