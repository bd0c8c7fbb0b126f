"""sci-etl-search for ``klea-serve``: Boolean and hybrid search over an FTS5 index.

Modules: ``backend`` (the index, the hybrid searcher and the graph's edges) and
``grouping`` (passage hits folded into one card per paper).
"""
