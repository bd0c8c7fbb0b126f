"""Import an optional dependency, or fail with an error that names the extra to install."""

from __future__ import annotations

import importlib
from types import ModuleType

from klea_utils.stores.exceptions import MissingExtraError


def import_extra(
    module: str, *, feature: str, extra: str, distribution: str = "klea-retrieval"
) -> ModuleType:
    """Import ``module``; raise :class:`MissingExtraError` naming ``extra`` when it is absent."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtraError(feature, extra, distribution) from exc
