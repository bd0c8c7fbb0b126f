"""Boolean, hybrid and graph search over scholarly records, in the standard library only.

Every public name of the submodules is importable from here. Names are imported on first
use, so ``import sci_etl_core.search`` stays cheap and loads nothing outside the standard
library; type checkers see ordinary imports.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # For type checkers: "X as X" marks each name as re-exported. isort would split these
    # into one statement per name, so it is kept out of this block.
    # isort: off
    from sci_etl_core.search.backfill_async import (
        BackfillReport as BackfillReport,
        backfill_text_index as backfill_text_index,
        merge_passages as merge_passages,
        stored_record_document as stored_record_document,
    )
    from sci_etl_core.search.compile_fts5 import (
        FILTER_LEAF as FILTER_LEAF,
        is_rankable as is_rankable,
        require_rankable as require_rankable,
        to_filter_expression as to_filter_expression,
        to_match_expression as to_match_expression,
    )
    from sci_etl_core.search.edges import (
        AsyncEdgeSource as AsyncEdgeSource,
        EmbeddingEdgeSource as EmbeddingEdgeSource,
        MetadataEdgeSource as MetadataEdgeSource,
    )
    from sci_etl_core.search.evaluate import (
        TokenizedDocument as TokenizedDocument,
        matches as matches,
        near_hits as near_hits,
        near_occurrences as near_occurrences,
        occurrences as occurrences,
        trim_near as trim_near,
    )
    from sci_etl_core.search.filters import (
        SNIPPET_CLOSE as SNIPPET_CLOSE,
        SNIPPET_ELLIPSIS as SNIPPET_ELLIPSIS,
        SNIPPET_OPEN as SNIPPET_OPEN,
        SNIPPET_TOKENS as SNIPPET_TOKENS,
        MetadataFilter as MetadataFilter,
        RangeFilter as RangeFilter,
        SearchFilter as SearchFilter,
        encode_metadata as encode_metadata,
        matches_filters as matches_filters,
        sanitize_text as sanitize_text,
        split_markers as split_markers,
        tag_in_range as tag_in_range,
        tag_rows as tag_rows,
        validate_facet_keys as validate_facet_keys,
        validate_filters as validate_filters,
    )
    from sci_etl_core.search.fusion import (
        FusedHit as FusedHit,
        FusionParams as FusionParams,
        FusionStrategy as FusionStrategy,
        normalized_score_fusion as normalized_score_fusion,
        reciprocal_rank_fusion as reciprocal_rank_fusion,
    )
    from sci_etl_core.search.graph import (
        DiscoveryGraph as DiscoveryGraph,
        GraphEdge as GraphEdge,
        GraphNode as GraphNode,
        GraphParams as GraphParams,
        build_discovery_graph as build_discovery_graph,
        filter_graph as filter_graph,
        label_communities as label_communities,
        select_edges as select_edges,
    )
    from sci_etl_core.search.hybrid_async import (
        SEARCH_MODES as SEARCH_MODES,
        AsyncHybridSearcher as AsyncHybridSearcher,
        HybridParams as HybridParams,
        SearchMode as SearchMode,
        SearchOutcome as SearchOutcome,
    )
    from sci_etl_core.search.index_async import (
        AsyncSearchIndexer as AsyncSearchIndexer,
    )
    from sci_etl_core.search.multiscript import (
        MULTISCRIPT_RULES_VERSION as MULTISCRIPT_RULES_VERSION,
        MultiscriptTokenizer as MultiscriptTokenizer,
        shadow_query as shadow_query,
        shadow_text as shadow_text,
    )
    from sci_etl_core.search.parser import (
        MAX_GROUP_DEPTH as MAX_GROUP_DEPTH,
        parse_query as parse_query,
        parse_ranked_query as parse_ranked_query,
        parse_semantic_query as parse_semantic_query,
    )
    from sci_etl_core.search.query import (
        FIELDS as FIELDS,
        NEAR_DISTANCE as NEAR_DISTANCE,
        And as And,
        Near as Near,
        Node as Node,
        Not as Not,
        Or as Or,
        Phrase as Phrase,
        QueryChip as QueryChip,
        Term as Term,
        describe as describe,
        normalize as normalize,
        semantic_text as semantic_text,
    )
    from sci_etl_core.search.questions import (
        FUNCTION_WORDS as FUNCTION_WORDS,
        QUESTION_STOP_WORDS as QUESTION_STOP_WORDS,
        QUESTION_WORDS as QUESTION_WORDS,
        question_query as question_query,
        question_words as question_words,
        reads_as_question as reads_as_question,
    )
    from sci_etl_core.search.snippets import (
        passage_snippet as passage_snippet,
        snippet_window as snippet_window,
    )
    from sci_etl_core.search.stemming import (
        FTS5_PORTER_TOKENIZE as FTS5_PORTER_TOKENIZE,
        PorterTokenizer as PorterTokenizer,
        porter_stem as porter_stem,
    )
    from sci_etl_core.search.store_base import (
        AsyncTextSearchStore as AsyncTextSearchStore,
        BM25Weights as BM25Weights,
        SearchDocument as SearchDocument,
        Snippet as Snippet,
        TextHit as TextHit,
    )
    from sci_etl_core.search.store_memory import (
        InMemoryTextSearchStore as InMemoryTextSearchStore,
    )
    from sci_etl_core.search.store_sqlite_fts5 import (
        AsyncSqliteFts5Store as AsyncSqliteFts5Store,
        fts5_available as fts5_available,
    )
    from sci_etl_core.search.tokenize import (
        FTS5_MAX_TOKEN_BYTES as FTS5_MAX_TOKEN_BYTES,
        SURROGATE_CODE_POINTS as SURROGATE_CODE_POINTS,
        Token as Token,
        Tokenizer as Tokenizer,
        Unicode61Tokenizer as Unicode61Tokenizer,
    )
    # isort: on

_EXPORTS: dict[str, tuple[str, ...]] = {
    "query": (
        "FIELDS",
        "NEAR_DISTANCE",
        "Term",
        "Phrase",
        "Near",
        "And",
        "Or",
        "Not",
        "Node",
        "QueryChip",
        "normalize",
        "describe",
        "semantic_text",
    ),
    "parser": (
        "MAX_GROUP_DEPTH",
        "parse_query",
        "parse_ranked_query",
        "parse_semantic_query",
    ),
    "questions": (
        "FUNCTION_WORDS",
        "QUESTION_WORDS",
        "QUESTION_STOP_WORDS",
        "question_words",
        "question_query",
        "reads_as_question",
    ),
    "tokenize": (
        "Token",
        "Tokenizer",
        "Unicode61Tokenizer",
        "SURROGATE_CODE_POINTS",
        "FTS5_MAX_TOKEN_BYTES",
    ),
    "stemming": (
        "PorterTokenizer",
        "porter_stem",
        "FTS5_PORTER_TOKENIZE",
    ),
    "multiscript": (
        "MultiscriptTokenizer",
        "shadow_text",
        "shadow_query",
        "MULTISCRIPT_RULES_VERSION",
    ),
    "evaluate": (
        "TokenizedDocument",
        "matches",
        "occurrences",
        "near_occurrences",
        "trim_near",
        "near_hits",
    ),
    "compile_fts5": (
        "FILTER_LEAF",
        "is_rankable",
        "require_rankable",
        "to_match_expression",
        "to_filter_expression",
    ),
    "filters": (
        "MetadataFilter",
        "RangeFilter",
        "SearchFilter",
        "tag_in_range",
        "validate_filters",
        "validate_facet_keys",
        "matches_filters",
        "tag_rows",
        "encode_metadata",
        "sanitize_text",
        "split_markers",
        "SNIPPET_OPEN",
        "SNIPPET_CLOSE",
        "SNIPPET_ELLIPSIS",
        "SNIPPET_TOKENS",
    ),
    "store_base": (
        "SearchDocument",
        "Snippet",
        "TextHit",
        "BM25Weights",
        "AsyncTextSearchStore",
    ),
    "store_memory": ("InMemoryTextSearchStore",),
    "store_sqlite_fts5": (
        "AsyncSqliteFts5Store",
        "fts5_available",
    ),
    "snippets": (
        "snippet_window",
        "passage_snippet",
    ),
    "index_async": ("AsyncSearchIndexer",),
    "backfill_async": (
        "BackfillReport",
        "merge_passages",
        "stored_record_document",
        "backfill_text_index",
    ),
    "fusion": (
        "FusedHit",
        "FusionParams",
        "FusionStrategy",
        "reciprocal_rank_fusion",
        "normalized_score_fusion",
    ),
    "hybrid_async": (
        "SearchMode",
        "SEARCH_MODES",
        "HybridParams",
        "SearchOutcome",
        "AsyncHybridSearcher",
    ),
    "graph": (
        "GraphNode",
        "GraphEdge",
        "DiscoveryGraph",
        "GraphParams",
        "select_edges",
        "label_communities",
        "filter_graph",
        "build_discovery_graph",
    ),
    "edges": (
        "AsyncEdgeSource",
        "MetadataEdgeSource",
        "EmbeddingEdgeSource",
    ),
}
"""The public names, by the submodule that defines them: the one list of this package's
exports. ``__all__`` and the lazy loader below are derived from it; the imports above are
for type checkers only, and a test keeps them equal to this table."""

_MODULE_OF: dict[str, str] = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = sorted(_MODULE_OF)


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_MODULE_OF))
