"""The parameters of the search operation, shared by the HTTP API and the MCP tools.

Kept apart from :mod:`klea_utils.stores.serve.mcp_tools` so the HTTP routes are built
without importing the MCP SDK (``/mcp`` imports it once the socket is open).
"""

from __future__ import annotations

from klea_utils.stores.serve.search.backend import SearchFilters
from pydantic import BaseModel, ConfigDict, Field

__all__ = ["MAX_K", "SearchFilterArgs"]

MAX_K = 50
"""Largest ``k`` and ``limit`` a request may ask for."""


class SearchFilterArgs(BaseModel):
    """Facet filters for `search`."""

    model_config = ConfigDict(extra="forbid")

    year_from: int | None = Field(default=None, description="Earliest year, inclusive.")
    year_to: int | None = Field(default=None, description="Latest year, inclusive.")
    authors: list[str] = Field(default_factory=list, description="Any of these authors.")
    journals: list[str] = Field(default_factory=list, description="Any of these journals.")
    tags: list[str] = Field(default_factory=list, description="Any of these tags/keywords.")
    collections: list[str] = Field(
        default_factory=list, description="Any of these collections (a Zotero library's)."
    )

    def to_filters(self) -> SearchFilters:
        """As the search backend's filters."""
        return SearchFilters(
            self.year_from,
            self.year_to,
            tuple(self.authors),
            tuple(self.journals),
            tuple(self.tags),
            tuple(self.collections),
        )
