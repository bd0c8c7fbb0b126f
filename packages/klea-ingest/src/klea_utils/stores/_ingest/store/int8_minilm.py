"""The int8 document variant of the packaged MiniLM: quantised once, cached beside fp32.

``onnxruntime-int8`` is dynamic int8 quantisation of the fp32 ONNX export
(:func:`~klea_utils.stores.onnx_minilm.export_minilm_onnx`), chosen so its vectors stay
within cosine 0.995 of fp32 on real chunks (``scripts/bench/embedder.py``):

- only MatMuls with a weight are quantised, per output channel, to unsigned 8-bit
  weights without ``reduce_range`` (u8 x u8 products do not saturate on AVX2);
- the attention-score MatMuls (two activations, no weight) stay fp32;
- every layer's feed-forward down projection stays fp32: its input is the GELU output,
  whose outliers a per-tensor activation scale loses (u8 with them quantised reaches a
  mean cosine of only 0.994).

The file is written next to the fp32 export (``<fp32 stem>.int8-u8-ffn-fp32.onnx``) through
a temporary name and a rename, so a reader never sees half a model; a later build reuses
it. Queries keep the fp32 export: only documents are embedded with it.
"""

from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path

__all__ = ["INT8_SUFFIX", "int8_minilm_path", "quantize_minilm_int8"]

INT8_SUFFIX = ".int8-u8-ffn-fp32.onnx"
"""What the int8 file's name ends with, after the fp32 export's stem."""


def int8_minilm_path(fp32: Path) -> Path:
    """Where the int8 variant of the fp32 export ``fp32`` lives (it may not exist yet)."""
    return fp32.with_name(fp32.stem + INT8_SUFFIX)


def _kept_in_fp32(model: object) -> list[str]:
    """MatMul nodes left in fp32: attention scores (no weight input), FFN down projections."""
    graph = model.graph  # type: ignore[attr-defined]
    weights = {init.name for init in graph.initializer}
    kept: list[str] = []
    for node in graph.node:
        if node.op_type != "MatMul":
            continue
        attention_scores = not any(name in weights for name in node.input)
        ffn_down = "/output/dense/" in node.name and "attention" not in node.name
        if attention_scores or ffn_down:
            kept.append(node.name)
    return kept


def _no_preprocessing_advice(record: logging.LogRecord) -> bool:
    """Drop the quantiser's root-logger advice to pre-process (it is measured without)."""
    return "pre-processing before quantization" not in record.getMessage()


def quantize_minilm_int8(fp32: Path, *, force: bool = False) -> Path:
    """Quantise the fp32 export ``fp32`` to the int8 document variant (once); return it.

    Raises:
        ImportError: When onnx or onnxruntime is not installed (the ``huggingface``
            extra of klea-retrieval).
        ValueError: When ``fp32`` holds no FFN down projection to keep (not the MiniLM
            export this was measured on), so no int8 file is written.
    """
    target = int8_minilm_path(fp32)
    if target.is_file() and not force:
        return target
    try:
        import onnx
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as error:
        raise ImportError(
            "the int8 document embedder needs onnx and onnxruntime: "
            "pip install 'klea-retrieval[huggingface]'"
        ) from error

    kept = _kept_in_fp32(onnx.load(str(fp32)))
    if not any("/output/dense/" in name for name in kept):
        raise ValueError(
            f"{fp32.name}: no feed-forward down projection found; not the MiniLM export "
            "the int8 variant was measured on"
        )
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    root = logging.getLogger()
    root.addFilter(_no_preprocessing_advice)
    try:
        quantize_dynamic(
            fp32,
            tmp,
            per_channel=True,
            reduce_range=False,
            weight_type=QuantType.QUInt8,
            op_types_to_quantize=["MatMul"],
            nodes_to_exclude=kept,
        )
        os.chmod(tmp, fp32.stat().st_mode & 0o777)  # the fp32 export's mode (umask kept)
        os.replace(tmp, target)
    finally:
        root.removeFilter(_no_preprocessing_advice)
        Path(tmp).unlink(missing_ok=True)
    return target
