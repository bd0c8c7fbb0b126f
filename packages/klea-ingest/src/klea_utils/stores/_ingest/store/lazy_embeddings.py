"""Embeddings that load their model on the first text they embed, and only then."""

from __future__ import annotations

from typing import cast

from klea_utils.stores.embedding_models import Device, load_embeddings
from langchain_core.embeddings import Embeddings

__all__ = ["LazyEmbeddings"]


class LazyEmbeddings(Embeddings):
    """Load ``spec`` with :func:`~klea_utils.stores.embedding_models.load_embeddings` on first use.

    A store run whose files are all unchanged embeds nothing, so it never pays for loading
    the model (seconds for a local model, an error for an unreachable one). The model is
    loaded at most once per instance.

    Args:
        spec: Embedding model spec (``huggingface:...``, ``ollama:...``).
        device: Device for the model; ``load_embeddings`` validates it when it loads.
    """

    def __init__(self, spec: str, device: str = "auto") -> None:
        self.spec = spec
        self.device = device
        self._model: Embeddings | None = None

    @property
    def loaded(self) -> bool:
        """Whether the model has been loaded."""
        return self._model is not None

    def model(self) -> Embeddings:
        """The loaded model (loading it now if this is the first call)."""
        if self._model is None:
            # load_embeddings raises EmbeddingModelError for a device it does not take.
            self._model = load_embeddings(self.spec, device=cast(Device, self.device))
        return self._model

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed ``texts`` with the model."""
        return self.model().embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        """Embed one query with the model."""
        return self.model().embed_query(text)
