"""Embeddings that load their model on the first text they embed, and only then."""

from __future__ import annotations

import logging
import threading

from klea_utils.stores._ingest.store.document_embedder import (
    DocumentEmbedder,
    embedder_identity,
    load_document_embedder,
    widened,
)
from klea_utils.stores._ingest.store.early_vectors import EarlyVectors
from langchain_core.embeddings import Embeddings

__all__ = ["LazyEmbeddings"]


class LazyEmbeddings(Embeddings):
    """Load the build's document embedder for ``spec`` on first use.

    A store run whose files are all unchanged embeds nothing, so it never pays for loading
    the model (seconds for a local model, an error for an unreachable one). The model is
    loaded at most once per instance, by
    :func:`~klea_utils.stores._ingest.store.document_embedder.load_document_embedder`:
    onnxruntime for the packaged MiniLM on the CPU, sentence-transformers otherwise.

    Vectors embedded while the build still converted (:attr:`early`, see
    :mod:`~klea_utils.stores._ingest.store.overlap_embedder`) are used instead of embedding
    a text again, when the same embedder (variant and model file) wrote them.

    Args:
        spec: Embedding model spec (``huggingface:...``, ``ollama:...``).
        device: Device for the model; the loader validates it when it loads.
        logger: Where the loader says which embedder it chose when that is news.
    """

    def __init__(
        self, spec: str, device: str = "auto", logger: logging.Logger | None = None
    ) -> None:
        self.spec = spec
        self.device = device
        self.logger = logger or logging.getLogger(__name__)
        self._model: Embeddings | None = None
        self._loading = threading.Lock()  # the store phase's look-ahead thread may load it
        self.variant: str | None = None
        """The variant that embeds (``onnxruntime-fp32``, ``torch``) once loaded."""
        self.identity: str | None = None
        """The variant and its model file, once loaded (see ``embedder_identity``)."""
        self.early: EarlyVectors | None = None
        """Vectors embedded early, looked up before a text is embedded (``None``: none)."""

    @property
    def loaded(self) -> bool:
        """Whether the model has been loaded."""
        return self._model is not None

    def model(self) -> Embeddings:
        """The loaded model (loading it now if this is the first call)."""
        with self._loading:
            if self._model is None:
                embedder = load_document_embedder(self.spec, self.device, self.logger)
                self.variant = embedder.variant
                self.identity = embedder_identity(embedder)
                self._model = embedder.embeddings
            return self._model

    def adopt(self, embedder: DocumentEmbedder) -> bool:
        """Use ``embedder``'s loaded session (run a text per core) instead of loading one.

        For the overlap thread's twin, which :func:`load_document_embedder` would load
        again for the same spec and device (same variant and model file): the store phase
        then opens no second session. Nothing changes once a model is loaded. Returns
        whether it was adopted.
        """
        with self._loading:
            if self._model is not None:
                return False
            wide = widened(embedder)
            self.variant = wide.variant
            self.identity = embedder_identity(wide)
            self._model = wide.embeddings
            return True

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed ``texts`` with the model; a text held in :attr:`early` is not embedded."""
        model = self.model()
        early = self.early
        if early is None or early.identity != self.identity:
            return model.embed_documents(texts)
        held = [early.take(text) for text in texts]
        missing = [text for text, vector in zip(texts, held, strict=True) if vector is None]
        fresh = iter(model.embed_documents(missing) if missing else [])
        return [vector if vector is not None else next(fresh) for vector in held]

    def embed_query(self, text: str) -> list[float]:
        """Embed one query with the model."""
        return self.model().embed_query(text)
