"""Embed one call's texts in several one-thread onnxruntime runs at once.

A build embeds one text per run (:data:`~.document_embedder.TEXTS_PER_RUN`), and a chunk
is short: one run is a few small matrix products, which onnxruntime's intra-op threads
split poorly (with two of them a store phase offered two runnable threads a third of its
time, ``pdf_wild.py --runnable``). So
the store phase's embedder is one session with **one** intra-op thread, and
:class:`ConcurrentRuns` hands each text of a call to one of ``runs`` threads; each thread
runs its text in that session (``InferenceSession.run`` may be called from several threads
at once, and releases the GIL while it runs). Every core then runs a whole text.

A vector is the one the same session gives the text alone, whichever thread ran it and
whatever ran beside it: the vectors are those of one run after another, in any order.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from langchain_core.embeddings import Embeddings

__all__ = ["ConcurrentRuns"]


class ConcurrentRuns(Embeddings):
    """``model`` (one text per run, one intra-op thread) run on ``runs`` threads at once.

    Args:
        model: The embedder; its ``embed_documents`` of one text is one run.
        runs: Texts embedded at once (the cores the build may use); 1 runs them in turn.

    Raises:
        ValueError: ``runs`` below 1.
    """

    def __init__(self, model: Embeddings, runs: int) -> None:
        if runs < 1:
            raise ValueError(f"runs must be >= 1, got {runs}")
        self.model = model
        self.runs = runs
        self.onnx_path: Path | None = getattr(model, "onnx_path", None)
        """The model file (names the embedder, see ``embedder_identity``)."""
        self._pool = (
            ThreadPoolExecutor(max_workers=runs, thread_name_prefix="klea-embed")
            if runs > 1
            else None
        )

    def _one(self, text: str) -> list[float]:
        (vector,) = self.model.embed_documents([text])
        return vector

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed ``texts``, each distinct text once, ``runs`` of them at a time."""
        distinct = list(dict.fromkeys(texts))
        if self._pool is None or len(distinct) < 2:
            return self.model.embed_documents(list(texts))
        vectors = dict(zip(distinct, self._pool.map(self._one, distinct), strict=True))
        return [vectors[text] for text in texts]

    def embed_query(self, text: str) -> list[float]:
        """Embed one query with the model."""
        return self.model.embed_query(text)

    def close(self) -> None:
        """Let the threads end (they end with the process anyway)."""
        if self._pool is not None:
            self._pool.shutdown(wait=False)
