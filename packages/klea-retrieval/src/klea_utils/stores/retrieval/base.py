"""The base class of Klea's domain-aware retriever managers."""

from __future__ import annotations

import copy
import logging
import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

from klea_utils.stores.config import RetrieverConfig, StoreInfo
from klea_utils.stores.filters import validate_metadata_filter
from klea_utils.stores.utils import normalize_text
from langchain_core.documents import Document

__all__ = ["BaseKleaRetriever", "KValues"]

KValues = dict[str, dict[str, int]]
"""Current retrieval depth per store: ``{domain: {store_name: k}}``."""


class BaseKleaRetriever(ABC):
    """Base class for domain-aware retriever managers.

    Holds the machinery common to all retrievers: lazy per-domain store loading,
    per-store retrieval depth (k) limits with graph-wide fallbacks, and the retrieval
    contract ``retrieve(domain, query, k_values=...) -> list[tuple[Document, float]]``.

    One manager is shared by all graph threads, so it does not keep the current k: the
    caller keeps it and passes it in. Loading takes a lock per domain, so concurrent
    first retrievals instantiate each store once.

    Subclasses implement :meth:`_stores_of`, :meth:`_instantiate_store` (returning
    ``None`` skips a store that cannot be opened) and :meth:`_retrieve_from_store`.

    Raises:
        ValueError: When ``default_k``, ``k_max`` or ``k_inc`` is below 1, or
            ``default_k`` exceeds ``k_max``.
    """

    source_label: str = "retriever"
    """Human-readable name for this retriever type, used to label scores."""

    def __init__(
        self,
        config: RetrieverConfig,
        logger: logging.Logger,
        default_k: int = 5,
        k_max: int = 10,
        k_inc: int = 1,
    ) -> None:
        for name, value in (("default_k", default_k), ("k_max", k_max), ("k_inc", k_inc)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
        if default_k > k_max:
            raise ValueError(f"default_k ({default_k}) must not exceed k_max ({k_max})")
        self.config = config
        self.logger = logger
        self.default_k = default_k
        self.k_max = k_max
        self.k_inc = k_inc
        self._loaded_domains: set[str] = set()
        self._domain_locks: dict[str, threading.Lock] = {}
        self._locks_guard = threading.Lock()

    @property
    def domains(self) -> list[str]:
        """Get a list of all configured domains."""
        return list(self.config.domains)

    def setup(self) -> None:  # noqa: B027 - a deliberate no-op hook
        """Hook for subclasses to initialise shared resources (no-op by default)."""

    @abstractmethod
    def _stores_of(self, domain_name: str) -> Sequence[StoreInfo]:
        """Return the stores configured for ``domain_name``."""

    @abstractmethod
    def _instantiate_store(self, store: StoreInfo) -> Any | None:
        """Build the retriever object of ``store``, or ``None`` to skip it."""

    @abstractmethod
    def _retrieve_from_store(
        self,
        store: StoreInfo,
        query: str,
        k: int,
        metadata_filter: dict[str, Any] | None,
    ) -> list[tuple[Document, float]]:
        """Run one loaded store against ``query``; ``metadata_filter`` is canonical."""

    # -- per-store k -------------------------------------------------------------------

    def _query_text(self, query: str) -> str:
        """The text the stores are asked: ``query`` normalized (``normalize_text``)."""
        return normalize_text(query)

    def _store_default_k(self, store: StoreInfo) -> int:
        k = store.default_k if store.default_k is not None else self.default_k
        return min(k, self._store_k_max(store))

    def _store_k_max(self, store: StoreInfo) -> int:
        return store.k_max if store.k_max is not None else self.k_max

    def _store_k_inc(self, store: StoreInfo) -> int:
        return store.k_inc if store.k_inc is not None else self.k_inc

    def _current_k(self, k_values: KValues | None, domain: str, store: StoreInfo) -> int:
        if k_values is not None:
            value = k_values.get(domain, {}).get(store.name)
            if value is not None:
                return value
        return self._store_default_k(store)

    def _loaded_stores(self) -> list[tuple[str, StoreInfo]]:
        with self._locks_guard:
            domains = [d for d in self.config.domains if d in self._loaded_domains]
        return [(d, s) for d in domains for s in self._stores_of(d) if s.loaded_object is not None]

    def inc_k(self, k_values: KValues) -> tuple[KValues, bool]:
        """Increase k for all loaded stores by their per-store increment.

        Each store's k is capped by its own ``k_max``. Stores not yet loaded keep their
        value (or their default k) until they are loaded.

        Args:
            k_values: Current k for each store; left unchanged.

        Returns:
            The new k for each store, and True if at least one store's k increased.
        """
        new = copy.deepcopy(k_values)
        increased = False
        for domain, store in self._loaded_stores():
            current = self._current_k(k_values, domain, store)
            grown = min(current + self._store_k_inc(store), self._store_k_max(store))
            new.setdefault(domain, {})[store.name] = max(grown, current)
            increased = increased or grown > current
        return new, increased

    def can_inc_k(self, k_values: KValues) -> bool:
        """Return whether any loaded store still has room to grow k (never mutates)."""
        return any(
            self._current_k(k_values, d, s) < self._store_k_max(s) for d, s in self._loaded_stores()
        )

    # -- loading -----------------------------------------------------------------------

    def _check_domain(self, domain_name: str) -> None:
        if domain_name not in self.config.domains:
            known = ", ".join(sorted(self.config.domains)) or "none"
            raise ValueError(f"unknown domain {domain_name!r}; configured domains: {known}")

    def _domain_lock(self, domain_name: str) -> threading.Lock:
        with self._locks_guard:
            return self._domain_locks.setdefault(domain_name, threading.Lock())

    def load(self, domain_name: str) -> None:
        """Load stores for a domain (lazy loading; thread-safe, idempotent).

        Raises:
            ValueError: When the domain is not configured.
        """
        self._check_domain(domain_name)
        with self._domain_lock(domain_name):
            with self._locks_guard:
                if domain_name in self._loaded_domains:
                    return
            for store in self._stores_of(domain_name):
                if store.loaded_object is None:
                    store.loaded_object = self._instantiate_store(store)
            with self._locks_guard:
                self._loaded_domains.add(domain_name)

    def load_all_stores(self) -> None:
        """Load all stores for all domains."""
        for domain in self.domains:
            self.load(domain)

    # -- retrieval ---------------------------------------------------------------------

    def retrieve(
        self,
        domain_name: str,
        query: str,
        metadata_filter: dict[str, Any] | None = None,
        k_values: KValues | None = None,
    ) -> list[tuple[Document, float]]:
        """Retrieve documents from all stores for a domain.

        Args:
            domain_name: Name of the domain to search in.
            query: User query string (normalized with ``normalize_text``).
            metadata_filter: Optional filter in the DSL (see
                ``klea_utils.stores.filters.validate_metadata_filter``).
            k_values: Current k for each store; unlisted stores use their default.

        Returns:
            ``(document, relevance_score)`` tuples, each store's results best first,
            stores in configuration order.

        Raises:
            ValueError: Unknown domain or malformed filter.
        """
        results: list[tuple[Document, float]] = []
        for _, hits in self.retrieve_per_store(domain_name, query, metadata_filter, k_values):
            results.extend(hits)
        return results

    def retrieve_per_store(
        self,
        domain_name: str,
        query: str,
        metadata_filter: dict[str, Any] | None = None,
        k_values: KValues | None = None,
    ) -> list[tuple[str, list[tuple[Document, float]]]]:
        """Like :meth:`retrieve`, keeping each loaded store's ranked list apart.

        Returns ``(label, hits)`` per loaded store, in configuration order. The label is
        :attr:`source_label`, or ``"<source_label>: <store name>"`` when the domain has
        several stores of this kind, so each list can be fused on its own ranks.
        """
        canonical = validate_metadata_filter(metadata_filter) if metadata_filter else None
        self.load(domain_name)
        text = self._query_text(query)
        stores = list(self._stores_of(domain_name))
        out: list[tuple[str, list[tuple[Document, float]]]] = []
        for store in stores:
            if store.loaded_object is None:
                continue
            k = self._current_k(k_values, domain_name, store)
            label = self.source_label if len(stores) == 1 else f"{self.source_label}: {store.name}"
            out.append((label, self._retrieve_from_store(store, text, k, canonical)))
        return out
