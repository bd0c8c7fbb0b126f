"""The embedder interface: text in, vectors out, without blocking the event loop."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

__all__ = ["AsyncEmbedder"]


class AsyncEmbedder(ABC):
    """Turns texts into dense vectors, one vector per text, in input order.

    Implementations must not block the event loop: run model inference in a worker
    thread or call a service asynchronously. Every failure to embed, such as a model that
    cannot load or a service that is down, raises
    :class:`~sci_etl_core.exceptions.EmbeddingError`.
    """

    @abstractmethod
    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Return one vector per text of ``texts``, in the same order.

        An empty ``texts`` gives an empty list without any work.

        Raises:
            TypeError: An element of ``texts`` is not a string.
            EmbeddingError: The texts could not be embedded.
        """
