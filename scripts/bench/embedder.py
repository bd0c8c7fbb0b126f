"""The document embedder of a build: CPU per chunk and vectors of each variant, same run.

Run with::

    uv run --frozen python scripts/bench/embedder.py --source DIR [--chunks 400]

``DIR`` is a folder that ``klea-stores-create chunk`` (or ``build``) has chunked: the texts
are its cached chunks' ``page_content``, the exact strings the store phase hands the vector
store to embed (heading prefix included). The first ``--chunks`` of them, in file order,
are embedded by each variant in this one process, one variant after the other; each prints

- wall s and CPU s (this process's user + system time, every thread included),
- CPU-s per chunk and chunks per CPU-minute,
- the CPU ratio against ``torch``, the code before (sentence-transformers on torch, the
  build's document embedder until issue 40), measured in the same run,
- mean and min cosine of its vectors to the ``torch`` fp32 vectors.

Variants (the thread count is set in code to the cores this process may use,
``os.sched_getaffinity``, for torch and for onnxruntime alike):

- ``torch``: ``load_embeddings(device="cpu")``, batch 32 (sentence-transformers sorts a
  call's texts by length and pads each batch to its longest text).
- ``ort-<level>``: the packaged MiniLM's ONNX export through onnxruntime, graph
  optimisation ``basic``, ``extended`` or ``all``, texts in the order given, each batch
  padded to its longest text.
- ``ort-all-sorted``: the same, the texts of a call sorted by token count first, so a
  batch holds texts of about one length (what the build uses: ``OnnxMiniLMEmbeddings``).
- ``int8-s8``: dynamic int8 quantisation (onnxruntime.quantization): per-channel signed
  weights with ``reduce_range`` (7 bits: AVX2 without VNNI saturates u8s8 products
  otherwise), MatMul only, the attention-score MatMuls (two activations) left in fp32.
- ``int8-u8``: the same with unsigned 8-bit weights and no ``reduce_range`` (u8u8 does
  not saturate).
- ``int8-u8-ffn-fp32``: ``int8-u8`` with every layer's feed-forward down projection (its
  input is the GELU output, whose outliers per-tensor activation scales lose) in fp32.

- ``ort-all-per-text`` and ``int8-u8-ffn-fp32-per-text``: one text per onnxruntime run
  (no padding; int8 then scales a text's activations by that text alone, so its vector does
  not depend on its neighbours). ``int8-u8-ffn-fp32-per-text`` is the build's default since
  issue 40's third round (``document_embedder.TEXTS_PER_RUN``).

``--variants`` picks some (comma-separated). The figures for docs/benchmarks.md come
from a quiet machine; on a loaded one CPU time is the figure to trust, not wall time.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

# scripts/bench/tokenize.py would shadow the standard library's module: this folder last.
if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
    sys.path.append(sys.path.pop(0))

import numpy as np

VARIANTS = (
    "torch",
    "ort-basic",
    "ort-extended",
    "ort-all",
    "ort-all-sorted",
    "int8-s8",
    "int8-u8",
    "int8-u8-ffn-fp32",
    "ort-all-per-text",
    "int8-u8-ffn-fp32-per-text",
)


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def read_chunks(source: Path, limit: int) -> list[str]:
    """The first ``limit`` cached chunk texts of ``source``, as the store embeds them."""
    from klea_utils.stores.chunk_cache import iter_cached_files

    texts: list[str] = []
    for cached in iter_cached_files(source):
        texts.extend(d.page_content for d in cached.docs)
        if len(texts) >= limit:
            break
    if not texts:
        sys.exit(f"no cached chunks under {source}; run klea-stores-create chunk on it first")
    return texts[:limit]


def _torch_embedder(threads: int) -> Callable[[list[str]], list[list[float]]]:
    import torch
    from klea_utils.stores.embedding_models import load_embeddings

    torch.set_num_threads(threads)
    model = load_embeddings(device="cpu")
    return model.embed_documents


def _ort_embedder(
    path: Path, level: str, threads: int, *, sort: bool, batch_size: int = 32
) -> Callable[[list[str]], list[list[float]]]:
    from klea_utils.stores.onnx_minilm import OnnxMiniLMEmbeddings

    model = OnnxMiniLMEmbeddings(
        path, threads=threads, optimization=level, sort_by_length=sort, batch_size=batch_size
    )
    return model.embed_documents


def _int8_export(fp32: Path, target: Path, variant: str) -> Path:
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    model = onnx.load(str(fp32))
    weights = {init.name for init in model.graph.initializer}
    exclude: list[str] = []
    for node in model.graph.node:
        if node.op_type != "MatMul":
            continue
        attention = not any(i in weights for i in node.input)  # Q.K^T and softmax.V
        down = "/output/dense/" in node.name and "attention" not in node.name
        if attention or (down and variant == "int8-u8-ffn-fp32"):
            exclude.append(node.name)
    signed = variant == "int8-s8"
    quantize_dynamic(
        str(fp32),
        str(target),
        per_channel=True,
        reduce_range=signed,
        weight_type=QuantType.QInt8 if signed else QuantType.QUInt8,
        op_types_to_quantize=["MatMul"],
        nodes_to_exclude=exclude,
    )
    return target


def _measure(
    name: str, embed: Callable[[list[str]], list[list[float]]], texts: list[str]
) -> tuple[np.ndarray, float, float]:
    embed(texts[:8])  # warm-up: first-run allocations are not the steady state
    wall0, cpu0 = time.perf_counter(), _cpu_seconds()
    vectors = np.asarray(embed(texts), dtype=np.float32)
    return vectors, time.perf_counter() - wall0, _cpu_seconds() - cpu0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, required=True, help="a chunked folder")
    parser.add_argument("--chunks", type=int, default=400)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    args = parser.parse_args()
    wanted = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = sorted(set(wanted) - set(VARIANTS))
    if unknown:
        sys.exit(f"unknown variants {unknown}; choose from {', '.join(VARIANTS)}")
    if "torch" not in wanted:
        wanted.insert(0, "torch")  # the reference for ratios and cosines
    threads = len(os.sched_getaffinity(0))
    texts = read_chunks(args.source, args.chunks)
    distinct = len(set(texts))
    print(f"{len(texts)} chunks ({distinct} distinct) from {args.source}; {threads} thread(s)")

    from klea_utils.stores.onnx_minilm import export_minilm_onnx

    fp32 = export_minilm_onnx()
    scratch = Path(tempfile.mkdtemp(prefix="embedder-bench-"))
    rows: list[tuple[str, float, float, float, float]] = []
    reference: np.ndarray | None = None
    torch_cpu = 1.0
    for name in ["torch", *[w for w in wanted if w != "torch"]]:
        if name == "torch":
            embed = _torch_embedder(threads)
        elif name == "ort-all-per-text":
            embed = _ort_embedder(fp32, "all", threads, sort=True, batch_size=1)
        elif name.startswith("ort-"):
            level = name.split("-")[1]
            embed = _ort_embedder(fp32, level, threads, sort=name.endswith("-sorted"))
        else:
            per_text = name.endswith("-per-text")
            quantised = name.removesuffix("-per-text")
            path = _int8_export(fp32, scratch / f"{quantised}.onnx", quantised)
            embed = _ort_embedder(path, "all", threads, sort=True, batch_size=1 if per_text else 32)
        vectors, wall, cpu = _measure(name, embed, texts)
        if reference is None:
            reference, torch_cpu = vectors, cpu
        cosines = np.sum(vectors * reference, axis=1)
        rows.append((name, wall, cpu, float(cosines.mean()), float(cosines.min())))
        del embed
    print(
        f"{'variant':<20} {'wall s':>7} {'CPU s':>7} {'CPU-s/chunk':>12} {'chunks/CPU-min':>15}"
        f" {'CPU vs torch':>13} {'mean cos':>9} {'min cos':>9}"
    )
    for name, wall, cpu, mean, low in rows:
        print(
            f"{name:<20} {wall:>7.1f} {cpu:>7.1f} {cpu / len(texts):>12.4f}"
            f" {60 * len(texts) / cpu:>15.0f} {cpu / torch_cpu:>13.2f} {mean:>9.5f} {low:>9.5f}"
        )


if __name__ == "__main__":
    main()
