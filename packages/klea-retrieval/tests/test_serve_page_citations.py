"""The paper view lists its references and "cited by, in this library" (issue 38).

Debian's chromium driven by Playwright, under the page's own Content-Security-Policy, over
real stores and a citation-links file in the build's format.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from klea_utils.stores.config import read_retriever_config
from klea_utils.stores.serve import ServeOptions
from serve_support import build_stores, chromium, serving
from test_serve_citations import SENTENCE, _links

SHOTS = os.environ.get("KLEA_PAGE_SCREENSHOTS")  # a folder: save screenshots there


@pytest.fixture(scope="module")
def server(tmp_path_factory, fake_embeddings):
    folder = tmp_path_factory.mktemp("serve-page-citations")
    stores = build_stores(folder, fake_embeddings)
    links = folder / "serve_tests.citations.json"
    links.write_text(json.dumps(_links([SENTENCE])), encoding="utf-8")
    config = json.loads(stores.config.read_text())
    config["domains"]["neuro"]["citations"] = links.name
    stores.config.write_text(json.dumps(config), encoding="utf-8")
    options = ServeOptions(
        config=read_retriever_config(stores.config),
        embedding_model=fake_embeddings,
        fts5_index=stores.fts5,
        vectors=stores.vectors,
    )
    with serving(options) as running:
        yield running


@pytest.fixture(scope="module")
def browser(server):
    with chromium() as launched:  # after the servers (see chromium())
        yield launched


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1100, "height": 800})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    context.close()
    assert errors == []


def _shot(page, name: str) -> None:
    if SHOTS:
        page.screenshot(path=str(Path(SHOTS) / f"{name}.png"), full_page=True)


def test_references_link_to_the_library_and_the_cited_paper_names_who_cites_it(page, server):
    page.goto(server.url + "/?doc=sinha2021.pdf")
    page.wait_for_selector("#paper:not([hidden]) .references li")
    assert page.locator(".citations summary").inner_text() == "References (2, 1 in this library)"
    items = page.locator(".references li")
    assert items.count() == 2
    assert "Dendritic integration of excitatory synaptic input" in items.nth(0).inner_text()
    assert items.nth(1).locator("a").count() == 0  # not in the library: no link
    assert page.locator(".cited-by").count() == 0
    _shot(page, "citing-paper")

    items.nth(0).locator("a").click()
    page.wait_for_selector("#paper-body h2:has-text('Dendritic integration')")
    page.wait_for_selector(".cited-by li")
    assert "doc=magee2000.pdf" in page.url
    assert page.locator(".citations h3").inner_text() == "Cited by, in this library (1)"
    assert page.locator(".cited-by a").inner_text() == "Cerebellar models"
    assert page.locator(".cited-by blockquote").all_inner_texts() == [SENTENCE]
    assert page.locator(".references").count() == 0
    _shot(page, "cited-paper")

    page.locator(".cited-by a").click()
    page.wait_for_selector("#paper-body h2:has-text('Cerebellar models')")
    page.go_back()
    page.wait_for_selector("#paper-body h2:has-text('Dendritic integration')")


def test_a_paper_without_citations_shows_no_citation_section(page, server):
    page.goto(server.url + "/?doc=jones2015.pdf")
    page.wait_for_selector("#paper:not([hidden]) .passages li")
    page.wait_for_load_state("networkidle")
    assert page.locator(".citations").all_inner_texts() == ["", ""]


def test_the_results_graph_draws_a_citation_as_a_dashed_arrow(page, server):
    page.goto(f"{server.url}/?q=dendritic+OR+cerebellum&mode=lexical")
    page.wait_for_selector("#graph-panel:not([hidden]) circle")
    page.wait_for_selector("#graph path.edge.citation")  # a curve beside the straight line
    cites = page.locator("#graph path.edge.citation")
    assert cites.count() == 1
    assert cites.get_attribute("marker-end") == "url(#cites)"
    dash = page.evaluate(
        "getComputedStyle(document.querySelector('#graph path.citation')).strokeDasharray"
    )
    assert dash not in ("", "none")
    assert page.locator("#graph line.edge.similarity").count() >= 1
    _shot(page, "graph-citations")
