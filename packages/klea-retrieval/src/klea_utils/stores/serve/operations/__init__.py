"""``klea-serve``'s operations over the stores, loaded once.

Modules: ``klea_service``
(:class:`~klea_utils.stores.serve.operations.klea_service.KleaService`) and ``opening``
(:func:`~klea_utils.stores.serve.operations.opening.open_service`, which loads it).
"""
