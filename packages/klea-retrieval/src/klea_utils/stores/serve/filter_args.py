"""The typed filters of ``retrieve`` and ``search``, shared by the HTTP API and the MCP tools.

Kept apart from :mod:`klea_utils.stores.serve.mcp_tools` so the HTTP routes are built
without importing the MCP SDK (``/mcp`` imports it once the socket is open).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from klea_utils.stores.serve.search import SearchFilters
from pydantic import BaseModel, ConfigDict, Field, create_model

if TYPE_CHECKING:
    from klea_utils.stores.serve.service import KleaService

__all__ = ["SearchFilterArgs", "filter_model"]


def filter_model(service: KleaService) -> type[BaseModel]:
    """The typed ``filter`` of ``retrieve``: the query schema without its query field."""
    schema = service.query_schema
    fields: dict[str, Any] = {
        name: (info.annotation, Field(default=None, description=info.description))
        for name, info in schema.model_fields.items()
        if name != "search_query"
    }
    return create_model(
        "RetrieveFilter",
        __config__=ConfigDict(extra="forbid"),
        __doc__="Metadata constraints; leave out what the question does not constrain.",
        **fields,
    )


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
