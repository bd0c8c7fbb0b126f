"""Spawned conversion workers: RSS cap deferral, SIGKILL mid-batch, poison/hung files.

Each spawned worker imports Docling (seconds), so these tests keep corpora tiny.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from ingest_corpus import sample_paragraphs, write_markdown, write_scanned_pdf
from klea_utils.stores.chunk_cache import ChunkCache, compute_file_hash
from klea_utils.stores.chunk_worker import (
    ChunkItemResult,
    ChunkWorkerConfig,
    convert_batch_worker,
    dispatch_conversion_batches,
)

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("OMP_THREAD_LIMIT", "1")
    return


def _config(root: Path, **overrides: object) -> ChunkWorkerConfig:
    fields: dict[str, object] = {
        "source_path": str(root),
        "max_tokens": 128,
        "tokenizer_model": "BAAI/bge-m3",
        "do_ocr": True,
        "mem_limit_bytes": None,
        "log_level": logging.WARNING,
    }
    fields.update(overrides)
    return ChunkWorkerConfig(**fields)  # type: ignore[arg-type]


def _items(*paths: Path) -> list[tuple[str, str]]:
    return [(str(p), compute_file_hash(p)) for p in paths]


def _md(root: Path, n: int) -> list[Path]:
    return [
        write_markdown(root / f"d{i}.md", f"T{i}", sample_paragraphs(1, seed=i)) for i in range(n)
    ]


@pytest.mark.parametrize(
    ("field", "value"),
    [("max_tokens", 0), ("mem_limit_bytes", 0), ("file_timeout_s", 0.0)],
)
def test_config_rejects_bad_values(tmp_path: Path, field: str, value: object) -> None:
    with pytest.raises(ValueError, match=field):
        _config(tmp_path, **{field: value})


def test_result_status_is_checked() -> None:
    with pytest.raises(ValueError, match="status"):
        ChunkItemResult("a.md", "h", "weird")
    with pytest.raises(ValueError, match="no error"):
        ChunkItemResult("a.md", "h", "failed")


def test_in_process_worker_defers_after_one_file_over_the_cap(tmp_path: Path) -> None:
    docs = _md(tmp_path, 3)
    results = convert_batch_worker(_config(tmp_path, mem_limit_bytes=1), _items(*docs))
    assert results is not None
    assert [r.status for r in results] == ["ok", "deferred", "deferred"]
    assert results[0].file_headings_entry is not None
    assert "T0 > Section 1" in results[0].file_headings_entry
    assert [r.file_path for r in results[1:]] == [str(p) for p in docs[1:]]


def test_workers_over_a_tiny_rss_cap_still_complete(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    docs = _md(tmp_path, 2)
    config = _config(tmp_path, mem_limit_bytes=1, log_level=logging.INFO)
    with caplog.at_level(logging.INFO, logger="klea_utils.stores.chunk_worker"):
        results = dispatch_conversion_batches(logging.getLogger("test"), config, _items(*docs), 10)
    assert [r.status for r in results] == ["ok", "ok"]
    assert len(ChunkCache(tmp_path).entries()) == 2
    # the worker's own log record, handed to the parent's logger of the same name
    (deferral,) = [r for r in caplog.records if "deferring" in r.getMessage()]
    assert deferral.name == "klea_utils.stores.chunk_worker"
    assert deferral.processName == "klea-chunk-worker"


def _kill_worker_when(condition: object, stop: threading.Event) -> None:
    me = psutil.Process()
    while not stop.is_set():
        if condition():  # type: ignore[operator]
            for child in me.children(recursive=True):
                if "spawn_main" in " ".join(child.cmdline()):
                    os.kill(child.pid, signal.SIGKILL)
                    return
        time.sleep(0.02)


def test_sigkilled_worker_loses_no_other_file(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    first = write_markdown(tmp_path / "a.md", "A", sample_paragraphs(1))
    slow = write_scanned_pdf(tmp_path / "b.pdf", ["SLOW SCANNED PAGE"] * 3)
    last = write_markdown(tmp_path / "c.md", "C", sample_paragraphs(1, seed=2))
    cache = ChunkCache(tmp_path)
    stop = threading.Event()
    killer = threading.Thread(
        target=_kill_worker_when, args=(lambda: len(cache.entries()) >= 1, stop), daemon=True
    )
    killer.start()
    try:
        with caplog.at_level(logging.ERROR):
            results = dispatch_conversion_batches(
                logging.getLogger("test"), _config(tmp_path), _items(first, slow, last), 10
            )
    finally:
        stop.set()
    assert "Conversion worker died" in caplog.text
    assert [r.status for r in results] == ["ok", "ok", "ok"]
    assert len(cache.entries()) == 3


def test_hung_poison_file_is_killed_isolated_and_failed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    good = write_markdown(tmp_path / "a.md", "A", sample_paragraphs(1))
    # 48 pages of OCR take far longer than the one-second file timeout.
    poison = write_scanned_pdf(tmp_path / "b.pdf", ["HANGING PAGE"] * 12)
    from pypdfium2 import PdfDocument

    pdf = PdfDocument(str(poison))
    pdf.import_pages(PdfDocument(str(poison)), None)
    for _ in range(2):
        pdf.import_pages(pdf)
    pdf.save(str(poison))
    pdf.close()
    other = write_markdown(tmp_path / "c.md", "C", sample_paragraphs(1, seed=2))
    with caplog.at_level(logging.ERROR):
        results = dispatch_conversion_batches(
            logging.getLogger("test"),
            _config(tmp_path, file_timeout_s=1.0),
            _items(good, poison, other),
            10,
        )
    statuses = {Path(r.file_path or "").name: r for r in results}
    assert statuses["a.md"].status == "ok"
    assert statuses["c.md"].status == "ok"
    assert statuses["b.pdf"].status == "failed"
    assert "time-out: " in (statuses["b.pdf"].error or "")
    assert "no progress" in caplog.text
