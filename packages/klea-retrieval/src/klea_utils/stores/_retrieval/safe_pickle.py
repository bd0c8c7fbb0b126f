"""Reading pickled BM25 corpora without running code from them.

``pickle`` rebuilds objects by calling whatever callables the file names, so a corpus
from someone else could run anything. :class:`CorpusUnpickler` resolves only the names a
corpus of chunks needs: LangChain's ``Document`` (under the module paths LangChain has
pickled it from) and plain built-in containers. Anything else (``os.system``,
``builtins.eval``, a class of another library) stops the load with
:class:`UnsafePickleError`. Lists, dicts, strings, numbers, booleans and ``None`` have
opcodes of their own and need no names at all.
"""

from __future__ import annotations

import pickle
from typing import IO, Any

__all__ = ["ALLOWED_GLOBALS", "CorpusUnpickler", "UnsafePickleError", "safe_load"]

_DOCUMENT_MODULES = (
    "langchain_core.documents.base",
    "langchain_core.documents",
    "langchain.schema.document",
    "langchain.schema",
    "langchain.docstore.document",
)

ALLOWED_GLOBALS: frozenset[tuple[str, str]] = frozenset(
    {(module, "Document") for module in _DOCUMENT_MODULES}
    | {
        ("builtins", name)
        for name in ("set", "frozenset", "list", "dict", "tuple", "bytearray", "complex")
    }
    | {("builtins", "object"), ("copyreg", "_reconstructor")}  # protocol 0/1 objects
)
"""``(module, name)`` pairs a corpus may reference; every other global is refused."""


_PY2_MODULES = {"__builtin__": "builtins", "copy_reg": "copyreg"}


class UnsafePickleError(pickle.UnpicklingError):
    """A pickle referenced a global outside :data:`ALLOWED_GLOBALS`."""


class CorpusUnpickler(pickle.Unpickler):
    """An unpickler that resolves only :data:`ALLOWED_GLOBALS`."""

    def find_class(self, module: str, name: str) -> Any:
        """Resolve ``module.name`` when allowed; raise :class:`UnsafePickleError` otherwise."""
        module = _PY2_MODULES.get(module, module)  # protocols 0-2 write Python 2 names
        if (module, name) not in ALLOWED_GLOBALS:
            raise UnsafePickleError(
                f"refused to load {module}.{name}: a BM25 corpus may hold only LangChain "
                "Document objects and plain built-in values (lists, dicts, strings, numbers)"
            )
        if name == "Document":
            from langchain_core.documents import Document

            return Document
        return super().find_class(module, name)


def safe_load(handle: IO[bytes]) -> Any:
    """Load one pickle from ``handle`` with :class:`CorpusUnpickler`."""
    return CorpusUnpickler(handle).load()
