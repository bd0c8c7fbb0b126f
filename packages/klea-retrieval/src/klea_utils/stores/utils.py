"""Vector store utilities: store URIs, fusion, re-ranking, reference serialization, text.

A facade under the seed's names: the implementations live in the private modules
``_retrieval.vector_stores``, ``_retrieval.fusion``, ``_retrieval.rerank``,
``_retrieval.references`` and ``_retrieval.config_files``, and in the public modules
:mod:`klea_utils.stores.person_names`, :mod:`klea_utils.stores.text`,
:mod:`klea_utils.stores.source_listing` and :mod:`klea_utils.stores.layout`.
"""

from __future__ import annotations

from klea_utils.stores._retrieval.config_files import (
    STORES_CONFIG_ENV_VAR,
    STORES_CONFIG_META_KEY,
    _host_stores_config_path,
    load_retriever_config,
    resolve_stores_config_path,
)
from klea_utils.stores._retrieval.fusion import RRF_K, SOURCE_SCORES_KEY, rrf_merge, rrf_merge_legs
from klea_utils.stores._retrieval.references import (
    REF_DOC_OVERHEAD,
    serialize_reference_material,
    truncate_reference_material,
)
from klea_utils.stores._retrieval.rerank import (
    DEFAULT_CROSS_ENCODER_MODEL,
    RECENCY_MISSING_YEAR_SCORE,
    RECENCY_WEIGHT_RELEVANCE,
    RECENCY_WEIGHT_TIME,
    cross_encoder_rerank,
    load_cross_encoder,
    rerank_by_recency,
)
from klea_utils.stores._retrieval.vector_stores import (
    CHROMA_HNSW_SPACE,
    check_store_target,
    drop_collection,
    instantiate_vector_store,
)
from klea_utils.stores.layout import CACHE_DIR_NAME, TEMPLATE_FILE_NAME
from klea_utils.stores.person_names import display_person_names, expand_person_names
from klea_utils.stores.source_listing import find_source_files
from klea_utils.stores.text import normalize_text

__all__ = [
    "CACHE_DIR_NAME",
    "CHROMA_HNSW_SPACE",
    "DEFAULT_CROSS_ENCODER_MODEL",
    "RECENCY_MISSING_YEAR_SCORE",
    "RECENCY_WEIGHT_RELEVANCE",
    "RECENCY_WEIGHT_TIME",
    "REF_DOC_OVERHEAD",
    "RRF_K",
    "SOURCE_SCORES_KEY",
    "STORES_CONFIG_ENV_VAR",
    "STORES_CONFIG_META_KEY",
    "TEMPLATE_FILE_NAME",
    "_host_stores_config_path",
    "check_store_target",
    "cross_encoder_rerank",
    "display_person_names",
    "drop_collection",
    "expand_person_names",
    "find_source_files",
    "instantiate_vector_store",
    "load_cross_encoder",
    "load_retriever_config",
    "normalize_text",
    "rerank_by_recency",
    "resolve_stores_config_path",
    "rrf_merge",
    "rrf_merge_legs",
    "serialize_reference_material",
    "truncate_reference_material",
]
