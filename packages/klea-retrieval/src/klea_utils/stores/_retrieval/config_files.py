"""Loading stores configuration files, and resolving which one a request uses."""

from __future__ import annotations

import functools
import json
import logging
import os
import threading
from pathlib import Path

from klea_utils.stores._retrieval.json_limits import JsonTooDeepError, loads_bounded
from klea_utils.stores._retrieval.store_paths import absolute_store_paths
from klea_utils.stores.config import RetrieverConfig, check_config_keys
from klea_utils.stores.exceptions import StoreConfigError
from pydantic import ValidationError

__all__ = [
    "STORES_CONFIG_ENV_VAR",
    "STORES_CONFIG_META_KEY",
    "load_retriever_config",
    "resolve_stores_config_path",
]

STORES_CONFIG_ENV_VAR = "KLEA_STORES_CONFIG_FILE"
"""Environment variable naming the deployment-default stores configuration file."""

STORES_CONFIG_META_KEY = "klea/stores-config-path/v1"
"""Versioned request-metadata key carrying the stores-configuration JSON path."""

_logger = logging.getLogger("klea_utils.stores.utils")
_CACHE: dict[Path, tuple[int, int, RetrieverConfig]] = {}
_CACHE_LOCK = threading.Lock()


def load_retriever_config(path: str | Path) -> RetrieverConfig:
    """Load (and cache) the ``RetrieverConfig`` stored in ``path``.

    The cache is keyed by the resolved path and invalidated when the file's mtime or
    size changes. Relative local store paths in the file (``chroma:stores/papers``,
    ``papers.bm25``, ``fts5:papers.sqlite``) are resolved against the file's folder.

    Raises:
        FileNotFoundError: When ``path`` does not exist.
        StoreConfigError: (a ``ValueError``) when the file is not valid JSON or not a
            valid configuration; the message names the file and the field at fault.
    """
    resolved = Path(path).expanduser().resolve()
    if not resolved.exists():
        raise FileNotFoundError(f"stores configuration {str(resolved)!r} does not exist")
    stat = resolved.stat()
    with _CACHE_LOCK:
        hit = _CACHE.get(resolved)
    if hit is not None and hit[0] == stat.st_mtime_ns and hit[1] == stat.st_size:
        return hit[2]
    config = _parse(resolved)
    with _CACHE_LOCK:
        _CACHE[resolved] = (stat.st_mtime_ns, stat.st_size, config)
    return config


def _parse(path: Path) -> RetrieverConfig:
    try:
        data = loads_bounded(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, JsonTooDeepError) as exc:
        raise StoreConfigError(
            f"stores configuration {str(path)!r} is not valid JSON: {exc}"
        ) from exc
    check_config_keys(f"stores configuration {str(path)!r}", data)
    try:
        config = RetrieverConfig.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}"
            for err in exc.errors()
        )
        raise StoreConfigError(
            f"stores configuration {str(path)!r} is invalid: {problems}"
        ) from exc
    return absolute_store_paths(config, path.parent)


def _validated(value: str | Path, source: str) -> Path:
    text = str(value)
    if not text.strip():
        raise StoreConfigError(f"{source}: the stores configuration path is empty")
    if any(c in text for c in "\n\r\x00"):
        raise StoreConfigError(f"{source}: {text!r} is not exactly one path")
    path = Path(text)
    if not path.is_absolute():
        raise StoreConfigError(f"{source}: {text!r} is not an absolute path")
    if not path.exists():
        raise StoreConfigError(f"{source}: {text!r} does not exist")
    if not path.is_file():
        raise StoreConfigError(f"{source}: {text!r} is not a regular file")
    try:
        load_retriever_config(path)
    except (OSError, ValueError) as exc:
        raise StoreConfigError(f"{source}: {exc}") from exc
    return path


@functools.cache
def _host_stores_config_path() -> str | None:
    """Read :data:`STORES_CONFIG_ENV_VAR` once per process (``cache_clear`` re-reads)."""
    value = os.environ.get(STORES_CONFIG_ENV_VAR)
    return value if value else None


def resolve_stores_config_path(configured: str | Path | None = None) -> Path | None:
    """Resolve the path of the stores configuration JSON file.

    Precedence: ``configured`` (the request's path), then the deployment default named
    by :data:`STORES_CONFIG_ENV_VAR` (read once per process), validated the same way.
    Fail closed: with neither, ``None`` is returned and a warning naming both
    :data:`STORES_CONFIG_META_KEY` and the environment variable is logged.

    Raises:
        ValueError: When the path in use is empty, relative, missing, not a regular
            file, or not a valid stores configuration.
    """
    if configured is not None:
        return _validated(configured, f"request metadata {STORES_CONFIG_META_KEY!r}")
    host = _host_stores_config_path()
    if host is not None:
        return _validated(host, f"environment variable {STORES_CONFIG_ENV_VAR}")
    _logger.warning(
        "no stores configuration: the request carries no %r and %s is not set",
        STORES_CONFIG_META_KEY,
        STORES_CONFIG_ENV_VAR,
    )
    return None
