"""A store rebuilt while ``klea-serve`` serves it: new contents, no restart, no failed request.

``klea-stores-create build`` writes one paper into Chroma, a pickled BM25 corpus and an
FTS5 index and the stores configuration; ``klea-serve`` serves that configuration while a
client keeps asking (retrieve, search, a paper); ``build`` runs again on the folder with a
second paper. The service notices the changed stores on its own, reopens them while the
old ones keep answering, and the client sees the new paper with every request answered
200 and no leg left out. ``POST /api/reload`` then reopens them on demand.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import threading
import time
from collections import Counter
from pathlib import Path

import httpx
import pytest
from integration_cli import BIN, ENV, SAMPLE_PAPERS, run_command

pytestmark = pytest.mark.slow

NEW_PAPER = "dark-matter-dwarf-galaxies.md"
QUESTION = "dark matter in dwarf galaxies"


def _build(tmp_path: Path) -> subprocess.CompletedProcess[str]:
    argv = ["build", "my-papers", "--store", "chroma:stores/chroma", "--collection", "papers"]
    argv += ["--bm25-store", "stores/papers.bm25", "--fts5-store", "stores/papers.sqlite"]
    argv += ["--max-tokens", "256", "--write-stores-config", "stores/stores.json"]
    return run_command("klea-stores-create", *argv, cwd=tmp_path, timeout=600)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class Client:
    """Asks the server in a loop; counts answers by status and notes whether the new
    paper was found (by retrieval and by the paper view)."""

    def __init__(self, url: str) -> None:
        self.http = httpx.Client(base_url=url, timeout=60)
        self.statuses: Counter[str] = Counter()
        self.failures: list[str] = []
        self.seen_new = threading.Event()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def ask(self) -> None:
        retrieved = self.http.post("/api/retrieve", json={"query": QUESTION, "k": 3})
        searched = self.http.get("/api/search", params={"q": QUESTION, "mode": "lexical"})
        paper = self.http.get(f"/api/documents/{NEW_PAPER}")
        for name, response in [("retrieve", retrieved), ("search", searched)]:
            self.statuses[f"{name} {response.status_code}"] += 1
            if response.status_code != 200:
                self.failures.append(f"{name}: {response.status_code} {response.text[:300]}")
        notes = retrieved.json().get("notes") if retrieved.status_code == 200 else None
        if notes:
            self.failures.append(f"retrieve notes: {notes}")
        self.statuses[f"document {paper.status_code}"] += 1
        files = {p["file"] for p in retrieved.json().get("passages", [])}
        if NEW_PAPER in files and paper.status_code == 200:
            self.seen_new.set()

    def run(self) -> None:
        while not self.stop.wait(0.2):  # a steady client, not a load test: leave build the CPU
            try:
                self.ask()
            except httpx.HTTPError as exc:
                self.failures.append(f"{type(exc).__name__}: {exc}")


@pytest.mark.timeout(1800)  # three processes load the embedding model; slow on a busy machine
def test_a_rebuilt_store_is_served_without_restart_or_failure(tmp_path: Path) -> None:
    folder = tmp_path / "my-papers"
    folder.mkdir()
    shutil.copy(SAMPLE_PAPERS / "crispr-off-target.md", folder)
    first = _build(tmp_path)
    assert first.returncode == 0, first.stderr

    port = _free_port()
    log = (tmp_path / "serve.log").open("w", encoding="utf-8")
    command = [str(BIN / "klea-serve"), "--stores-config", "stores/stores.json"]
    command += ["--port", str(port), "--reload-interval", "0.5"]
    server = subprocess.Popen(command, cwd=tmp_path, env=ENV, stdout=log, stderr=log)
    client = Client(f"http://127.0.0.1:{port}")
    try:
        deadline = time.monotonic() + 300
        while True:
            assert server.poll() is None, (tmp_path / "serve.log").read_text()
            assert time.monotonic() < deadline, "klea-serve did not start"
            try:
                if client.http.get("/api/health").status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.2)
        client.ask()
        assert not client.seen_new.is_set()
        assert client.statuses["document 404"] == 1
        client.thread.start()

        shutil.copy(SAMPLE_PAPERS / NEW_PAPER, folder)
        second = _build(tmp_path)
        assert second.returncode == 0, second.stderr
        assert client.seen_new.wait(120), (tmp_path / "serve.log").read_text()
        time.sleep(1)  # a few more rounds on the new stores
        client.stop.set()
        client.thread.join(120)

        reloaded = client.http.post("/api/reload")
        assert reloaded.status_code == 200, reloaded.text
        assert reloaded.json()["generation"] >= 3
    finally:
        client.stop.set()
        client.thread.join(120) if client.thread.is_alive() else None
        client.http.close()
        server.terminate()
        server.wait(60)
        log.close()
    output = (tmp_path / "serve.log").read_text()
    assert client.failures == [], client.failures
    assert client.statuses["retrieve 200"] > 3, client.statuses
    assert "reloading the stores (the stores changed on disk)" in output
    assert "serving the reloaded stores (generation 2)" in output
