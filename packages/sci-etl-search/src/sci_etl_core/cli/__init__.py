"""The ``sci-etl-search`` command line: index, search, facets, graph, backfill, maintain.

Run it as ``sci-etl-search`` or ``python -m sci_etl_core.cli``; it needs the extra
``sci-etl-search[cli]`` (Typer and Rich). Importing this package loads neither.
"""
