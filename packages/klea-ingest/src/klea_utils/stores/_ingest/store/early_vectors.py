"""Vectors embedded while conversion runs, kept for the store phase: keyed by text.

A build's document vector depends on its text alone (the packaged MiniLM on onnxruntime,
one text per run: see :mod:`.document_embedder`), so a vector embedded early, while
conversion workers still convert other files, is the vector the store phase would embed.
:class:`EarlyVectors` holds such vectors for one embedder (:attr:`EarlyVectors.identity`,
the variant and its model file) and hands each out once (:meth:`EarlyVectors.take`): the
store phase's embedder looks every text up before it embeds, and embeds only the misses.

The table lives in memory only (a crash loses it and nothing else; a run again embeds in
the store phase as before), keyed by the SHA-256 of the text, each vector packed as
float32 (1.5 KiB for MiniLM's 384 dimensions, read back to the same Python floats). It
never holds more than ``max_bytes`` of vectors: once full, :meth:`EarlyVectors.put`
refuses, and the texts not held are embedded by the store phase as before.
"""

from __future__ import annotations

import hashlib
import threading
from array import array

__all__ = ["DEFAULT_EARLY_VECTOR_BYTES", "EarlyVectors", "text_key"]

DEFAULT_EARLY_VECTOR_BYTES = 128 * 2**20
"""The most vector bytes held at once: about 87,000 MiniLM vectors (a whole build of the
wild set's 75 files has 11,500 chunks)."""


def text_key(text: str) -> bytes:
    """The table's key for ``text``: its SHA-256 (lone surrogates kept, never an error)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


class EarlyVectors:
    """A thread-safe table of vectors by text for one embedder, at most ``max_bytes``.

    Args:
        identity: The embedder that wrote the vectors (variant and model file); a reader
            embedding with another one must not use them.
        max_bytes: The most vector bytes held at once (at least 0).
    """

    def __init__(self, identity: str, max_bytes: int = DEFAULT_EARLY_VECTOR_BYTES) -> None:
        if max_bytes < 0:
            raise ValueError(f"max_bytes must be >= 0, got {max_bytes}")
        self.identity = identity
        self.max_bytes = max_bytes
        self._vectors: dict[bytes, bytes] = {}
        self._bytes = 0
        self._lock = threading.Lock()
        self.taken = 0
        """How many lookups found their vector."""

    def __len__(self) -> int:
        with self._lock:
            return len(self._vectors)

    def __contains__(self, text: object) -> bool:
        if not isinstance(text, str):
            return False
        with self._lock:
            return text_key(text) in self._vectors

    @property
    def full(self) -> bool:
        """Whether the vectors held take ``max_bytes`` or more."""
        with self._lock:
            return self._bytes >= self.max_bytes

    def put(self, text: str, vector: list[float]) -> bool:
        """Hold ``vector`` for ``text``; ``False`` (not held) when it would pass the cap."""
        packed = array("f", vector).tobytes()
        key = text_key(text)
        with self._lock:
            if key in self._vectors:
                return True
            if self._bytes + len(packed) > self.max_bytes:
                return False
            self._vectors[key] = packed
            self._bytes += len(packed)
            return True

    def take(self, text: str) -> list[float] | None:
        """The vector held for ``text``, removed from the table; ``None`` if none is."""
        with self._lock:
            packed = self._vectors.pop(text_key(text), None)
            if packed is None:
                return None
            self._bytes -= len(packed)
            self.taken += 1
        vector = array("f")
        vector.frombytes(packed)
        return vector.tolist()

    def clear(self) -> None:
        """Drop every vector held."""
        with self._lock:
            self._vectors.clear()
            self._bytes = 0
