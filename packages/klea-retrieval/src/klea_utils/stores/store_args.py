"""Stores named on a command line (or in a config file) as one checked ``RetrieverConfig``.

Commands that query stores (``klea-retrieve``, ``klea-serve``) take them three ways:

- ``--stores-config FILE``: a stores configuration; relative store paths in it are
  resolved against the file's folder;
- ``--store COLLECTION=URI`` (repeatable) and ``--bm25-store PATH`` or
  ``--bm25-store fts5:PATH`` (repeatable): stores given directly, gathered into one
  domain (:data:`DIRECT_DOMAIN`); relative paths are resolved against the current folder;
- neither: the file named by ``KLEA_STORES_CONFIG_FILE``.

:func:`retriever_config_from_args` turns them into a validated ``RetrieverConfig`` and
checks that every local store exists, so a wrong path is reported before a model loads.
:func:`retrieve_command` writes the ``klea-retrieve`` command line for built stores.

Public: ``klea-stores-create`` (klea-ingest) prints that line after a build.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path

from klea_utils.stores._retrieval.config_files import STORES_CONFIG_ENV_VAR, load_retriever_config
from klea_utils.stores._retrieval.store_paths import (
    absolute_store_paths,
    local_store_path,
    map_store_paths,
    store_path_problems,
)
from klea_utils.stores.config import (
    BM25StoreInfo,
    PerDomainConfig,
    RetrieverConfig,
    VectorStoreInfo,
)
from klea_utils.stores.exceptions import StoreConfigError
from klea_utils.stores.store_uri import VECTOR_SCHEMES, StoreURI
from pydantic import ValidationError

__all__ = [
    "DIRECT_DOMAIN",
    "StoreArgsError",
    "direct_stores_config",
    "parse_bm25_store_arg",
    "parse_vector_store_arg",
    "retrieve_command",
    "retrieve_command_for",
    "retriever_config_from_args",
    "write_stores_config",
]

DIRECT_DOMAIN = "default"
"""Domain that holds the stores given with ``--store`` and ``--bm25-store``."""

_COLLECTION = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


class StoreArgsError(StoreConfigError):
    """The stores were given wrongly on the command line (a usage error: exit status 2)."""


def parse_vector_store_arg(text: str) -> VectorStoreInfo:
    """Read one ``--store COLLECTION=URI`` value (``papers=chroma:stores/chroma``).

    A relative local location is made absolute against the current folder.

    Raises:
        StoreArgsError: The value has no collection, no scheme or an unknown scheme.
    """
    name, sep, uri = text.partition("=")
    if not sep or not _COLLECTION.fullmatch(name):
        raise StoreArgsError(
            f"--store {text!r}: expected COLLECTION=URI, e.g. papers=chroma:stores/chroma"
        )
    try:
        StoreURI.vector(uri)
    except StoreConfigError:
        raise StoreArgsError(
            f"--store {text!r}: the URI must start with one of "
            f"{', '.join(s + ':' for s in VECTOR_SCHEMES)} followed by a location"
        ) from None
    return VectorStoreInfo(name=name, path=uri)


def parse_bm25_store_arg(text: str, name: str | None = None) -> BM25StoreInfo:
    """Read one ``--bm25-store`` value: a pickled corpus path, or ``fts5:`` and an index path.

    The store is named after the file (``papers.bm25`` -> ``papers.bm25``) unless ``name``
    is given.

    Raises:
        StoreArgsError: The value is empty.
    """
    try:
        location = StoreURI.bm25(text).location
    except StoreConfigError:
        raise StoreArgsError(f"--bm25-store {text!r}: expected a file path or fts5:PATH") from None
    file_name = Path(location).name
    return BM25StoreInfo(name=name or (file_name if file_name.strip() else location), path=text)


def _unique_names(stores: list[BM25StoreInfo]) -> list[BM25StoreInfo]:
    seen: dict[str, int] = {}
    out = []
    for store in stores:
        count = seen.get(store.name, 0)
        seen[store.name] = count + 1
        out.append(
            store if count == 0 else store.model_copy(update={"name": f"{store.name}-{count + 1}"})
        )
    return out


def direct_stores_config(
    stores: Sequence[str] = (),
    bm25_stores: Sequence[str] = (),
    *,
    description: str = "",
    domain_name: str = DIRECT_DOMAIN,
) -> RetrieverConfig:
    """Return the configuration of stores given as ``--store`` and ``--bm25-store`` values.

    They form one domain (``domain_name``, :data:`DIRECT_DOMAIN` by default); relative local
    paths are made absolute against the current folder. Nothing is checked on disk.
    """
    vector = [parse_vector_store_arg(s) for s in stores]
    bm25 = _unique_names([parse_bm25_store_arg(s) for s in bm25_stores])
    try:
        per_domain = PerDomainConfig(
            description=description or "stores given on the command line",
            vector_stores=vector,
            bm25_stores=bm25,
        )
    except ValidationError as exc:
        messages = "; ".join(str(err["msg"]) for err in exc.errors())
        raise StoreArgsError(f"--store: {messages}") from exc
    config = RetrieverConfig(domains={domain_name: per_domain})
    return absolute_store_paths(config, Path.cwd())


def _config_file(
    stores_config: str | Path | None, environ: Mapping[str, str]
) -> tuple[Path, str] | None:
    if stores_config is not None:
        return Path(stores_config), "--stores-config"
    value = environ.get(STORES_CONFIG_ENV_VAR, "").strip()
    if value:
        return Path(value), f"environment variable {STORES_CONFIG_ENV_VAR}"
    return None


def retriever_config_from_args(
    stores_config: str | Path | None = None,
    stores: Sequence[str] = (),
    bm25_stores: Sequence[str] = (),
    *,
    domains: Sequence[str] | None = None,
    environ: Mapping[str, str] | None = None,
    check_paths: bool = True,
) -> RetrieverConfig:
    """Return the checked stores configuration that command-line arguments describe.

    Args:
        stores_config: ``--stores-config``: a stores configuration file.
        stores: ``--store`` values, ``COLLECTION=URI`` each.
        bm25_stores: ``--bm25-store`` values, a corpus path or ``fts5:PATH`` each.
        domains: ``--domain`` values; each must be in the configuration, and only their
            stores are checked (default: every domain).
        environ: Where ``KLEA_STORES_CONFIG_FILE`` is read (default: ``os.environ``); it
            is used only when neither a file nor stores are given.
        check_paths: Check that every local store exists (nothing is opened).

    Raises:
        StoreArgsError: No stores at all, a file and direct stores together, a malformed
            ``--store`` value or an unknown domain.
        FileNotFoundError: The configuration file does not exist.
        StoreConfigError: The file is invalid, or local stores are missing (one line each,
            naming the domain, the store and the path).
    """
    if stores_config is not None and (stores or bm25_stores):
        raise StoreArgsError("give either --stores-config or --store/--bm25-store, not both")
    if stores or bm25_stores:
        config = direct_stores_config(stores, bm25_stores)
        origin = "the stores given"
    else:
        found = _config_file(stores_config, os.environ if environ is None else environ)
        if found is None:
            raise StoreArgsError(
                "no stores: give --stores-config FILE, or --store COLLECTION=URI and/or "
                f"--bm25-store PATH, or set {STORES_CONFIG_ENV_VAR}"
            )
        path, origin = found
        config = load_retriever_config(path.expanduser().absolute())
        origin = f"{origin} {str(path)!r}"
    unknown = [d for d in domains or () if d not in config.domains]
    if unknown:
        known = ", ".join(repr(d) for d in config.domains) or "none"
        raise StoreArgsError(f"unknown domain {unknown[0]!r} in {origin}; the domains are {known}")
    if check_paths:
        problems = store_path_problems(config, list(domains) if domains else None)
        if problems:
            raise StoreConfigError(f"{origin}: " + "; ".join(problems))
    return config


def retrieve_command_for(config: RetrieverConfig, *, query: str = "your question") -> str:
    """Return the ``klea-retrieve`` command querying every store of ``config``'s domains
    (with ``--embedding-model`` when the domains name the model their vectors were built with).
    """
    from klea_utils.stores.config import configured_embedding_model

    vector = [(s.name, s.path) for d in config.domains.values() for s in d.vector_stores]
    bm25 = [s.path for d in config.domains.values() for s in d.bm25_stores]
    model = configured_embedding_model(config)
    return retrieve_command(vector, bm25, query=query, embedding_model=model)


def retrieve_command(
    vector_stores: Sequence[tuple[str, str]] = (),
    bm25_stores: Sequence[str | Path] = (),
    *,
    query: str = "your question",
    embedding_model: str | None = None,
) -> str:
    """Return a shell-quoted ``klea-retrieve`` command querying the given stores.

    Args:
        vector_stores: ``(collection, uri)`` pairs.
        bm25_stores: Corpus paths and ``fts5:PATH`` values.
        query: The question shown in the command.
        embedding_model: The ``--embedding-model`` to pass, if any.
    """
    words = ["klea-retrieve"]
    if embedding_model:
        words += ["--embedding-model", embedding_model]
    for collection, uri in vector_stores:
        words += ["--store", f"{collection}={uri}"]
    for bm25 in bm25_stores:
        words += ["--bm25-store", str(bm25)]
    words.append(query)
    return shlex.join(words)


def _portable(path: str, folder: Path, *, vector: bool) -> str:
    local = local_store_path(path, vector=vector)
    if local is None:
        return path
    prefix, location = local
    try:
        return f"{prefix}{location.relative_to(folder)}"
    except ValueError:
        return path


def write_stores_config(path: str | Path, config: RetrieverConfig) -> Path:
    """Write ``config`` as a stores configuration file at ``path``; return the path.

    Local stores inside the file's folder are written relative to it (the loader resolves
    them against that folder), so the folder can be moved as a whole.
    """
    target = Path(path).expanduser().absolute()
    folder = target.parent
    new = map_store_paths(config, lambda path, vector: _portable(path, folder, vector=vector))
    folder.mkdir(parents=True, exist_ok=True)
    text = new.model_dump_json(indent=2, exclude_none=True, exclude_defaults=True)
    target.write_text(text + "\n", encoding="utf-8")
    return target
