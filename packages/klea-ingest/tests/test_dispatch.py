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
import typer
from hypothesis import given, settings
from hypothesis import strategies as st
from klea_utils.stores._ingest.cli_options import parse_workers
from klea_utils.stores._ingest.workers.dispatch import (
    POISON_DEATHS,
    balanced_batches,
    dispatch,
    poison_verdict,
)
from klea_utils.stores._ingest.workers.pool_size import auto_workers, resolve_workers, usable_cores
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


# -- several workers at once (scripted) -----------------------------------------------------


class _Pool:
    """Starts scripted workers from a per-file plan and counts how many are open at once."""

    def __init__(self, plan: dict[str, list[str]]) -> None:
        self.plan = {name: deque(steps) for name, steps in plan.items()}
        self.open = 0
        self.most_open = 0
        self.started: list[list[str]] = []

    def start(self, config: ChunkWorkerConfig, batch: list[tuple[str, str]]) -> ScriptedWorker:
        names = [Path(p).name for p, _ in batch]
        self.started.append(names)
        results: list[ChunkItemResult] = []
        dies_at = None
        for index, (path, _) in enumerate(batch):
            steps = self.plan.get(Path(path).name)
            if steps and steps[0] == "die":
                steps.popleft()
                dies_at = index
                break
            results.append(_ok(path))
        worker = ScriptedWorker(results, dies_at, hangs=False)
        self.open += 1
        self.most_open = max(self.most_open, self.open)
        pool = self

        def close() -> None:
            pool.open -= 1

        worker.close = close  # type: ignore[method-assign]
        return worker


def _run_pool(tmp_path: Path, names: list[str], plan: dict[str, list[str]], workers: int):
    config = ChunkWorkerConfig(str(tmp_path), 128, "BAAI/bge-m3", False, None, logging.WARNING)
    pool = _Pool(plan)
    paths = [str(tmp_path / n) for n in names]
    items = [(p, "h") for p in paths]
    results = dispatch(items, 10, config, logging.getLogger("t"), pool.start, workers)
    return results, pool


def test_two_workers_run_at_once_and_results_keep_the_input_order(tmp_path: Path) -> None:
    names = [f"f{i}.md" for i in range(6)]
    results, pool = _run_pool(tmp_path, names, {}, workers=2)
    assert pool.most_open == 2
    assert len(pool.started) == 2
    assert sorted(n for batch in pool.started for n in batch) == names
    assert [r.file_name for r in results] == names
    assert {r.status for r in results} == {"ok"}


def test_a_worker_dying_beside_another_loses_no_file(tmp_path: Path) -> None:
    names = [f"f{i}.md" for i in range(6)]
    results, pool = _run_pool(tmp_path, names, {"f1.md": ["die"]}, workers=2)
    assert [r.status for r in results] == ["ok"] * 6
    assert ["f1.md"] in pool.started  # the culprit, retried alone
    assert pool.open == 0


def test_a_poison_file_with_two_workers_is_failed_and_the_rest_stored(tmp_path: Path) -> None:
    names = [f"f{i}.md" for i in range(5)]
    results, pool = _run_pool(tmp_path, names, {"f3.md": ["die", "die"]}, workers=2)
    assert [r.status for r in results] == ["ok", "ok", "ok", "failed", "ok"]
    assert "poison file: it killed 2 conversion workers" in (results[3].error or "")
    assert pool.started.count(["f3.md"]) == 1
    assert pool.open == 0


@settings(max_examples=60, deadline=None)
@given(
    count=st.integers(min_value=0, max_value=40),
    batch_size=st.integers(min_value=1, max_value=12),
    workers=st.integers(min_value=2, max_value=6),
)
def test_balanced_batches_hold_every_item_once_within_the_batch_size(
    count: int, batch_size: int, workers: int
) -> None:
    items = [(f"/nowhere/f{i}.md", str(i)) for i in range(count)]
    batches = balanced_batches(items, batch_size, workers)
    assert sorted(item for batch in batches for item in batch) == sorted(items)
    assert all(0 < len(batch) <= batch_size for batch in batches)
    assert len(batches) >= min(workers, count)
    assert all(batch == sorted(batch, key=items.index) for batch in batches)


def test_balanced_batches_deal_the_largest_files_apart(tmp_path: Path) -> None:
    sizes = {"a.pdf": 9000, "b.md": 10, "c.pdf": 8000, "d.md": 20}
    for name, size in sizes.items():
        (tmp_path / name).write_bytes(b"x" * size)
    items = [(str(tmp_path / n), "h") for n in sizes]
    batches = balanced_batches(items, 10, 2)
    names = [[Path(p).name for p, _ in batch] for batch in batches]
    assert sorted(names) == [["a.pdf", "b.md"], ["c.pdf", "d.md"]]


def test_workers_count_auto_is_the_cores_memory_allows() -> None:
    cores = usable_cores()
    assert auto_workers(None) == cores
    assert auto_workers(1) == cores
    assert auto_workers(2**62) == 1  # no machine holds two such workers: still one
    assert resolve_workers(3, 2**62) == 3
    with pytest.raises(ValueError, match="workers must be >= 1"):
        resolve_workers(0, None)


@pytest.mark.parametrize("value", ["0", "-2", "many", ""])
def test_workers_option_refuses_what_is_not_auto_or_a_count(value: str) -> None:
    with pytest.raises(typer.BadParameter, match="neither 'auto' nor a whole number") as error:
        parse_workers(value)
    assert error.value.param_hint == "'--workers'"
    assert parse_workers("auto") is None
    assert parse_workers(" AUTO ") is None
    assert parse_workers("3") == 3
