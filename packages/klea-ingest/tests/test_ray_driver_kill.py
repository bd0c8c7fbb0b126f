"""A ``build --ray local`` driver killed mid-run, then run again, converges to the stores of
an uninterrupted run.

The driver is the only writer of the chunk cache, the manifest and the stores; the Ray
workers only send results back. So a driver killed (SIGKILL) while Ray converts, and the
same command run again, must leave the stores exactly as one uninterrupted run leaves
them (here the local path, which test_ray_parity shows equal to the Ray path): the same
chunk ids, texts and metadata, each id once, in the vector store, the BM25 corpus and the
FTS5 index. The private Ray instance must not outlive its killed driver either (but for
its two agents, which take a minute; see ``_AGENTS``). Ray's
temporary folder is the test's own (``RAY_TMPDIR``), so every process of the instance is
found by its command line, and teardown kills whatever is left.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil
import pytest
from ingest_corpus import sample_paragraphs, write_text_pdf
from ingest_store_support import fts5_records
from klea_utils.stores.chunk_cache import ChunkCache
from klea_utils.stores.retrieval.bm25 import read_corpus

pytestmark = pytest.mark.slow
CLI = str(Path(sys.executable).with_name("klea-stores-create"))
FILES = 24
_AGENTS = ("ray::DashboardAgent", "ray::RuntimeEnvAgent")
"""Ray's agents notice their raylet is gone at once but exit only after failing to reach
the dead GCS (Ray's one-minute reconnect time-out, measured with Ray 2.60); every other
process of the instance goes at once. Waiting that minute out is left to teardown."""


def _env(ray_tmp: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        RAY_TMPDIR=str(ray_tmp),
        RAY_AUTH_MODE="disabled",
        RAY_ENABLE_UV_RUN_RUNTIME_ENV="0",
        RAY_USAGE_STATS_ENABLED="0",
        HF_HUB_OFFLINE="1",
        PYTHONWARNINGS="ignore",
    )
    return env


def _command(work: Path, *extra: str) -> list[str]:
    return [
        CLI,
        "build",
        str(work / "papers"),
        "--store",
        f"chroma:{work / 'chroma'}",
        "--collection",
        "papers",
        "--bm25-store",
        str(work / "bm25.pkl"),
        "--fts5-store",
        str(work / "fts5.sqlite"),
        "--max-tokens",
        "120",
        *extra,
    ]


def _ray_processes(ray_tmp: Path) -> list[psutil.Process]:
    """Every live process of the Ray instance whose temporary folder is ``ray_tmp``."""
    found: list[psutil.Process] = []
    for proc in psutil.process_iter(["cmdline"]):
        with contextlib.suppress(psutil.Error):
            if proc.pid != os.getpid() and any(
                str(ray_tmp) in part for part in proc.info["cmdline"] or []
            ):
                found.append(proc)
    return found


def _kill_all(processes: list[psutil.Process]) -> None:
    for proc in processes:
        with contextlib.suppress(psutil.Error):
            proc.kill()
    psutil.wait_procs(processes, timeout=10)


def _run_killed_mid_conversion(work: Path, env: dict[str, str]) -> tuple[int, list[int]]:
    """Start the Ray build; SIGKILL the driver once a few files are cached.

    Returns the number of cache entries at the kill and the process ids of the driver's
    descendants (its Ray instance) just before it.
    """
    cache = ChunkCache(work / "papers")
    with subprocess.Popen(
        _command(work, "--ray", "local"),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    ) as proc:
        driver = psutil.Process(proc.pid)
        family: list[int] = []
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and proc.poll() is None:
            with contextlib.suppress(psutil.Error):
                family = [child.pid for child in driver.children(recursive=True)]
            if len(cache.entries()) >= 3:
                break
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
    return len(cache.entries()), family


def _survivors(pids: list[int], timeout: float, but: tuple[str, ...] = ()) -> list[tuple[int, str]]:
    """``(pid, name)`` of the processes of ``pids`` (less those named in ``but``) still
    alive after up to ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        alive = []
        for pid in pids:
            with contextlib.suppress(psutil.Error):
                proc = psutil.Process(pid)
                if proc.status() != psutil.STATUS_ZOMBIE and proc.name() not in but:
                    alive.append((pid, proc.name()))
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.5)


def test_killed_ray_driver_rerun_converges_to_an_uninterrupted_build(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i in range(FILES):
        write_text_pdf(corpus / f"p{i:02d}.pdf", f"Paper {i}", sample_paragraphs(8, seed=i))
    # A short folder: Ray's socket paths must fit in 107 bytes.
    ray_tmp = Path(tmp_path_factory.mktemp("rk"))
    env = _env(ray_tmp)
    reference, killed = tmp_path / "reference", tmp_path / "killed"
    for work in (reference, killed):
        shutil.copytree(corpus, work / "papers")

    try:
        at_kill, family = _run_killed_mid_conversion(killed, env)
        assert 0 < at_kill < FILES, f"the driver was not killed mid-conversion ({at_kill})"
        assert family, "the driver never started its Ray instance"
        left = _survivors(family, timeout=15, but=_AGENTS)
        assert not left, f"the killed driver's Ray processes live on: {left}"

        rerun = subprocess.run(
            _command(killed, "--ray", "local", "-v"),
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        output = rerun.stdout + rerun.stderr
        assert rerun.returncode == 0, output[-3000:]
        found = re.search(rf"{FILES} source file\(s\): (\d+) cached, (\d+) to convert", output)
        assert found, output[-3000:]
        assert int(found[1]) >= at_kill  # what the killed run cached is not converted again
        assert int(found[1]) + int(found[2]) == FILES
        done = subprocess.run(
            _command(reference), env=env, capture_output=True, text=True, timeout=600
        )
        assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    finally:
        _kill_all(_ray_processes(ray_tmp))

    expected, got = _store(reference), _store(killed)
    assert len(expected["chroma_ids"]) > FILES
    assert len(got["chroma_ids"]) == len(set(got["chroma_ids"])), "duplicate chunk ids"
    assert got["chroma"] == expected["chroma"]
    assert got["bm25"] == expected["bm25"]
    assert got["fts5"] == expected["fts5"]
    assert len(ChunkCache(killed / "papers").entries()) == FILES


def _store(work: Path) -> dict[str, Any]:
    from klea_utils.stores.utils import instantiate_vector_store

    store = instantiate_vector_store(
        f"chroma:{work / 'chroma'}", "papers", None, logging.getLogger("t")
    )
    got = store.get(include=["documents", "metadatas"])
    bm25 = work / "bm25.pkl"
    fts5 = work / "fts5.sqlite"
    return {
        "chroma_ids": list(got["ids"]),
        "chroma": {
            i: (doc, meta)
            for i, doc, meta in zip(got["ids"], got["documents"], got["metadatas"], strict=True)
        },
        "bm25": sorted((d.id, d.page_content, d.metadata) for d in read_corpus(bm25)),
        "fts5": _fts5_bodies(fts5),
    }


def _fts5_bodies(path: Path) -> dict[str, Any]:
    return {i: (d.body, d.title, d.metadata) for i, d in fts5_records(path).items()}
