"""The library's papers as ``klea-serve`` reads them: from the stores, on each call.

Modules: ``paper`` (one paper's display fields and facet values), ``grouped`` (papers
grouped in memory from chunk documents), ``sources`` and ``vector_sources`` (one store's
papers: ``fts5:`` indexes, pickled corpora, Chroma, Qdrant, PGVector), ``catalogue``
(every store's papers and facet counts together) and ``opening`` (the catalogue of a
stores configuration).
"""
