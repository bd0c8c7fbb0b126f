"""``klea-serve``'s services over time: answering while the stores load, and reloading them.

Modules: ``startup`` (:class:`~klea_utils.stores.serve.lifecycle.startup.StartingService`)
and ``reload`` (:class:`~klea_utils.stores.serve.lifecycle.reload.LiveService`).
"""
