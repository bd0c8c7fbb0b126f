"""Token-aware chunking of converted documents, and the chunk budget.

Chunks follow the document's structure with the rules of Docling's ``HybridChunker``
(:mod:`klea_utils.stores._ingest.doc_chunker` says why it is not imported) and are
counted with the embedding model's own tokenizer (:func:`tokenizer_for`): the packaged
MiniLM's for the default model, the model id or folder for other Hugging Face models,
``BAAI/bge-m3`` for Ollama models (whose tokenizer is not reachable). How a tokenizer is
found, and the fallback to the packaged MiniLM's, is
:mod:`klea_utils.stores._ingest.token_counter`'s job.

Every chunk carries ``page_start`` and ``page_end`` (1-based ints) when its items have page
provenance (PDFs), so a reader can cite the page.
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any

from klea_utils.stores._ingest.doc_chunker import StructureChunker
from klea_utils.stores._ingest.token_counter import load_token_counter, packaged_minilm_path
from klea_utils.stores.ingest_exceptions import ChunkBudgetError
from langchain_core.documents import Document

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "MINILM_MAX_TOKENS",
    "OLLAMA_TOKENIZER",
    "Chunker",
    "chunk_pages",
    "embedding_max_tokens",
    "resolve_max_tokens",
    "tokenizer_for",
]

DEFAULT_MAX_TOKENS = 450
"""Chunk budget when the embedding model reads at least this many tokens (bge-m3 does)."""

OLLAMA_TOKENIZER = "BAAI/bge-m3"
"""Tokenizer used to count chunks for Ollama models, whose own tokenizer is not reachable."""

MINILM_MAX_TOKENS = 256
"""Word pieces all-MiniLM-L6-v2 reads; text past this is truncated by the embedder."""


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
            return str(packaged_minilm_path())
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
        max_tokens: Token budget per chunk (its headings included).
        merge_peers: Merge undersized chunks that share headings.
        tokenizer_model: Hugging Face tokenizer id or folder (fallback: packaged MiniLM).
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
        self.max_tokens = max_tokens
        self.counter = load_token_counter(tokenizer_model, logger)
        self._chunker = StructureChunker(
            self.counter, max_tokens=max_tokens, merge_peers=merge_peers
        )

    def warm_up(self) -> None:
        """Import what chunking needs now rather than on the first document."""
        self._chunker.warm_up()

    def count_tokens(self, text: str) -> int:
        """How many tokens of the chunking tokenizer ``text`` is."""
        return self.counter.count(text)

    def _fit(self, text: str, body: str) -> list[str]:
        """``text`` split at sentence ends (then words) so no piece exceeds ``max_tokens``.

        Normalisation can change a chunk's count by a few tokens after it was cut; the
        embedder would cut those, so the chunk is split instead.
        """
        if self.count_tokens(text) <= self.max_tokens:
            return [text]
        prefix = text[: len(text) - len(body)] if body and text.endswith(body) else ""
        units = [u for u in re.split(r"(?<=[.!?;:])\s+|\n", body) if u.strip()]
        pieces: list[str] = []
        current = ""
        for unit in units:
            candidate = f"{current} {unit}".strip() if current else unit
            if self.count_tokens(prefix + candidate) <= self.max_tokens:
                current = candidate
                continue
            if current:
                pieces.append(prefix + current)
            current = ""
            for word in unit.split():
                candidate = f"{current} {word}".strip()
                if current and self.count_tokens(prefix + candidate) > self.max_tokens:
                    pieces.append(prefix + current)
                    candidate = word
                current = candidate
        if current:
            pieces.append(prefix + current)
        return pieces

    def chunk(self, document: Any, *, file_name: str, file_hash: str) -> list[Document]:
        """Return the chunks of ``document`` with ``file_name``, ``file_hash``, ``headings``.

        PDF chunks also carry ``page_start`` and ``page_end`` (1-based ints).

        ``page_content`` is the contextualized text (heading chain, then the chunk's text)
        passed through ``normalize_text``; ``headings`` lists the heading chain, most
        specific last.
        """
        from klea_utils.stores.utils import normalize_text

        docs: list[Document] = []
        for chunk in self._chunker.chunk(document):
            text = normalize_text(chunk.contextualized()).strip()
            if not text:
                continue
            pieces = self._fit(text, normalize_text(chunk.text).strip())
            metadata: dict[str, Any] = {
                "file_name": file_name,
                "file_hash": file_hash,
                "headings": [normalize_text(h) for h in chunk.headings or ()],
            }
            pages = chunk_pages(chunk.items)
            if pages is not None:
                metadata["page_start"], metadata["page_end"] = pages
            docs.extend(Document(page_content=p, metadata=dict(metadata)) for p in pieces)
        return docs
