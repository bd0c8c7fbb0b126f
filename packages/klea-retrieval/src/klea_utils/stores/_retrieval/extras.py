"""Import an optional dependency, or fail with an error that names the extra to install."""

from __future__ import annotations

import importlib
import importlib.util
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


def require_extra(
    module: str, *, feature: str, extra: str, distribution: str = "klea-retrieval"
) -> None:
    """Check that ``module`` is installed without importing it (a large SDK is imported
    later, where it is used); raise :class:`MissingExtraError` naming ``extra`` when not.
    """
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # ValueError: the module is set to None in sys.modules
        found = False
    if not found:
        raise MissingExtraError(feature, extra, distribution)
