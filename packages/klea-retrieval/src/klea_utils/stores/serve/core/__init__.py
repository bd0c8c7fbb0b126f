"""What every room of ``klea-serve`` shares: its options and the parameters of its operations.

Modules: ``options`` (what is loaded, and the limits on each request), ``params`` (the
search parameters), ``retrieve_filter`` (the typed filter of ``retrieve``) and
``public_errors`` (what a caller is told of a failure). Nothing here imports another
room.
"""
