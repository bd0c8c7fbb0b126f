"""Every exception raised by ``klea-retrieval`` (and the root that ``klea-ingest`` extends).

The hierarchy::

    KleaStoresError                  root of everything raised by klea_utils.stores
    ├── StoreConfigError             a stores configuration is missing or invalid (ValueError)
    ├── MetadataFilterError          a metadata filter is malformed (ValueError); the
    │                                message names the clause at fault
    ├── MissingExtraError            an optional backend is not installed (ImportError);
    │                                the message names the extra to install
    ├── EmbeddingModelError          an embedding model spec is unknown or cannot load
    │                                (ValueError)
    ├── StoreBackendError            a vector or BM25 store failed to open, read or write
    ├── CitationsFileError           a citation-links file is malformed (ValueError); the
    │                                message names the file (not its folder) and the field
    ├── ServeAccessError             klea-serve's access settings are unsafe or contradict
    │                                each other: off loopback without a token, an empty
    │                                token file (ValueError)
    └── ServeStartupError            klea-serve's stores or models, loading in the
                                     background after the socket opened, failed to load;
                                     the requests that waited for them get it (RuntimeError)

``klea-ingest`` adds its own subclasses of :class:`KleaStoresError` in
:mod:`klea_utils.stores.ingest_exceptions`.

Each subclass also inherits the builtin it means, so code written against the
original library (which raised plain ``ValueError``/``ImportError``) keeps working.
"""

from __future__ import annotations

__all__ = [
    "CitationsFileError",
    "EmbeddingModelError",
    "KleaStoresError",
    "MetadataFilterError",
    "MissingExtraError",
    "ServeAccessError",
    "ServeStartupError",
    "StoreBackendError",
    "StoreConfigError",
]


class KleaStoresError(Exception):
    """Root of every exception raised by ``klea_utils.stores``."""


class StoreConfigError(KleaStoresError, ValueError):
    """A stores configuration file or value is missing or invalid."""


class CitationsFileError(KleaStoresError, ValueError):
    """A citation-links file is malformed; carries the file's name and the field at fault."""

    def __init__(self, name: str, field: str, reason: str) -> None:
        self.name = name
        self.field = field
        self.reason = reason
        super().__init__(f"{name}: {field}: {reason}")


class MetadataFilterError(KleaStoresError, ValueError):
    """A metadata filter is not well-formed; the message names the clause at fault."""


class MissingExtraError(KleaStoresError, ImportError):
    """An optional dependency is missing; the message names the extra that provides it."""

    def __init__(self, feature: str, extra: str, distribution: str = "klea-retrieval") -> None:
        self.feature = feature
        self.extra = extra
        self.distribution = distribution
        super().__init__(
            f"{feature} needs the optional dependencies of {distribution}[{extra}]; "
            f"install them with: pip install '{distribution}[{extra}]'"
        )


class EmbeddingModelError(KleaStoresError, ValueError):
    """An embedding model spec names an unknown provider, or the model cannot be loaded."""


class StoreBackendError(KleaStoresError):
    """A vector or BM25 store failed to open, read or write; the message names the store."""


class ServeAccessError(KleaStoresError, ValueError):
    """``klea-serve``'s access settings are unsafe or contradict each other.

    Raised before anything loads: a non-loopback ``--host`` without a token or
    ``--no-auth``, a token file that is empty or unreadable, a token that is too short, a
    token given together with ``--no-auth``, a malformed ``--allowed-host`` or
    ``--cors-origin``. The message names the flag at fault.
    """


class ServeStartupError(KleaStoresError, RuntimeError):
    """klea-serve's stores or models failed to load in the background after start-up.

    The message names the original error; requests that waited for the load get it.
    """
