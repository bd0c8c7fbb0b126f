"""Retriever store configuration models.

A stores configuration is a JSON document ``{"domains": {name: PerDomainConfig}}``; see
``docs/guides/configuration.md`` for its full shape. :func:`read_retriever_config` reads
one from a file and reports a bad file by naming it and the offending field.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from klea_utils.stores._retrieval.embedding_defaults import DEFAULT_EMBEDDING_MODEL
from klea_utils.stores._retrieval.json_limits import JsonTooDeepError, loads_bounded
from klea_utils.stores._retrieval.store_paths import absolute_store_paths
from klea_utils.stores.exceptions import StoreConfigError
from klea_utils.stores.store_uri import StoreURI
from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator

__all__ = [
    "BM25StoreInfo",
    "FilterFieldInfo",
    "PerDomainConfig",
    "RetrieverConfig",
    "StoreInfo",
    "VectorStoreInfo",
    "read_retriever_config",
]


def _positive(value: int | None, name: str) -> int | None:
    if value is not None and value < 1:
        raise ValueError(f"{name} must be at least 1, got {value}")
    return value


class StoreInfo(BaseModel):
    """Information about a single store used by a retriever manager.

    ``default_k``, ``k_max``, and ``k_inc`` configure retrieval depth per store. When left
    ``None`` they fall back to the global values set on the retriever manager, so stores
    that do not need tuning inherit the graph-wide defaults.

    ``loaded_object`` holds the lazily-instantiated retriever object for the store (e.g.
    a LangChain ``VectorStore`` or ``BM25Retriever``). It is never serialized.

    The ``k`` values must be integers (``true`` is not ``1``). A stores configuration
    *file* with a key no model knows (a typo such as ``defualt_k``) is refused by
    :func:`read_retriever_config`; the models themselves ignore extra keys, as before.
    """

    name: str
    """Store name, unique among the domain's stores of the same kind (keys ``k_values``)."""
    path: str
    """Store location: ``scheme:location`` for vector stores, a corpus path for BM25."""
    default_k: int | None = None
    """Documents retrieved at first; ``None`` inherits the manager's ``default_k``."""
    k_max: int | None = None
    """Upper bound for ``k`` when it grows; ``None`` inherits the manager's ``k_max``."""
    k_inc: int | None = None
    """Step by which ``k`` grows; ``None`` inherits the manager's ``k_inc``."""
    loaded_object: Any | None = Field(default=None, exclude=True)
    """The lazily loaded store object, set by the retriever manager."""

    @field_validator("name", "path")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must be a non-empty string")
        return value

    @field_validator("default_k", "k_max", "k_inc", mode="before")
    @classmethod
    def _not_bool(cls, value: Any, info: Any) -> Any:
        if isinstance(value, bool):
            raise ValueError(f"{info.field_name} must be an integer, got {value!r}")
        return value

    @field_validator("default_k", "k_max", "k_inc")
    @classmethod
    def _at_least_one(cls, value: int | None, info: Any) -> int | None:
        return _positive(value, info.field_name)

    @model_validator(mode="after")
    def _default_within_max(self) -> StoreInfo:
        if self.default_k is not None and self.k_max is not None and self.default_k > self.k_max:
            raise ValueError(f"default_k ({self.default_k}) exceeds k_max ({self.k_max})")
        return self


class VectorStoreInfo(StoreInfo):
    """Information about a single vector store.

    ``path`` is a store URI: ``chroma:/path/to/dir``, ``qdrant:http://host:6333`` (or
    ``qdrant:/local/path``) or ``pgvector:postgresql://host/db``.
    """

    @field_validator("path")
    @classmethod
    def _is_store_uri(cls, value: str) -> str:
        StoreURI.vector(value)
        return value


