"""Embeddings computed on a Ray cluster by workers that load the model once (``--ray-embed``).

:class:`RayEmbeddings` is a LangChain ``Embeddings`` the store phase uses like any other:
the vector store calls ``embed_documents`` for each batch it adds, the batch is split
across the embedding workers (Ray actors holding one CPU, and one GPU on a CUDA run, so
Ray places them on GPU nodes; each loads the build's document embedder, onnxruntime for
the packaged MiniLM on a CPU worker),
and the vectors come back to the driver, which writes the store. Nothing about the store
changes, only where the model runs. A worker that dies is replaced and its part sent
again once.
"""

from __future__ import annotations

import logging
from typing import Any

from langchain_core.embeddings import Embeddings

__all__ = ["RayEmbeddingWorker", "RayEmbeddings"]


class RayEmbeddingWorker:
    """Holds one loaded embedding model; one instance per Ray actor."""

    def __init__(self, spec: str, device: str) -> None:
        from klea_utils.stores._ingest.store.document_embedder import load_document_embedder

        embedder = load_document_embedder(spec, device, logging.getLogger(__name__))
        self.model = embedder.embeddings
        self.variant = embedder.variant

    def embedder_variant(self) -> str:
        """The variant this worker embeds with (``onnxruntime-fp32``, ``torch``)."""
        return self.variant

    def embed(self, texts: list[str]) -> list[list[float]]:
        """Embed ``texts`` as documents."""
        return [list(map(float, v)) for v in self.model.embed_documents(texts)]

    def embed_query(self, text: str) -> list[float]:
        """Embed one query."""
        return [float(x) for x in self.model.embed_query(text)]


class RayEmbeddings(Embeddings):
    """Embed on the Ray cluster at ``address`` with the model ``spec``.

    Args:
        spec: Embedding model spec (``huggingface:...``), loaded on every worker's host.
        address: Ray address (``auto``, ``local``, ``host:port``).
        device: Device of the run; a CUDA device asks Ray for one GPU per worker.
        logger: Logger for the connection line.
        workers: Embedding workers to start (default: the cluster's GPUs on a CUDA run,
            else its CPUs).
    """

    def __init__(
        self,
        spec: str,
        address: str,
        *,
        device: str = "auto",
        logger: logging.Logger | None = None,
        workers: int | None = None,
    ) -> None:
        if workers is not None and workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        self.spec = spec
        self.address = address
        self.device = device
        self.logger = logger or logging.getLogger(__name__)
        self.workers = workers
        self._ray: Any = None
        self._actors: list[Any] = []
        self.variant: str | None = None
        """``ray/<variant>`` of the workers once they run (recorded in the store manifest)."""

    def _pool(self) -> list[Any]:
        if not self._actors:
            from klea_utils.stores._ingest.workers.ray_cluster import (
                actor_options,
                connect,
                worker_device,
                worker_slots,
            )

            self._ray = connect(self.address, self.logger)
            count = self.workers or worker_slots(self._ray, self.device)
            remote = self._ray.remote(RayEmbeddingWorker).options(**actor_options(self.device))
            self._actors = [
                remote.remote(self.spec, worker_device(self.device)) for _ in range(count)
            ]
            variant = self._ray.get(self._actors[0].embedder_variant.remote())
            self.variant = f"ray/{variant}"
        return self._actors

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed ``texts`` split across the workers; vectors in ``texts`` order."""
        if not texts:
            return []
        try:
            return self._embed(texts)
        except Exception as exc:
            if self._ray is None or not isinstance(exc, self._ray.exceptions.RayActorError):
                raise
            self.logger.warning("A Ray embedding worker died (%s); restarting them once", exc)
            self.close()
            return self._embed(texts)

    def _embed(self, texts: list[str]) -> list[list[float]]:
        actors = self._pool()
        size = -(-len(texts) // len(actors))
        parts = [texts[i : i + size] for i in range(0, len(texts), size)]
        refs = [actor.embed.remote(part) for actor, part in zip(actors, parts, strict=False)]
        vectors: list[list[float]] = []
        for part_vectors in self._ray.get(refs):
            vectors.extend(part_vectors)
        return vectors

    def embed_query(self, text: str) -> list[float]:
        """Embed one query on the first worker."""
        vector: list[float] = self._ray.get(self._pool()[0].embed_query.remote(text))
        return vector

    def close(self) -> None:
        """Stop the embedding workers (new ones start on the next call)."""
        for actor in self._actors:
            self._ray.kill(actor)
        self._actors = []
