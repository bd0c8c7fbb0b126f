"""A library built with the multilingual embedder (``--embedding-model use:multilingual-v3``,
extra ``klea-ingest[multilingual]``), end to end on a real Japanese PDF: the build replaces
the MiniLM vectors a collection held, writes the model into the stores configuration, and
``klea-retrieve`` embeds an English question with it and finds the Japanese poem."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from klea_utils.stores._ingest.store.document_embedder import VARIANT_NUMPY, VARIANT_ONNX_INT8
from klea_utils.stores._ingest.store.manifest import manifest_path
from klea_utils.stores.retrieve_cli import main as klea_retrieve
from realpapers import WILD, needs_wild

pytestmark = [pytest.mark.slow, needs_wild]
USE = "use:multilingual-v3"
ENV = {**os.environ, "KLEA_DOI_LOOKUP": "0", "PYTHONWARNINGS": "ignore", "COLUMNS": "200"}
QUESTION = "In the Japanese poem, what does the speaker breathe while eating cosmic dust?"
NOTES = """# Dendritic spines

Dendritic spines grow and shrink while mice learn a motor task.

# Attention

Attention layers let a language model weigh every token of its context.
"""


def _build(source: Path, out: Path, *model: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "klea_utils.stores.cli", "build", str(source)]
    command += ["--store", f"chroma:{out / 'chroma'}", "--collection", "papers"]
    command += ["--bm25-store", str(out / "bm25.pkl")]
    command += ["--write-stores-config", str(out / "stores.json"), "-q", *model]
    done = subprocess.run(command, env=ENV, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return done


def _record(source: Path) -> dict[str, object]:
    (record,) = json.loads(manifest_path(source, "papers").read_text())["stores"].values()
    return dict(record)


def _retrieve(
    capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[list[dict[str, object]], str]:
    """The hits of every domain, and what klea-retrieve logged."""
    capsys.readouterr()
    assert klea_retrieve([*args, "--json", "-k", "3", "--", QUESTION]) == 0
    printed = capsys.readouterr()
    material = json.loads(printed.out)
    return [hit for hits in material.values() for hit in hits], printed.err


def test_a_minilm_library_rebuilt_multilingual_answers_across_languages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert WILD is not None
    source, out = tmp_path / "src", tmp_path / "out"
    source.mkdir()
    shutil.copy2(WILD / "pdfminer__jo.pdf", source)
    (source / "notes.md").write_text(NOTES, encoding="utf-8")

    _build(source, out)  # the default: the packaged MiniLM
    assert _record(source)["embedders"] == [VARIANT_ONNX_INT8]
    done = _build(source, out, "--embedding-model", USE)
    record = _record(source)
    assert record["vectors"] == USE, "the MiniLM collection was rebuilt with USE's vectors"
    assert record["embedders"] == [VARIANT_NUMPY]
    assert f"klea-retrieve --embedding-model {USE} --store" in done.stdout
    config = json.loads((out / "stores.json").read_text())
    assert config["domains"]["papers"]["embedding_model"] == USE

    # The configuration names the model: no --embedding-model needed, no leg fails.
    fused, logged = _retrieve(capsys, "--stores-config", str(out / "stores.json"))
    assert "failed" not in logged
    assert any("空気や塩水" in str(hit["page_content"]) for hit in fused)
    vector, _ = _retrieve(
        capsys, "--store", f"papers=chroma:{out / 'chroma'}", "--embedding-model", USE
    )
    assert vector[0]["id"] == "pdfminer__jo.pdf:0", "the English question finds the poem"

    # Asked with the MiniLM the vectors were not made by: the leg is left out, saying why.
    wrong, logged = _retrieve(capsys, "--store", f"papers=chroma:{out / 'chroma'}")
    assert wrong == []
    assert "dimension of 512, got 384" in logged
    assert "ask with the --embedding-model it was built with" in logged


def test_use_chunks_are_cut_as_the_packaged_minilm_cuts_them() -> None:
    """Same tokenizer, same budget: a library's chunks (and their cache) do not depend on
    which of the two embeds them, and no tokenizer is fetched from the Hub for USE."""
    from klea_utils.stores._ingest.chunking.chunking import (
        embedding_max_tokens,
        resolve_max_tokens,
        tokenizer_for,
    )

    minilm = "huggingface:all-MiniLM-L6-v2"
    assert tokenizer_for(USE) == tokenizer_for(minilm)
    assert Path(tokenizer_for(USE)).is_dir()
    assert embedding_max_tokens(USE) == embedding_max_tokens(minilm) == 256
    assert resolve_max_tokens(USE, None) == resolve_max_tokens(minilm, None)
