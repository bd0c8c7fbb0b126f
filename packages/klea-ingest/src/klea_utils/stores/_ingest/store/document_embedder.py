"""The build's document embedder: which one writes the vectors, on which device, how wide.

- The packaged MiniLM on the CPU runs through onnxruntime, **one text per run**
  (:data:`TEXTS_PER_RUN`): no padding, and a chunk's vector depends only on its text,
  never on the chunks embedded beside it, so rebuilds, Ray builds and local builds store
  the same vectors. Its session has one intra-op thread, and as many texts as the process
  has cores run at once (:class:`~.concurrent_runs.ConcurrentRuns`): a short text's run
  is split poorly over threads, a text per core keeps every core busy.
- By default its int8 variant writes the vectors (``onnxruntime-int8``: :mod:`.int8_minilm`,
  quantised once and cached beside the fp32 export; mean cosine 0.997 to fp32 on real
  chunks at about 0.7x its CPU). Its activations are quantised with scales taken from the
  tensor they scale, which is one text's alone. ``KLEA_ONNX_DOCUMENTS=fp32`` embeds with
  the fp32 export instead (``onnxruntime-fp32``:
  :class:`~klea_utils.stores.onnx_minilm.OnnxMiniLMEmbeddings`, within cosine 0.999 of
  torch). Either way queries keep the fp32 export, and a collection may hold vectors of
  every variant: queries embedded any way find the same chunks.
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
:func:`load_overlap_embedder` gives the one-thread twin a build embeds with while it still
converts (only where vectors depend on their text alone: the onnxruntime variants), and
:func:`embedder_identity` names an embedder so vectors embedded early are used only by the
same one.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

from klea_utils.stores._ingest.store.concurrent_runs import ConcurrentRuns
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
    "GPU_DEVICE_FILES",
    "ONNX_DOCUMENTS_ENV_VAR",
    "TEXTS_PER_RUN",
    "VARIANT_NUMPY",
    "VARIANT_ONNX",
    "VARIANT_ONNX_INT8",
    "VARIANT_TORCH",
    "DocumentEmbedder",
    "embed_device",
    "embedder_identity",
    "gpu_batch_size",
    "load_document_embedder",
    "load_overlap_embedder",
    "vectors_key",
    "widened",
]

ONNX_DOCUMENTS_ENV_VAR = "KLEA_ONNX_DOCUMENTS"
"""Which embedder writes the packaged MiniLM's document vectors on the CPU: ``0`` torch,
``fp32`` the fp32 onnxruntime export, unset (or ``1``, ``int8``) its int8 variant."""

VARIANT_ONNX = "onnxruntime-fp32"
VARIANT_ONNX_INT8 = "onnxruntime-int8"
_ONNX_CHOICES = {"1": VARIANT_ONNX_INT8, "int8": VARIANT_ONNX_INT8, "fp32": VARIANT_ONNX}
TEXTS_PER_RUN = 1
"""Texts per onnxruntime run of a build's documents: one, so a vector depends on its text
only (dynamic int8 scales its activations per run) and nothing is padded; on real chunks
it also costs less CPU than sorted batches of 32 (``scripts/bench/embedder.py``)."""
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


GPU_DEVICE_FILES = ("/dev/nvidiactl", "/dev/kfd", "/dev/dxg")
"""Device files of a GPU driver torch could use (NVIDIA, AMD ROCm, WSL2): without any of
them ``auto`` is the CPU without importing torch (about 2 CPU-s and 0.5 GiB for a build
process that embeds with onnxruntime, and during conversion now, issue 40)."""


def embed_device(device: str) -> str:
    """``device`` for the embedder: ``auto`` is ``cuda`` when torch sees a GPU, else ``cpu``.

    A machine without a GPU driver's device file (:data:`GPU_DEVICE_FILES`) is ``cpu``
    without asking torch.
    """
    if device != "auto":
        return device
    from importlib.util import find_spec

    if not any(os.path.exists(path) for path in GPU_DEVICE_FILES):
        return "cpu"
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


def _onnx_embedder(variant: str, runs: int = 1) -> DocumentEmbedder:
    """The onnxruntime ``variant``: one intra-op thread, ``runs`` texts at once."""
    path = export_minilm_onnx()
    if variant == VARIANT_ONNX_INT8:
        path = quantize_minilm_int8(path)
    model = OnnxMiniLMEmbeddings(path, batch_size=TEXTS_PER_RUN, threads=1)
    return DocumentEmbedder(ConcurrentRuns(model, runs), variant)


def widened(embedder: DocumentEmbedder) -> DocumentEmbedder:
    """``embedder``'s session run a text per core at once, as the store phase runs it (the
    overlap thread's one-at-a-time twin lent to the store phase: no second session)."""
    if not isinstance(embedder.embeddings, ConcurrentRuns):
        return embedder
    runs = ConcurrentRuns(embedder.embeddings.model, available_cores())
    return DocumentEmbedder(runs, embedder.variant)


def embedder_identity(embedder: DocumentEmbedder) -> str:
    """Name ``embedder`` by its variant and model file: equal names write equal vectors."""
    model_file = getattr(embedder.embeddings, "onnx_path", None)
    return f"{embedder.variant}:{model_file}" if model_file else embedder.variant


def load_overlap_embedder(spec: str, device: str) -> DocumentEmbedder | None:
    """The embedder a build runs beside its conversion workers, or ``None`` where none fits.

    The onnxruntime variant :func:`load_document_embedder` would load for ``spec`` on
    ``device``, with **one** intra-op thread. Only there does a vector depend on its text
    alone (one text per run), so vectors embedded early equal the store phase's; torch,
    the numpy USE and any GPU give ``None`` (the build then embeds in its store phase only).
    """
    try:
        parsed = parse_embedding_model(spec)
    except EmbeddingModelError:
        return None
    if parsed.provider == USE_PROVIDER:
        return None
    resolved = embed_device(device)
    variant = _onnx_variant(spec, resolved)
    if variant is None or not onnx_runtime_available():
        return None
    return _onnx_embedder(variant, runs=1)


def load_document_embedder(spec: str, device: str, logger: logging.Logger) -> DocumentEmbedder:
    """Load the embedder that writes a build's vectors for ``spec`` on ``device``."""
    if parse_embedding_model(spec).provider == USE_PROVIDER:
        return DocumentEmbedder(load_embeddings(spec, device="cpu"), VARIANT_NUMPY)
    resolved = embed_device(device)
    variant = _onnx_variant(spec, resolved)
    if variant is not None:
        if onnx_runtime_available():
            return _onnx_embedder(variant, runs=available_cores())
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
