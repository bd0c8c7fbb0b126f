"""A conversion worker's start-up loads Docling's converter only when its files need it.

Without Docling's layout models PDFs take the model-free path, which never uses the
converter; a worker whose files are all PDFs skips building it (a CPU-second or more of
imports, paid by every fresh worker). Any other format, or files not known, builds it at
start-up, so a first file is never charged for it against the file time-out.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from klea_utils.stores._ingest.conversion import Converter
from klea_utils.stores._ingest.file_processing import FileProcessor

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
