"""Vector store utilities: store URIs, fusion, re-ranking, reference serialization, text.

A facade: the implementations live in internal modules (``_vector_stores``, ``_fusion``,
``_rerank``, ``_references``, ``_person_names``, ``_config_files``) and are re-exported
here under their documented names.
"""

from __future__ import annotations

import importlib
import logging
from pathlib import Path

from klea_utils.stores._retrieval.config_files import (
    STORES_CONFIG_ENV_VAR,
    STORES_CONFIG_META_KEY,
    _host_stores_config_path,
    load_retriever_config,
    resolve_stores_config_path,
)
from klea_utils.stores._retrieval.fusion import RRF_K, SOURCE_SCORES_KEY, rrf_merge
from klea_utils.stores._retrieval.person_names import display_person_names, expand_person_names
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
from klea_utils.stores._retrieval.text import normalize_text
from klea_utils.stores._retrieval.vector_stores import (
    CHROMA_HNSW_SPACE,
    check_store_target,
    drop_collection,
    instantiate_vector_store,
)
from klea_utils.stores.layout import CACHE_DIR_NAME, TEMPLATE_FILE_NAME

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
    "serialize_reference_material",
    "truncate_reference_material",
]


def find_source_files(
    source_dir: Path,
    *,
    metadata_map_path: Path | None = None,
    store_dir: Path | None = None,
    logger: logging.Logger | None = None,
) -> list[Path]:
    """Walk ``source_dir`` and return the files Docling can convert, sorted.

    The enumeration needs Docling, which ``klea-ingest`` installs: this delegates to
    ``klea_utils.stores.source_files.find_source_files`` (same signature), excluding
    the cache directory (:data:`CACHE_DIR_NAME`), the metadata map and the store folder.

    Raises:
        ImportError: When ``klea-ingest`` is not installed (the message names it).
    """
    try:
        module = importlib.import_module("klea_utils.stores.source_files")
    except ImportError as exc:
        raise ImportError(
            "find_source_files needs Docling, which the klea-ingest distribution provides; "
            "install it with: pip install klea-ingest"
        ) from exc
    result: list[Path] = module.find_source_files(
        source_dir, metadata_map_path=metadata_map_path, store_dir=store_dir, logger=logger
    )
    return result
