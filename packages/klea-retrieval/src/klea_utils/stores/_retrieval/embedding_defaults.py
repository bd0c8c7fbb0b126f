"""The default embedding model spec, importable without any embedding library.

:mod:`klea_utils.stores.embedding_models` (which loads LangChain's ``Embeddings``) documents
and re-exports it; :class:`~klea_utils.stores.pipeline.KleaPipeline` takes its default from
here, so a pipeline over keyword stores alone never imports the embedding side.
"""

from __future__ import annotations

__all__ = ["DEFAULT_EMBEDDING_MODEL"]

DEFAULT_EMBEDDING_MODEL = "huggingface:all-MiniLM-L6-v2"
"""The default embedding model: the packaged, offline all-MiniLM-L6-v2 (384 dimensions)."""
