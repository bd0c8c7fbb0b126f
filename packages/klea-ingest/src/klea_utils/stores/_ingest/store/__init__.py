"""The store phase: vector runs, BM25 and FTS5 corpora, manifest, lock, progress."""
