"""The build's document embedder: which one writes the vectors, on which device, how wide.

- The packaged MiniLM on the CPU runs through onnxruntime (``onnxruntime-fp32``:
  :class:`~klea_utils.stores.onnx_minilm.OnnxMiniLMEmbeddings` over the ONNX export, made
  once and cached like the query export), its threads set to the cores this process may
  use. Its vectors agree with torch's within cosine 0.999, so a collection may hold
  vectors of both and queries embedded either way find the same chunks.
- ``KLEA_ONNX_DOCUMENTS=int8`` embeds the packaged MiniLM's documents with its int8
  variant instead (``onnxruntime-int8``: :mod:`.int8_minilm`, quantised once and cached
  beside the fp32 export; mean cosine 0.997 to fp32 at about 0.75x its CPU). Not the
  default: its activations are quantised per batch, so a chunk's vector depends slightly
  on the chunks embedded with it. Queries keep the fp32 export.
- ``use:multilingual-v3`` runs its own numpy forward pass on the CPU, whatever the device
  (``numpy``: :class:`~klea_utils.stores.use_multilingual.UseMultilingualEmbeddings`, its
  BLAS threads set to the process's cores); torch is not imported for it.
- Every other model, any CUDA or MPS device, ``KLEA_ONNX_DOCUMENTS=0``, or a machine
  without onnxruntime runs sentence-transformers on torch (``torch``), the last with a
  log line saying so. On the CPU torch's thread count is set here too (never through
  ``OMP_NUM_THREADS``, which tesseract also reads); on CUDA the batch is sized to the
  GPU's free memory (:func:`gpu_batch_size`).

:func:`vectors_key` names the vectors a spec writes, whatever the variant: the store
manifest records it, and a run whose model writes other vectors rebuilds the collection.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

from klea_utils.stores._ingest.store.int8_minilm import quantize_minilm_int8
from klea_utils.stores.embedding_models import (
    Device,
    load_embeddings,
    parse_embedding_model,
)
from klea_utils.stores.exceptions import EmbeddingModelError
from klea_utils.stores.onnx_minilm import (
    OnnxMiniLMEmbeddings,
    available_cores,
    export_minilm_onnx,
    onnx_runtime_available,
)
from klea_utils.stores.packaged_minilm import is_packaged_minilm
from klea_utils.stores.use_multilingual import USE_PROVIDER
from langchain_core.embeddings import Embeddings

__all__ = [
    "ONNX_DOCUMENTS_ENV_VAR",
    "VARIANT_NUMPY",
    "VARIANT_ONNX",
    "VARIANT_ONNX_INT8",
    "VARIANT_TORCH",
    "DocumentEmbedder",
    "embed_device",
    "gpu_batch_size",
    "load_document_embedder",
    "vectors_key",
]

ONNX_DOCUMENTS_ENV_VAR = "KLEA_ONNX_DOCUMENTS"
"""Which embedder writes the packaged MiniLM's document vectors on the CPU: ``0`` torch,
``int8`` the int8 onnxruntime variant, unset (or ``1``, ``fp32``) the fp32 onnxruntime one."""

VARIANT_ONNX = "onnxruntime-fp32"
VARIANT_ONNX_INT8 = "onnxruntime-int8"
_ONNX_CHOICES = {"1": VARIANT_ONNX, "fp32": VARIANT_ONNX, "int8": VARIANT_ONNX_INT8}
VARIANT_TORCH = "torch"
VARIANT_NUMPY = "numpy"

_PACKAGED_KEY = "huggingface:all-MiniLM-L6-v2"
_BYTES_PER_SEQUENCE = 16 * 2**20
"""GPU memory one 256-token MiniLM sequence may take in a forward pass (generous)."""
_GPU_BATCH_RANGE = (32, 1024)


@dataclass(frozen=True)
class DocumentEmbedder:
    """A loaded document embedder and the name of its variant (recorded in the manifest)."""

    embeddings: Embeddings
    variant: str


def vectors_key(spec: str) -> str:
    """The vectors ``spec`` writes: its spec, every name of the packaged MiniLM as one."""
    try:
        parsed = parse_embedding_model(spec)
    except EmbeddingModelError:
        return spec  # not a spec the loader takes: a caller's own ``Embeddings`` names it
    if parsed.provider == "huggingface" and is_packaged_minilm(parsed.model):
        return _PACKAGED_KEY
    return f"{parsed.provider}:{parsed.model}"


def embed_device(device: str) -> str:
    """``device`` for the embedder: ``auto`` is ``cuda`` when torch sees a GPU, else ``cpu``."""
    if device != "auto":
        return device
    from importlib.util import find_spec

    if find_spec("torch") is None:
        return "cpu"
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def gpu_batch_size(free_bytes: int) -> int:
    """Texts per forward pass on a GPU with ``free_bytes`` free: a quarter of it at 16 MiB
    a sequence, a power of two from 32 to 1024."""
    fits = max(1, free_bytes // 4 // _BYTES_PER_SEQUENCE)
    low, high = _GPU_BATCH_RANGE
    return max(low, min(high, 1 << (fits.bit_length() - 1)))


def onnx_document_variant() -> str | None:
    """The onnxruntime variant ``KLEA_ONNX_DOCUMENTS`` asks for (``None``: torch).

    Raises:
        EmbeddingModelError: An unknown value, named with the accepted ones.
    """
    value = os.environ.get(ONNX_DOCUMENTS_ENV_VAR, "1").strip().lower()
    if value == "0":
        return None
    if value not in _ONNX_CHOICES:
        raise EmbeddingModelError(
            f"{ONNX_DOCUMENTS_ENV_VAR}={value!r} is not one of 0, 1, fp32, int8"
        )
    return _ONNX_CHOICES[value]


def _onnx_variant(spec: str, device: str) -> str | None:
    parsed = parse_embedding_model(spec)
    if parsed.provider != "huggingface" or not is_packaged_minilm(parsed.model):
        return None
    return onnx_document_variant() if device == "cpu" else None


def _onnx_embedder(variant: str) -> DocumentEmbedder:
    path = export_minilm_onnx()
    if variant == VARIANT_ONNX_INT8:
        path = quantize_minilm_int8(path)
    return DocumentEmbedder(OnnxMiniLMEmbeddings(path), variant)


def load_document_embedder(spec: str, device: str, logger: logging.Logger) -> DocumentEmbedder:
    """Load the embedder that writes a build's vectors for ``spec`` on ``device``."""
    if parse_embedding_model(spec).provider == USE_PROVIDER:
        return DocumentEmbedder(load_embeddings(spec, device="cpu"), VARIANT_NUMPY)
    resolved = embed_device(device)
    variant = _onnx_variant(spec, resolved)
    if variant is not None:
        if onnx_runtime_available():
            return _onnx_embedder(variant)
        logger.info(
            "onnxruntime is not installed: documents are embedded with torch, about 3x the "
            "CPU (pip install 'klea-retrieval[huggingface]')"
        )
    torch_device = resolved
    if resolved == "cpu" or resolved.startswith("cuda"):
        import torch

        if resolved == "cpu":
            torch.set_num_threads(available_cores())
    model = load_embeddings(spec, device=_loader_device(resolved))
    if resolved.startswith("cuda"):
        batch = _cuda_batch_size(resolved)
        if hasattr(model, "batch_size"):
            model.batch_size = batch
        logger.info("embedding on %s, %d texts per batch", torch_device, batch)
    return DocumentEmbedder(model, VARIANT_TORCH)


def _loader_device(device: str) -> Device:
    return device  # type: ignore[return-value]  # cuda:N and mps are checked by the loader


def _cuda_batch_size(device: str) -> int:
    import torch

    index = int(device.partition(":")[2] or 0)
    free, _total = torch.cuda.mem_get_info(index)
    return gpu_batch_size(int(free))
