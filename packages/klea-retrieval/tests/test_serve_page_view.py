"""The paper view shows a passage's page with the passage framed (issue 36), in Chromium.

Keyboard first, at desktop and phone width: the passage's "Show page" button fetches the
page image (the access token would go with it) and shows it within the page's width.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from klea_utils.stores.config import RetrieverConfig
from klea_utils.stores.serve import ServeOptions
from klea_utils.stores.serve.papers.library_files import _sha256
from klea_utils.stores.utils import instantiate_vector_store
from langchain_core.documents import Document
from serve_support import chromium, serving
from test_serve_page_image import _pdf, _word_box

SCREENSHOTS = Path("/tmp/klea-serve-page-view")


@pytest.fixture(scope="module")
def server(tmp_path_factory, fake_embeddings):
    folder = tmp_path_factory.mktemp("page-view")
    papers = folder / "papers"
    papers.mkdir()
    pdf = _pdf(papers / "regions.pdf")
    meta = {
        "file_name": "regions.pdf",
        "file_hash": _sha256(pdf),
        "title": "Regions on the page",
        "headings": ["Results"],
        "page_start": 1,
        "page_end": 1,
        "page_label": "12",
        "regions": [{"page": 1, "bbox": _word_box(pdf)}],
        "section_index": 0,
        "chunk_index": 0,
    }
    path = f"chroma:{folder / 'chroma'}"
    store = instantiate_vector_store(
        path, "papers", fake_embeddings, logging.getLogger("test"), create=True
    )
    doc = Document(page_content="Regions pin passages to the page", metadata=meta)
    store.add_documents([doc], ids=["regions.pdf:0"])
    del store
    config = {"domains": {"neuro": {"vector_stores": [{"name": "papers", "path": path}]}}}
    options = ServeOptions(
        RetrieverConfig.model_validate_json(json.dumps(config)), fake_embeddings, papers=papers
    )
    with serving(options) as running:
        yield running


@pytest.fixture(scope="module")
def browser(server):
    with chromium() as launched:  # after the servers (see chromium())
        yield launched


@pytest.mark.parametrize(("width", "height"), [(1280, 900), (390, 844)], ids=["desktop", "phone"])
def test_the_passage_is_shown_framed_on_its_page(browser, server, width, height) -> None:
    context = browser.new_context(viewport={"width": width, "height": height})  # page's CSP on
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(server.url + "/?doc=regions.pdf")
        page.wait_for_selector("#paper:not([hidden]) .passages li")
        assert "(p. 1, printed 12)" in page.locator("#paper .passages h3").inner_text()
        page.get_by_role("button", name="Show page 1").focus()
        button = page.locator("button.show-page")
        page.keyboard.press("Enter")
        image = page.locator("img.page-image")
        image.wait_for()
        page.wait_for_function(
            "() => { const i = document.querySelector('img.page-image');"
            " return i && i.complete && i.naturalWidth > 0; }"
        )
        assert button.get_attribute("aria-expanded") == "true"
        assert button.inner_text() == "Hide page 1"
        assert "framed in orange" in (image.get_attribute("alt") or "")
        box = image.bounding_box()
        assert box is not None
        assert box["width"] <= width  # fits the phone's width
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / f"paper-view-{width}.png"), full_page=True)
        page.keyboard.press("Enter")  # the button still has the focus: hide the page
        assert page.locator("figure.page-view").is_hidden()
    finally:
        context.close()
    assert errors == []
