"""``klea-serve``: one resident process serving the stores to agents (MCP) and people (a page).

Installed with the ``serve`` extra (``pip install 'klea-retrieval[serve]'``: the MCP Python
SDK, FastAPI and uvicorn); nothing here is imported by the rest of ``klea_utils.stores``.
The names below are the public API; each is imported on first use, so importing the package
(and ``klea-serve --help``) loads none of the extra.

The package has rooms: ``core/`` (the :class:`Service` protocol, its options, and the
parameters of its operations), ``papers/`` (the library's papers read from the stores),
``search/`` (sci-etl-search over an FTS5 index), ``operations/`` (:class:`KleaService` over
stores loaded once), ``lifecycle/`` (answering while the stores load, and reloading them),
the transports ``mcp_tools`` (the MCP server) and ``http/`` (the JSON API, the page and MCP
over HTTP), and ``cli`` (the ``klea-serve`` command). A room imports only the rooms listed
before it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # For type checkers: "X as X" marks each name as re-exported. isort would split these
    # into one statement per name, so it is kept out of this block.
    # isort: off
    from klea_utils.stores.serve.core.options import (
        ServeLimits as ServeLimits,
        ServeOptions as ServeOptions,
    )
    from klea_utils.stores.serve.core.params import (
        SearchFilters as SearchFilters,
        SearchParams as SearchParams,
    )
    from klea_utils.stores.serve.core.service import (
        DocumentNotFoundError as DocumentNotFoundError,
        Service as Service,
    )
    from klea_utils.stores.serve.http.access import (
        AccessPolicy as AccessPolicy,
        access_policy as access_policy,
    )
    from klea_utils.stores.serve.http.app import build_app as build_app
    from klea_utils.stores.serve.lifecycle.reload import LiveService as LiveService
    from klea_utils.stores.serve.lifecycle.startup import StartingService as StartingService
    from klea_utils.stores.serve.mcp_tools import build_mcp_server as build_mcp_server
    from klea_utils.stores.serve.operations.klea_service import KleaService as KleaService
    from klea_utils.stores.serve.operations.opening import open_service as open_service
    # isort: on

_EXPORTS: dict[str, tuple[str, ...]] = {
    "core.options": ("ServeOptions", "ServeLimits"),
    "core.service": ("Service", "DocumentNotFoundError"),
    "core.params": ("SearchParams", "SearchFilters"),
    "operations.klea_service": ("KleaService",),
    "operations.opening": ("open_service",),
    "lifecycle.startup": ("StartingService",),
    "lifecycle.reload": ("LiveService",),
    "mcp_tools": ("build_mcp_server",),
    "http.access": ("AccessPolicy", "access_policy"),
    "http.app": ("build_app",),
}
"""The public names, by the module that defines them: the one list of this package's
exports. ``__all__`` and the lazy loader below are derived from it; the imports above are
for type checkers only, and a test keeps them equal to this table."""

_MODULE_OF: dict[str, str] = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = sorted(_MODULE_OF)


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_MODULE_OF))
