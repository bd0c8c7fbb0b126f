"""What klea-serve loads, and what one request may ask of it.

Plain values, checked when built; the command line builds them from its flags, a program
embedding the service builds them itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from klea_utils.stores._retrieval.context import DEFAULT_CONTEXT_TOKENS
from klea_utils.stores._retrieval.embedding_defaults import DEFAULT_EMBEDDING_MODEL
from klea_utils.stores.config import RetrieverConfig

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings

__all__ = ["ServeLimits", "ServeOptions"]


@dataclass(frozen=True)
class ServeLimits:
    """The limits one ``klea-serve`` puts on each request, with their defaults."""

    max_body_bytes: int = 1 << 20
    """Largest request body (1 MiB): larger answers 413."""
    max_query_chars: int = 4096
    """Longest query or question, in characters: longer answers 422."""
    max_list_items: int = 64
    """Most items in a list parameter (domains, authors, facet keys, ...)."""
    max_item_chars: int = 512
    """Longest item of such a list (a domain, an author, a record id)."""
    max_concurrent: int = 64
    """Most requests in progress at once: past it a request answers 503."""

    def __post_init__(self) -> None:
        for name in (
            "max_body_bytes",
            "max_query_chars",
            "max_list_items",
            "max_item_chars",
            "max_concurrent",
        ):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive whole number, got {value!r}")

    def check_query(self, query: str, field: str = "query") -> None:
        """Raise ``ValueError`` naming ``field`` when ``query`` is over the length limit."""
        if len(query) > self.max_query_chars:
            raise ValueError(
                f"{field} has {len(query)} characters; at most {self.max_query_chars} are accepted"
            )


@dataclass(frozen=True)
class ServeOptions:
    """What ``klea-serve`` loads: stores, models, the search index and vector memory."""

    config: RetrieverConfig
    embedding_model: str | Embeddings = DEFAULT_EMBEDDING_MODEL
    rerank: str | None = None
    k: int = 5
    fts5_index: Path | None = None
    vectors: Path | None = None
    leg_timeout: float | None = 20.0
    max_chars: int = 12_000
    context: str | None = None
    """How ``retrieve`` widens passages unless a request says (``None``: the pipeline's
    default, ``neighbours``)."""
    context_tokens: int = DEFAULT_CONTEXT_TOKENS
    """Token budget of a widened passage."""
    limits: ServeLimits = field(default_factory=ServeLimits)
    """What one request may ask: body size, query length, list lengths, concurrency."""
    papers: Path | None = None
    """The folder the stores were built from: page images and the original files of its
    papers are served from it (``None``: they answer 404)."""
