"""The dispatcher against scripted workers: no processes, no Docling.

A :class:`ScriptedWorker` implements ``ConversionWorker`` the way another executor would;
each one plays the next script: results to report, then either "done" or a death.
"""

from __future__ import annotations

import logging
import queue
from collections import deque
from pathlib import Path

import pytest
from klea_utils.stores._ingest.workers.dispatch import POISON_DEATHS, dispatch, poison_verdict
from klea_utils.stores._ingest.workers.worker_process import LogPipe, forward_to_parent_loggers
from klea_utils.stores.chunk_worker import ChunkItemResult, ChunkWorkerConfig


class ScriptedWorker:
    """Reports ``results``; then finishes, or dies while converting batch[``dies_at``]."""

    def __init__(self, results: list[ChunkItemResult], dies_at: int | None, hangs: bool) -> None:
        self.pending = deque(results)
        self.dies_at = dies_at
        self.hangs = hangs
        self.finished = False
        self.killed = False

    def poll(self, timeout: float) -> ChunkItemResult | None:
        if self.pending:
            return self.pending.popleft()
        if self.dies_at is None and not self.hangs:
            self.finished = True
        return None

    def current_index(self) -> int:
        return -1 if self.dies_at is None else self.dies_at

    def exit_reason(self) -> str | None:
        if self.killed:
            return "killed"
        return None if self.hangs else "worker exited with code -9"

    def kill(self) -> None:
        self.killed = True

    def drain(self) -> list[ChunkItemResult]:
        return []

    def close(self) -> None:
        return


def _ok(path: str) -> ChunkItemResult:
    return ChunkItemResult(Path(path).name, "h", "ok", file_headings_entry={}, file_path=path)


def _deferred(path: str) -> ChunkItemResult:
    return ChunkItemResult(Path(path).name, "h", "deferred", file_path=path)


def _run(tmp_path: Path, paths: list[str], scripts: list, timeout: float = 5.0):
    config = ChunkWorkerConfig(
        str(tmp_path), 128, "BAAI/bge-m3", False, None, logging.WARNING, file_timeout_s=timeout
    )
    started: list[list[str]] = []
    plays = iter(scripts)

    def start(config: ChunkWorkerConfig, batch: list[tuple[str, str]]) -> ScriptedWorker:
        started.append([Path(p).name for p, _ in batch])
        return ScriptedWorker(*next(plays)(batch))

    results = dispatch([(p, "h") for p in paths], 10, config, logging.getLogger("t"), start)
    return results, started


def test_a_file_that_kills_two_workers_is_a_poison_file(tmp_path: Path) -> None:
    a, b, c = (str(tmp_path / n) for n in ("a.md", "b.pdf", "c.md"))
    results, started = _run(
        tmp_path,
        [a, b, c],
        [
            lambda batch: ([_ok(a)], 1, False),  # dies converting b
            lambda batch: ([], 0, False),  # b alone: dies again
            lambda batch: ([_ok(c)], None, False),  # the rest
        ],
    )
    assert started == [["a.md", "b.pdf", "c.md"], ["b.pdf"], ["c.md"]]
    assert [r.status for r in results] == ["ok", "failed", "ok"]
    assert "poison file: it killed 2 conversion workers" in (results[1].error or "")


def test_poison_verdict_retries_until_the_shared_limit_then_fails_the_file() -> None:
    # One rule for the local and the Ray dispatcher: None (retry alone) until the limit.
    deaths: dict[str, int] = {}
    verdicts = [poison_verdict(deaths, "/d/x.pdf", "h", "oom") for _ in range(POISON_DEATHS)]
    assert verdicts[:-1] == [None] * (POISON_DEATHS - 1)
    failed = verdicts[-1]
    assert failed is not None
    assert failed.status == "failed"
    assert failed.file_path == "/d/x.pdf"
    assert (failed.error or "").startswith(
        f"/d/x.pdf: worker crash: poison file: it killed {POISON_DEATHS} conversion workers (oom)"
    )
    other: dict[str, int] = {}
    for _ in range(POISON_DEATHS):
        stalled = poison_verdict(other, "/d/y.pdf", "h", "worker made no progress for 5s")
    assert stalled is not None
    assert (stalled.error or "").startswith("/d/y.pdf: time-out: ")
    assert deaths == {"/d/x.pdf": POISON_DEATHS}


def test_a_file_that_kills_one_worker_is_retried_alone_and_can_succeed(tmp_path: Path) -> None:
    a, b = str(tmp_path / "a.md"), str(tmp_path / "b.md")
    results, started = _run(
        tmp_path,
        [a, b],
        [
            lambda batch: ([], 0, False),  # dies converting a
            lambda batch: ([_ok(a)], None, False),  # a alone
            lambda batch: ([_ok(b)], None, False),
        ],
    )
    assert started == [["a.md", "b.md"], ["a.md"], ["b.md"]]
    assert [r.status for r in results] == ["ok", "ok"]


def test_deferred_files_go_to_a_fresh_worker_first(tmp_path: Path) -> None:
    a, b = str(tmp_path / "a.md"), str(tmp_path / "b.md")
    results, started = _run(
        tmp_path,
        [a, b],
        [
            lambda batch: ([_ok(a), _deferred(b)], None, False),
            lambda batch: ([_ok(b)], None, False),
        ],
    )
    assert started == [["a.md", "b.md"], ["b.md"]]
    assert [r.status for r in results] == ["ok", "ok"]


def test_a_stalled_worker_is_killed(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    a = str(tmp_path / "a.md")
    with caplog.at_level(logging.ERROR):
        results, started = _run(
            tmp_path,
            [a],
            [lambda batch: ([], 0, True), lambda batch: ([], 0, True)],
            timeout=0.3,
        )
    assert len(started) == 2
    assert results[0].status == "failed"
    assert "no progress for 0.3s" in caplog.text


def _record(level: int) -> logging.LogRecord:
    return logging.LogRecord("klea-test-worker", level, __file__, 1, "from %s", ("worker",), None)


def test_worker_records_are_shown_as_the_parents_logging_decides(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="klea-test-worker"):
        forward_to_parent_loggers(_record(logging.INFO))
        forward_to_parent_loggers(_record(logging.WARNING))
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (logging.WARNING, "from worker")
    ]


def test_log_pipe_ends_when_its_writer_is_gone() -> None:
    pipe = LogPipe()
    pipe.put_nowait(_record(logging.INFO))
    pipe.close_writer()
    assert pipe.get().getMessage() == "from worker"
    with pytest.raises(queue.Empty):
        pipe.get()
    pipe.close()
