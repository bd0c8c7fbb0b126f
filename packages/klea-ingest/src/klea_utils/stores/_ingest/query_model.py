"""The query model's ONNX export after a build, so ``klea-retrieve`` embeds without torch."""

from __future__ import annotations

import logging

__all__ = ["export_query_model"]


def export_query_model(model: str, logger: logging.Logger) -> None:
    """Export the packaged MiniLM to ONNX once, so klea-retrieve embeds queries without torch."""
    from klea_utils.stores.embedding_models import parse_embedding_model
    from klea_utils.stores.packaged_minilm import is_packaged_minilm

    parsed = parse_embedding_model(model)
    if parsed.provider != "huggingface" or not is_packaged_minilm(parsed.model):
        return
    from klea_utils.stores.onnx_minilm import export_minilm_onnx, minilm_onnx_path

    if minilm_onnx_path().is_file():
        return
    try:
        path = export_minilm_onnx()
    except Exception as exc:  # an optional speed-up: never fail the store for it
        logger.warning("could not export the query model to ONNX (%s); queries use torch", exc)
    else:
        logger.info("exported the query embedding model to %s", path)
