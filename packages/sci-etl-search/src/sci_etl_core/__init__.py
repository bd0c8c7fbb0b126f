"""sci_etl_core: the search core of the sci-etl tools.

Subpackages:

- :mod:`sci_etl_core.search`: Boolean, hybrid and graph search (standard library only).
- :mod:`sci_etl_core.embeddings`: embedders, vector memories, chunking (extra ``local``
  for the sentence-transformers embedder).
- :mod:`sci_etl_core.ingest_protocol`: the protocol an ingestion pipeline calls.
- :mod:`sci_etl_core.exceptions`: every exception this distribution raises.
"""

__version__ = "0.1.0"