class BM25StoreInfo(StoreInfo):
    """Information about a single BM25 store.

    ``path`` points to the pickled document corpus that the ``BM25RetrieverManager``
    loads to build its keyword index.
    """

    @field_validator("path")
    @classmethod
    def _is_bm25_path(cls, value: str) -> str:
        StoreURI.bm25(value)
        return value

    stemming: bool | None = None
    """Match words by their Porter stem, so ``inhibits`` finds ``inhibition``.

    A pickled corpus is indexed with
    :func:`klea_utils.stores.langchain_bm25.stemmed_preprocessing_func` unless this is
    ``False`` (``None``, the default, stems: the index is built when the store loads,
    so the choice costs no rebuild). An ``fts5:`` index follows the tokenizer it was
    built with when ``None`` (``klea-stores-create`` builds a new one stemming); ``True``
    or ``False`` must agree with it. Stemming lifts BM25 on SciFact from 0.652 to 0.674
    nDCG@10, the RRF hybrid from 0.680 to 0.71, and the pickled leg on the development
    papers' questions from 30 to 33 of 36 answers in the top 3 (see the
    retrieval-quality benchmark).
    """


class FilterFieldInfo(BaseModel):
    """Configuration for a single retrievable metadata filter field.

    A deployment declares, per domain, the metadata fields the retrieval query generator
    may filter on. Each entry describes one field: its ``name`` (the metadata key stored
    on the documents), its semantics for the LLM, and the operand type it accepts.

    ``value_type`` controls how a bare operand from the LLM is mapped to the filter DSL
    (see :func:`klea_utils.stores.filters.normalize_config_filters`):

    - ``"string"`` / ``"int"`` / ``"float"`` — scalar fields. A bare value becomes
      ``$eq``; a list of values becomes ``$in``.
    - ``"list"`` — element-membership fields (e.g. tags). A bare value becomes
      ``$contains``; several values combine with ``$and`` (every value must be present).
    """

    name: str
    """The metadata key stored on the documents."""
    description: str
    """What the field means, for the LLM that writes the query."""
    value_type: Literal["string", "int", "float", "list"] = "string"
    """The operand type the field accepts."""

    @field_validator("name")
    @classmethod
    def _field_name(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must be a non-empty string")
        if value.startswith("$"):
            raise ValueError(f"filter field name {value!r} cannot start with '$'")
        return value


def _duplicates(names: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    repeated: set[str] = set()
    for name in names:
        (repeated if name in seen else seen).add(name)
    return sorted(repeated)


class PerDomainConfig(BaseModel):
    """Configuration for a single domain."""

    description: str = ""
    """Human-readable description of what the domain covers."""
    vector_stores: list[VectorStoreInfo] = []
    """Vector stores searched for this domain."""
    bm25_stores: list[BM25StoreInfo] = []
    """BM25 keyword stores searched for this domain."""
    filter_fields: list[FilterFieldInfo] = []
    """Retrieval filter fields the query generator may use for this domain."""
    embedding_model: str | None = None
    """The embedding model spec the domain's vector stores were built with, when it is not
    the packaged MiniLM (``klea-stores-create build --embedding-model`` writes it): queries
    are embedded with it unless ``--embedding-model`` names another (see
    :func:`configured_embedding_model`)."""
    citations: str | None = None
    """The domain's citation-links file (``<source>/.klea-cache/<collection>.citations.json``,
    written by ``klea-stores-create build``); relative to the configuration file's folder.
    Optional: without it, or while the file does not exist, a paper has no citations."""

    @model_validator(mode="after")
    def _unique_store_names(self) -> PerDomainConfig:
        for kind, stores in (
            ("vector_stores", self.vector_stores),
            ("bm25_stores", self.bm25_stores),
        ):
            dupes = _duplicates(s.name for s in stores)
            if dupes:
                raise ValueError(f"{kind} has duplicate store names: {', '.join(dupes)}")
        return self


class RetrieverConfig(BaseModel):
    """Top-level retriever configuration.

    Holds the per-domain store configuration for all retriever managers (vector stores
    and BM25 stores).
    """

    domains: dict[str, PerDomainConfig]
    """Domain name to its configuration."""

    @field_validator("domains")
    @classmethod
    def _domain_names(cls, value: dict[str, PerDomainConfig]) -> dict[str, PerDomainConfig]:
        blank = [name for name in value if not name.strip()]
        if blank:
            raise ValueError("domain names must be non-empty strings")
        return value


def configured_embedding_model(config: RetrieverConfig) -> str | None:
    """The one embedding model the domains with vector stores name, ``None`` for none.

    Raises:
        StoreConfigError: Two domains name different models (one query model embeds for
            every domain); the message names the domains and their models.
    """
    named = {
        name: domain.embedding_model
        for name, domain in config.domains.items()
        if domain.vector_stores and domain.embedding_model
    }
    if len(set(named.values())) > 1:
        listed = ", ".join(f"{name}: {model}" for name, model in sorted(named.items()))
        raise StoreConfigError(
            f"the domains' vector stores were built with different embedding models "
            f"({listed}); query them apart, with --domain"
        )
    return next(iter(named.values()), None)


def query_embedding_model(config: RetrieverConfig, asked: str | None) -> str:
    """The model a query is embedded with: ``asked`` (``--embedding-model``), else the one
    ``config``'s domains name (:func:`configured_embedding_model`), else the packaged MiniLM.
    """
    return asked or configured_embedding_model(config) or DEFAULT_EMBEDDING_MODEL


def unknown_config_keys(data: Any) -> list[str]:
    """The dotted paths of keys in a stores configuration document no model knows."""
    if not isinstance(data, dict):
        return []
    unknown = [k for k in data if k not in RetrieverConfig.model_fields]
    domains = data.get("domains")
    for name, domain in domains.items() if isinstance(domains, dict) else ():
        if not isinstance(domain, dict):
            continue
        where = f"domains.{name}"
        unknown += [f"{where}.{k}" for k in domain if k not in PerDomainConfig.model_fields]
        for kind, model in (
            ("vector_stores", VectorStoreInfo),
            ("bm25_stores", BM25StoreInfo),
            ("filter_fields", FilterFieldInfo),
        ):
            items = domain.get(kind)
            for i, item in enumerate(items if isinstance(items, list) else ()):
                known = set(model.model_fields) - {"loaded_object"}
                if isinstance(item, dict):
                    unknown += [f"{where}.{kind}.{i}.{k}" for k in item if k not in known]
    return unknown


def check_config_keys(source: str, data: Any) -> None:
    """Refuse a stores configuration document holding keys no model knows.

    Raises:
        StoreConfigError: Naming ``source`` and every unknown key.
    """
    unknown = unknown_config_keys(data)
    if unknown:
        raise StoreConfigError(
            f"{source}: unknown key(s) {', '.join(unknown)} (a typo? the keys are listed in "
            "the stores configuration guide)"
        )


def _format_errors(source: str, exc: ValidationError) -> str:
    lines = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"]) or "<top level>"
        lines.append(f"{source}: {where}: {error['msg']}")
    return "invalid stores configuration\n" + "\n".join(lines)


def read_retriever_config(path: str | Path) -> RetrieverConfig:
    """Read and validate a stores configuration JSON file (no caching).

    Args:
        path: JSON file holding ``{"domains": {...}}``.

    Returns:
        The parsed configuration; relative local store paths are resolved against the
        file's folder.

    Raises:
        FileNotFoundError: When ``path`` does not exist.
        StoreConfigError: A ``ValueError`` naming the file and the field at fault, when
            the file is not JSON or not a valid configuration.
    """
    file = Path(path)
    text = file.read_text(encoding="utf-8")
    try:
        data = loads_bounded(text)
    except json.JSONDecodeError as exc:
        raise StoreConfigError(
            f"{file}: not valid JSON (line {exc.lineno}, column {exc.colno}): {exc.msg}"
        ) from exc
    except JsonTooDeepError as exc:
        raise StoreConfigError(f"{file}: {exc}") from None
    check_config_keys(str(file), data)
    try:
        config = RetrieverConfig.model_validate(data)
    except ValidationError as exc:
        raise StoreConfigError(_format_errors(str(file), exc)) from exc
    return absolute_store_paths(config, file.expanduser().absolute().parent)
