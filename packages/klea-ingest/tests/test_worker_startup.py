"""A conversion worker's start-up loads Docling's converter only when its files need it.

Without Docling's layout models PDFs take the model-free path, which never uses the
converter; a worker whose files are all PDFs skips building it (a CPU-second or more of
imports, paid by every fresh worker). Any other format, or files not known, builds it at
start-up, so a first file is never charged for it against the file time-out. And a
model-free PDF worker never imports torch.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from ingest_corpus import sample_paragraphs, write_text_pdf
from klea_utils.stores._ingest.convert.conversion import Converter
from klea_utils.stores._ingest.convert.file_processing import FileProcessor

BUILT = object()


@pytest.mark.parametrize(
    ("suffixes", "standard_pdf", "built"),
    [
        ([".pdf", ".PDF"], False, False),
        ([".pdf", ".md"], False, True),
        (None, False, True),
        ([".pdf"], True, True),
    ],
)
def test_warm_up_builds_the_converter_only_when_needed(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    offline: None,
    suffixes: list[str] | None,
    standard_pdf: bool,
    built: bool,
) -> None:
    monkeypatch.setattr(Converter, "_build", lambda self: BUILT)
    processor = FileProcessor(
        source_path=tmp_path,
        max_tokens=100,
        merge_peers=True,
        tokenizer_model="sentence-transformers/all-MiniLM-L6-v2",
        do_ocr=False,
        device="cpu",
        artifacts_path=None,
        logger=logging.getLogger("test-startup"),
    )
    processor._converter.standard_pdf = standard_pdf
    processor.warm_up(suffixes)
    assert (processor._converter._converter is BUILT) is built
    assert processor._chunker is not None


_STARTUP_PROBE = """
import logging, sys
from pathlib import Path
from klea_utils.stores._ingest.chunking.chunking import tokenizer_for
from klea_utils.stores._ingest.convert.file_processing import FileProcessor

pdf = Path(sys.argv[1])
processor = FileProcessor(
    source_path=pdf.parent, max_tokens=256, merge_peers=True,
    tokenizer_model=tokenizer_for("huggingface:sentence-transformers/all-MiniLM-L6-v2"),
    do_ocr=False, device="cpu", artifacts_path=None, logger=logging.getLogger("probe"),
)
processor.warm_up([".pdf"])
outcome = processor.convert(pdf, "0" * 64)
print(len(outcome.cached.docs), sorted(m for m in ("torch", "transformers") if m in sys.modules))
"""


def test_a_model_free_pdf_worker_never_imports_torch(tmp_path: Path) -> None:
    # Importing torch (through transformers) was most of a worker's start-up: the chunker
    # counts tokens with the tokenizers library alone and does not import HybridChunker.
    pdf = write_text_pdf(tmp_path / "paper.pdf", "A Paper", sample_paragraphs(8))
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    probe = subprocess.run(
        [sys.executable, "-c", _STARTUP_PROBE, str(pdf)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=True,
    )
    chunks, heavy = probe.stdout.split(" ", 1)
    assert int(chunks) > 1
    assert heavy.strip() == "[]"
