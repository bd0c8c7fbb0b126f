"""Every exception raised by ``klea-ingest``.

The hierarchy extends the root of ``klea-retrieval``
(:class:`klea_utils.stores.exceptions.KleaStoresError`)::

    KleaStoresError
    └── IngestError                  ingestion could not complete a step
        ├── ConversionError          one source file could not be converted or chunked;
        │   │                        carries ``path`` and a reason
        │   └── OcrUnavailableError  a scanned PDF needs OCR and no OCR engine is installed
        ├── ChunkBudgetError         max_tokens is more than the embedding model reads
        │                            (ValueError)
        ├── ChunkCacheError          the chunk cache cannot be read or written
        ├── EmbeddingError           one file's chunks could not be embedded while others
        │                            were converted; carries ``file_name`` (RuntimeError)
        ├── CollectionBusyError      another run holds the collection's lock
        ├── MetadataMapError         a metadata map is missing, malformed or lacks a file
        │                            (ValueError)
        ├── ReferenceLibraryError    a reference-manager library (.bib, CSL-JSON, Zotero
        │                            folder) cannot be read; carries ``path`` (ValueError)
        ├── SourceLayoutError        the source folder cannot be ingested as laid out, such
        │                            as two files with the same name (ValueError)
        ├── CitationLinksError       a citation-links file cannot be read: names the file
        │                            and the field (ValueError)
        └── ClusterError             the Ray cluster cannot be joined or cannot start the
            │                        workers (RuntimeError)
            └── RayUnavailableError  Ray is not installed: klea-ingest[ray] (ImportError)
"""

from __future__ import annotations

from pathlib import Path

from klea_utils.stores.exceptions import KleaStoresError

__all__ = [
    "ChunkBudgetError",
    "ChunkCacheError",
    "CitationLinksError",
    "ClusterError",
    "CollectionBusyError",
    "ConversionError",
    "EmbeddingError",
    "IngestError",
    "MetadataMapError",
    "OcrUnavailableError",
    "RayUnavailableError",
    "ReferenceLibraryError",
    "SourceLayoutError",
]


class IngestError(KleaStoresError):
    """An ingestion step could not complete."""


class ChunkBudgetError(IngestError, ValueError):
    """An explicit ``max_tokens`` is more than the embedding model reads (not forced)."""


class ConversionError(IngestError):
    """One source file could not be converted or chunked."""

    def __init__(self, path: str | Path, reason: str) -> None:
        self.path = Path(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")


class OcrUnavailableError(ConversionError):
    """A PDF needs OCR, and neither Docling's OCR models nor tesseract are available."""


class ChunkCacheError(IngestError):
    """The chunk cache under ``<source>/.klea-cache`` cannot be read or written."""


class EmbeddingError(IngestError, RuntimeError):
    """A converted file's chunks could not be embedded (by the build's embedding thread).

    Names the file by its name only, never its folder; the conversion is cached, so a run
    again resumes from the store phase.
    """

    def __init__(self, file_name: str, reason: str) -> None:
        self.file_name = file_name
        self.reason = reason
        super().__init__(f"{file_name}: its chunks could not be embedded: {reason}")


class CollectionBusyError(IngestError):
    """Another ``build`` or ``store`` of the same collection is running (its lock is held)."""

    def __init__(self, lock_path: str | Path, collection: str) -> None:
        self.lock_path = Path(lock_path)
        self.collection = collection
        super().__init__(
            f"collection {collection!r} is being built by another run (lock {self.lock_path} "
            "is held); wait for it to finish and run again"
        )


class MetadataMapError(IngestError, ValueError):
    """A metadata map is missing, malformed, or has no entry for a source file."""


class ReferenceLibraryError(IngestError, ValueError):
    """A reference-manager library (``--bib`` or ``--zotero``) cannot be read or parsed."""

    def __init__(self, path: str | Path, reason: str) -> None:
        self.path = Path(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")


class CitationLinksError(IngestError, ValueError):
    """A citation-links file is malformed; carries the file's name and the field at fault."""

    def __init__(self, name: str, field: str, reason: str) -> None:
        self.name = name
        self.field = field
        self.reason = reason
        super().__init__(f"{name}: {field}: {reason}")


class SourceLayoutError(IngestError, ValueError):
    """The source folder cannot be ingested as laid out (e.g. two files share a name)."""


class ClusterError(IngestError, RuntimeError):
    """The Ray cluster cannot be joined, or cannot start the conversion or embedding workers."""


class RayUnavailableError(ClusterError, ImportError):
    """Ray is not installed; the ``ray`` extra of ``klea-ingest`` provides it."""
