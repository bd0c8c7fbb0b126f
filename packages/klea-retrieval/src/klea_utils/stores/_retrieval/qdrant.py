"""Qdrant specifics: deterministic point ids, local-mode clients, metadata-prefixed filters.

Qdrant accepts only unsigned integers or UUIDs as point ids, while Klea's chunk ids are
readable ``<file_name>:<chunk_index>`` strings. :class:`KleaQdrantVectorStore` maps every
string id to :func:`qdrant_point_id` (a UUIDv5) and keeps the readable id in the point
payload under :data:`READABLE_ID_PAYLOAD_KEY`, so ``delete(ids=[readable ids])`` and
``get_by_ids`` keep working, and returned documents carry the readable id.

LangChain stores document metadata under the ``metadata`` payload key; the filters that
``klea_utils.stores.filters.translate_metadata_filter`` returns for ``qdrant:`` paths use
``metadata.<field>`` keys accordingly.
"""

from __future__ import annotations

import atexit
import contextlib
import threading
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from langchain_core.documents import Document
from langchain_qdrant import QdrantVectorStore
from qdrant_client import QdrantClient, models

__all__ = [
    "KLEA_QDRANT_NAMESPACE",
    "READABLE_ID_PAYLOAD_KEY",
    "KleaQdrantVectorStore",
    "local_qdrant_client",
    "qdrant_point_id",
]

KLEA_QDRANT_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://klea/stores/qdrant-point-id")
"""Namespace of the UUIDv5 point ids derived from readable chunk ids."""

READABLE_ID_PAYLOAD_KEY = "doc_id"
"""Top-level payload key holding a point's readable ``<file_name>:<chunk_index>`` id."""

_LOCAL_CLIENTS: dict[str, QdrantClient] = {}
_LOCAL_LOCK = threading.Lock()


def qdrant_point_id(doc_id: str | int) -> str | int:
    """Return the Qdrant point id for a readable id: UUIDv5 for strings, ints unchanged."""
    if isinstance(doc_id, int) and not isinstance(doc_id, bool):
        return doc_id
    return str(uuid.uuid5(KLEA_QDRANT_NAMESPACE, str(doc_id)))


def local_qdrant_client(path: str | Path) -> QdrantClient:
    """Return the process-wide local-mode client for ``path``.

    Qdrant's local mode locks its folder, so a second client on the same folder in one
    process would fail: every store on that folder shares one client.
    """
    key = str(Path(path).expanduser().resolve())
    with _LOCAL_LOCK:
        client = _LOCAL_CLIENTS.get(key)
        if client is None:
            Path(key).mkdir(parents=True, exist_ok=True)
            client = QdrantClient(path=key)
            _LOCAL_CLIENTS[key] = client
        return client


@atexit.register
def _close_local_clients() -> None:
    """Close every shared local-mode client while the interpreter can still run their code.

    Left to ``QdrantClient.__del__`` at interpreter teardown, closing fails noisily
    ("sys.meta_path is None") and leaves the folder's lock file open.
    """
    with _LOCAL_LOCK:
        clients = list(_LOCAL_CLIENTS.values())
        _LOCAL_CLIENTS.clear()
    for client in clients:
        with contextlib.suppress(Exception):
            client.close()


def close_local_qdrant_client(path: str | Path) -> None:
    """Close and forget the shared local-mode client for ``path`` (no-op when none)."""
    key = str(Path(path).expanduser().resolve())
    with _LOCAL_LOCK:
        client = _LOCAL_CLIENTS.pop(key, None)
    if client is not None:
        client.close()


class KleaQdrantVectorStore(QdrantVectorStore):
    """``QdrantVectorStore`` addressing points by readable ids (see the module docstring)."""

    def add_texts(  # type: ignore[override]
        self,
        texts: Iterable[str],
        metadatas: list[dict[str, Any]] | None = None,
        ids: Sequence[str | int] | None = None,
        batch_size: int = 64,
        **kwargs: Any,
    ) -> list[str | int]:
        """Embed and upsert ``texts``; ``ids`` are readable ids (random hex when absent)."""
        texts = list(texts)
        readable = [str(i) for i in ids] if ids is not None else [uuid.uuid4().hex for _ in texts]
        if len(readable) != len(texts):
            raise ValueError(f"got {len(readable)} ids for {len(texts)} texts")
        metas = metadatas if metadatas is not None else [{} for _ in texts]
        for start in range(0, len(texts), batch_size):
            batch = texts[start : start + batch_size]
            batch_ids = readable[start : start + batch_size]
            payloads = self._build_payloads(
                batch,
                metas[start : start + batch_size],
                self.content_payload_key,
                self.metadata_payload_key,
            )
            points = [
                models.PointStruct(
                    id=qdrant_point_id(rid),
                    vector=vector,
                    payload={**payload, READABLE_ID_PAYLOAD_KEY: rid},
                )
                for rid, vector, payload in zip(
                    batch_ids, self._build_vectors(batch), payloads, strict=True
                )
            ]
            self.client.upsert(collection_name=self.collection_name, points=points, **kwargs)
        return list(readable)

    def delete(  # type: ignore[override]
        self, ids: list[str | int] | None = None, **kwargs: Any
    ) -> bool | None:
        """Delete the points of the given readable ids."""
        if not ids:
            return True
        return super().delete(ids=[qdrant_point_id(i) for i in ids], **kwargs)

    def get_by_ids(self, ids: Sequence[str | int], /) -> list[Document]:
        """Return the documents of the given readable ids."""
        return super().get_by_ids([qdrant_point_id(i) for i in ids])

    @classmethod
    def _document_from_point(
        cls,
        scored_point: Any,
        collection_name: str,
        content_payload_key: str,
        metadata_payload_key: str,
    ) -> Document:
        payload = scored_point.payload or {}
        readable = payload.get(READABLE_ID_PAYLOAD_KEY, scored_point.id)
        metadata = dict(payload.get(metadata_payload_key) or {})
        metadata["_id"] = readable
        metadata["_collection_name"] = collection_name
        return Document(
            id=str(readable),
            page_content=payload.get(content_payload_key, ""),
            metadata=metadata,
        )


def ensure_qdrant_collection(client: QdrantClient, name: str, dimension: int) -> None:
    """Create collection ``name`` (unnamed dense cosine vector) unless it exists."""
    if not client.collection_exists(name):
        client.create_collection(
            collection_name=name,
            vectors_config={
                "": models.VectorParams(size=dimension, distance=models.Distance.COSINE)
            },
        )
