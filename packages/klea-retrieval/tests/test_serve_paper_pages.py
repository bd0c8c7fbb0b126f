"""klea-serve's page images and files (issue 36), over HTTP with a real Chroma store.

``GET /api/papers/{file_name}/pages/{page}.png`` renders a library paper's page, the
passage ``chunk``'s regions framed; ``GET /api/papers/{file_name}/file`` serves the file.
Only files of ``--papers`` looked up by stored name and hash: unknown papers, passages
and pages, a file gone or changed, answer 404 or 409 with a reason that names no path.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from klea_utils.stores.config import RetrieverConfig
from klea_utils.stores.serve import ServeOptions, open_service
from klea_utils.stores.serve.http.app import build_app
from klea_utils.stores.serve.papers.library_files import _sha256
from klea_utils.stores.utils import instantiate_vector_store
from langchain_core.documents import Document
from test_serve_page_image import _framed, _pdf, _word_box

LOG = logging.getLogger("test")


@pytest.fixture
def served(tmp_path: Path, fake_embeddings) -> Iterator[tuple[TestClient, Path]]:
    papers = tmp_path / "papers"
    papers.mkdir()
    pdf = _pdf(papers / "a.pdf", rotate=90)
    box = _word_box(pdf)
    meta = {
        "file_name": "a.pdf",
        "file_hash": _sha256(pdf),
        "title": "Regions",
        "headings": [],
        "page_start": 1,
        "page_end": 1,
        "page_label": "12",
        "regions": [{"page": 1, "bbox": box}],
        "section_index": 0,
        "chunk_index": 0,
    }
    path = f"chroma:{tmp_path / 'chroma'}"
    store = instantiate_vector_store(path, "papers", fake_embeddings, LOG, create=True)
    doc = Document(page_content="Regions pin passages to the page", metadata=meta)
    store.add_documents([doc], ids=["a.pdf:0"])
    del store
    config = {"domains": {"neuro": {"vector_stores": [{"name": "papers", "path": path}]}}}
    options = ServeOptions(
        RetrieverConfig.model_validate_json(json.dumps(config)), fake_embeddings, papers=papers
    )
    service = open_service(options, progress=lambda _: None)
    with TestClient(build_app(service), base_url="http://127.0.0.1") as client:
        yield client, papers


def test_the_page_comes_with_the_passage_framed(served) -> None:
    client, _ = served
    plain = client.get("/api/papers/a.pdf/pages/1.png", params={"dpi": 72})
    assert plain.status_code == 200
    assert plain.headers["content-type"] == "image/png"
    framed = client.get("/api/papers/a.pdf/pages/1.png", params={"dpi": 72, "chunk": "a.pdf:0"})
    assert framed.status_code == 200
    left, top, right, bottom, width, height = _framed(framed.content)
    assert (width, height) == (792, 612)  # /Rotate 90: shown landscape
    assert right - left < bottom - top  # the line runs down the turned page
    with pytest.raises(AssertionError, match="no highlight"):  # no chunk: no frame
        _framed(plain.content)


def test_the_document_view_gives_regions_and_page_label(served) -> None:
    client, _ = served
    paper = client.get("/api/documents/a.pdf").json()
    (passage,) = paper["passages"]
    assert passage["page_label"] == "12"
    assert passage["regions"][0]["page"] == 1


def test_the_file_is_served_inline(served) -> None:
    client, papers = served
    answer = client.get("/api/papers/a.pdf/file")
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "application/pdf"
    assert answer.headers["content-disposition"].startswith("inline")
    assert answer.content == (papers / "a.pdf").read_bytes()


@pytest.mark.parametrize(
    ("url", "params", "status", "reason"),
    [
        ("/api/papers/b.pdf/file", {}, 404, "no paper 'b.pdf'"),
        ("/api/papers/a.pdf/pages/2.png", {}, 404, "pages 1-1, not 2"),
        ("/api/papers/a.pdf/pages/1.png", {"chunk": "a.pdf:9"}, 404, "no passage"),
        ("/api/papers/a.pdf/pages/1.png", {"dpi": 600}, 422, ""),
        ("/api/papers/..%2Fa.pdf/file", {}, 404, ""),
    ],
)
def test_what_the_library_does_not_hold_is_refused(served, url, params, status, reason) -> None:
    client, papers = served
    answer = client.get(url, params=params)
    assert answer.status_code == status, answer.text
    assert reason in answer.text
    assert str(papers) not in answer.text


def test_a_changed_or_moved_file_says_why(served) -> None:
    client, papers = served
    path = papers / "a.pdf"
    path.write_bytes(path.read_bytes() + b"\n% edited\n")
    changed = client.get("/api/papers/a.pdf/file")
    assert changed.status_code == 409
    assert "changed since the stores were built" in changed.json()["detail"]
    assert client.get("/api/papers/a.pdf/pages/1.png").status_code == 409
    path.unlink()
    gone = client.get("/api/papers/a.pdf/file")
    assert gone.status_code == 404
    assert "no longer in the papers folder" in gone.json()["detail"]
    assert str(papers) not in gone.text
