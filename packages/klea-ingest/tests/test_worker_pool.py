"""Several spawned conversion workers at once, on a tiny real corpus.

The dispatcher's rules with several workers are checked against scripted workers in
``test_dispatch.py``; here real processes show that two really run at once, that the
chunks are those one worker makes, and that a worker killed mid-batch while another runs
loses no file. Each spawned worker imports the converter (seconds): the corpora stay tiny.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest
from ingest_corpus import sample_paragraphs, write_markdown, write_scanned_pdf, write_text_pdf
from klea_utils.stores.chunk_cache import ChunkCache, compute_file_hash
from klea_utils.stores.chunk_worker import ChunkWorkerConfig, dispatch_conversion_batches

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("OMP_THREAD_LIMIT", "1")
    return


def _config(root: Path) -> ChunkWorkerConfig:
    return ChunkWorkerConfig(str(root), 128, "BAAI/bge-m3", True, None, logging.WARNING)


def _items(*paths: Path) -> list[tuple[str, str]]:
    return [(str(p), compute_file_hash(p)) for p in paths]


def _workers_alive() -> list[psutil.Process]:
    found = []
    for child in psutil.Process().children(recursive=True):
        try:
            if "spawn_main" in " ".join(child.cmdline()):
                found.append(child)
        except psutil.Error:
            continue
    return found


class _Watcher(threading.Thread):
    """Counts the conversion workers alive at once; runs ``act`` once when ``when`` holds."""

    def __init__(
        self,
        when: Callable[[list[psutil.Process]], bool],
        act: Callable[[list[psutil.Process]], None],
    ) -> None:
        super().__init__(daemon=True)
        self.most = 0
        self.acted = False
        self.stop = threading.Event()
        self._when, self._act = when, act

    def run(self) -> None:
        while not self.stop.is_set():
            alive = _workers_alive()
            self.most = max(self.most, len(alive))
            if not self.acted and self._when(alive):
                self._act(alive)
                self.acted = True
            time.sleep(0.02)


def _chunk_texts(root: Path, paths: list[Path]) -> dict[str, list[str]]:
    cache = ChunkCache(root)
    texts = {}
    for path in paths:
        cached = cache.load(path, compute_file_hash(path))
        assert cached is not None, path.name
        texts[path.name] = [doc.page_content for doc in cached.docs]
    return texts


def _corpus(root: Path) -> list[Path]:
    root.mkdir()
    return [
        write_text_pdf(root / "a.pdf", "Alpha", sample_paragraphs(4, seed=1)),
        write_markdown(root / "b.md", "Beta", sample_paragraphs(2, seed=2)),
        write_text_pdf(root / "c.pdf", "Gamma", sample_paragraphs(4, seed=3)),
        write_markdown(root / "d.md", "Delta", sample_paragraphs(2, seed=4)),
    ]


def test_two_workers_convert_at_once_and_store_what_one_worker_stores(tmp_path: Path) -> None:
    files = _corpus(tmp_path / "two")
    watcher = _Watcher(lambda alive: False, lambda alive: None)  # counts only
    watcher.start()
    try:
        results = dispatch_conversion_batches(
            logging.getLogger("test"), _config(tmp_path / "two"), _items(*files), 10, workers=2
        )
    finally:
        watcher.stop.set()
        watcher.join()
    assert watcher.most == 2
    assert [r.file_name for r in results] == [p.name for p in files]
    assert {r.status for r in results} == {"ok"}

    one = tmp_path / "one"
    one.mkdir()
    copies = [Path(shutil.copy2(p, one / p.name)) for p in files]
    alone = dispatch_conversion_batches(
        logging.getLogger("test"), _config(one), _items(*copies), 10, workers=1
    )
    assert [(r.file_name, r.status) for r in alone] == [(r.file_name, r.status) for r in results]
    assert _chunk_texts(one, copies) == _chunk_texts(tmp_path / "two", files)


def test_a_worker_killed_mid_batch_while_another_runs_loses_no_file(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # The scan (the largest file) goes to one worker with a text file, the rest to the
    # other; the scan's worker is killed while tesseract reads a page, once both workers
    # run and the other has cached a file.
    slow = write_scanned_pdf(tmp_path / "a.pdf", ["SLOW SCANNED PAGE"] * 3)
    rest = [
        write_markdown(tmp_path / f"{name}.md", name, sample_paragraphs(1, seed=i))
        for i, name in enumerate(("b", "c", "d"))
    ]
    cache = ChunkCache(tmp_path)
    killed: list[int] = []

    def ocr_running(alive: list[psutil.Process]) -> psutil.Process | None:
        for worker in alive:
            try:
                if worker.children():
                    return worker
            except psutil.Error:
                continue
        return None

    def when(alive: list[psutil.Process]) -> bool:
        return len(alive) >= 2 and len(cache.entries()) >= 1 and ocr_running(alive) is not None

    def kill_the_ocr_worker(alive: list[psutil.Process]) -> None:
        victim = ocr_running(alive)
        if victim is not None:
            os.kill(victim.pid, signal.SIGKILL)
            killed.append(victim.pid)

    watcher = _Watcher(when, kill_the_ocr_worker)
    watcher.start()
    try:
        with caplog.at_level(logging.ERROR):
            results = dispatch_conversion_batches(
                logging.getLogger("test"), _config(tmp_path), _items(slow, *rest), 10, workers=2
            )
    finally:
        watcher.stop.set()
        watcher.join()
    assert killed, "both workers never ran at once"
    assert "Conversion worker died" in caplog.text
    assert [r.status for r in results] == ["ok"] * 4
    assert len(cache.entries()) == 4
