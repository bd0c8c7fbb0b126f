"""Embedders, vector memories, chunking and similar-article search.

``sci_etl_core.embeddings`` itself imports nothing heavy: NumPy and
sentence-transformers are loaded only by the sentence-transformers embedder
(extra ``local``).
"""
