"""The parameters of ``search``: one model for the HTTP API, the MCP tool and the service.

:class:`SearchParams` is what a search asks (the query, how to run it, how many hits, how
to group them) and :class:`SearchFilters` its facet filters. The service's ``search``
takes a :class:`SearchParams`; the MCP tool declares its arguments with these types and
descriptions and builds one; ``GET /api/search`` reads one from its query string
(:mod:`klea_utils.stores.serve.http.search_query`). The limits a server sets on lengths
(:class:`~klea_utils.stores.serve.core.options.ServeLimits`) are declared by each
transport; the model holds what every server accepts.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["MAX_K", "Grouping", "SearchFilters", "SearchMode", "SearchParams"]

MAX_K = 50
"""Largest ``k`` and ``limit`` a request may ask for."""

SearchMode = Literal["lexical", "semantic", "hybrid"]
"""How a search runs: keywords only, by meaning only, or both fused."""

Grouping = Literal["passage", "paper"]
"""What a search answers: one hit per passage, or one card per paper."""


class SearchFilters(BaseModel):
    """Facet filters of a search: a year range and values of author, journal, tag, collection,
    language."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    year_from: int | None = Field(default=None, description="Earliest year, inclusive.")
    year_to: int | None = Field(default=None, description="Latest year, inclusive.")
    authors: tuple[str, ...] = Field(default=(), description="Any of these authors.")
    journals: tuple[str, ...] = Field(default=(), description="Any of these journals.")
    tags: tuple[str, ...] = Field(default=(), description="Any of these tags/keywords.")
    collections: tuple[str, ...] = Field(
        default=(), description="Any of these collections (a Zotero library's)."
    )
    languages: tuple[str, ...] = Field(
        default=(), description="Any of these chunk languages (ISO 639-1 codes, e.g. zh, fa)."
    )


class SearchParams(BaseModel):
    """One search: its query, mode, number of hits, facet filters and grouping."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    query: str = Field(
        description='Boolean query (AND, OR, NOT, "phrase", title:word, pre*) or a plain '
        "question (searched as the OR of its words)."
    )
    mode: SearchMode | None = Field(
        default=None, description="Default: hybrid with a vector memory, else lexical."
    )
    limit: int = Field(default=10, ge=1, le=MAX_K, description="Hits to return.")
    filters: SearchFilters = Field(default_factory=SearchFilters)
    any_words: bool | None = Field(
        default=None,
        description="Search the query as the OR of its words: always (true), never (false), "
        "or when it reads as a plain question (default).",
    )
    group: Grouping = Field(
        default="passage",
        description="`paper`: one entry per paper (its best passages under it), `limit` "
        "papers; `passage`: one hit per passage.",
    )
