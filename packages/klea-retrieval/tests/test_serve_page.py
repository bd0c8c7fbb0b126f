"""The klea-serve search page in Debian's chromium, driven by Playwright (keyboard first).

The browser is the system one (``apt-get install chromium``; scripts/test installs it):
browsers cannot be downloaded here, so Playwright launches ``/usr/bin/chromium``.
"""

from __future__ import annotations

import pytest
from klea_utils.stores.config import RetrieverConfig
from klea_utils.stores.serve import ServeOptions
from langchain_core.documents import Document
from retrieval_support import write_fts5_index
from serve_support import build_stores, chromium, serving

AUTHORS = ["Rosa Ito", "Tom Berg", "Lena Vos", "Omar Diaz", "Kai Lund"]
PURKINJE = [  # one paper, many authors, four passages that match one word
    Document(
        id=f"purkinje2022.pdf:{i}",
        page_content=text,
        metadata={
            "file_name": "purkinje2022.pdf",
            "title": "Purkinje cell timing",
            "authors": AUTHORS,
            "year": 2022,
            "page_start": page,
            "page_end": page,
            "chunk_index": i,
        },
    )
    for i, (page, text) in enumerate(
        [
            (1, "Purkinje cells fire complex spikes."),
            (2, "Climbing fibres drive Purkinje complex spikes at low rates."),
            (3, "Simple spikes of Purkinje cells encode timing."),
            (5, "Purkinje output inhibits the deep nuclei."),
        ]
    )
]
DENDRITES = [  # one paper per language, each naming "dendrite" (ASCII, so unicode61 finds it)
    Document(
        id=f"{name}.pdf:0",
        page_content=text,
        metadata={"file_name": f"{name}.pdf", "title": title, "year": 2020, "language": code},
    )
    for name, title, code, text in [
        ("dendrite_zh", "树突钙信号", "zh", "树突 (dendrite) 中的钙信号随突触输入而变化。"),
        ("dendrite_ru", "Дендритные спайки", "ru", "Дендритные (dendrite) спайки нейронов."),
        ("dendrite_en", "Dendritic integration", "en", "Each dendrite integrates synaptic input."),
    ]
]


@pytest.fixture(scope="module")
def server(tmp_path_factory, fake_embeddings):
    stores = build_stores(tmp_path_factory.mktemp("serve-page"), fake_embeddings)
    write_fts5_index(stores.fts5, PURKINJE + DENDRITES)
    options = ServeOptions(
        config=RetrieverConfig.model_validate_json(stores.config.read_text()),
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


@pytest.fixture(params=[(1280, 900), (390, 844)], ids=["desktop", "phone"])
def page(request, browser, server):
    width, height = request.param
    # Playwright's wait_for_function evaluates a string, which the page's CSP forbids
    # ('unsafe-eval'); test_serve_xss.py runs the page under its CSP.
    context = browser.new_context(viewport={"width": width, "height": height}, bypass_csp=True)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(server.url + "/")
    page.wait_for_selector("#status:has-text('Type a question')")
    yield page
    context.close()
    assert errors == []


def _search_with_keyboard(page, query: str) -> None:
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.id") == "q"
    page.keyboard.press("Control+A")
    page.keyboard.type(query)
    page.keyboard.press("Enter")


def test_query_results_highlights_chips_and_graph(page):
    page.select_option("#mode", "lexical")
    _search_with_keyboard(page, "golgi OR dopamine")
    page.wait_for_selector("#status:has-text('papers')")
    titles = page.locator("#hits .hit h3 a").all_inner_texts()
    assert set(titles) == {"Cerebellar models", "Basal ganglia"}
    marks = {m.lower() for m in page.locator("#hits mark").all_inner_texts()}
    assert marks & {"golgi", "dopamine"}
    assert page.locator("#chips .chip").all_inner_texts() == ["golgi", "dopamine"]
    bylines = page.locator("#hits .byline").all_inner_texts()
    assert "Ankur Sinha, Padraig Gleeson · 2021" in bylines
    page.wait_for_selector("#graph-panel:not([hidden]) circle")
    no_overflow = "document.documentElement.scrollWidth <= window.innerWidth"
    assert page.evaluate(no_overflow)


def test_facet_filter_then_paper_view(page):
    page.select_option("#mode", "lexical")
    _search_with_keyboard(page, "neurons")
    page.wait_for_selector("#facet-author input")
    page.get_by_label("Ann Smith").check()
    page.wait_for_function("document.querySelectorAll('#hits .hit').length === 1")
    assert page.locator("#hits .hit h3 a").inner_text() == "Basal ganglia"
    assert "author=Ann+Smith" in page.url
    page.locator("#hits .hit h3 a").focus()
    page.keyboard.press("Enter")
    page.wait_for_selector("#paper:not([hidden]) .passages li")
    assert page.locator("#paper-body h2").inner_text() == "Basal ganglia"
    assert "dopamine neurons" in page.locator("#paper .passages").inner_text()
    page.keyboard.press("Escape")
    page.wait_for_selector("#results:not([hidden]) .hit")


def test_year_range(page):
    page.select_option("#mode", "lexical")
    _search_with_keyboard(page, "neurons")
    page.wait_for_function("document.querySelectorAll('#hits .hit').length === 3")
    page.fill("#year-from", "2010")
    page.fill("#year-to", "2016")
    page.keyboard.press("Tab")
    page.wait_for_function("document.querySelectorAll('#hits .hit').length === 1")
    assert page.locator("#hits .hit h3 a").inner_text() == "Calcium imaging"
    assert "year_from=2010" in page.url
    assert "year_to=2016" in page.url


def test_malformed_query_shows_the_caret(page):
    _search_with_keyboard(page, "golgi AND (cells")
    error = page.wait_for_selector("#query-error:not([hidden])")
    assert error.inner_text().splitlines()[:2] == ["golgi AND (cells", "          ^"]
    assert page.get_attribute("#q", "aria-invalid") == "true"
    assert page.locator("#hits .hit").count() == 0


def test_a_paper_is_one_card_with_its_best_passages(page):
    page.select_option("#mode", "lexical")
    _search_with_keyboard(page, "purkinje")
    page.wait_for_selector("#status:has-text('1 paper (lexical')")
    card = page.locator("#hits .paper-card")
    assert card.count() == 1
    assert card.locator("h3 a").inner_text() == "Purkinje cell timing"
    byline = card.locator(".byline").inner_text()
    assert byline == "Rosa Ito, Tom Berg, Lena Vos et al. · 2022 · pp. 1–3, 5"
    passages = card.locator(".best-passages > li")
    assert passages.count() == 3
    assert all(m.lower() == "purkinje" for m in card.locator("mark").all_inner_texts())
    assert passages.first.locator(".where").inner_text().startswith("p. ")
    assert "4 matching passages" in card.inner_text()
    # facet groups with no values are hidden: the paper names no journal
    # (waited for: the page first draws the facets of the whole library, then the query's)
    page.wait_for_selector("#facet-author li")
    page.wait_for_selector("#facet-journal", state="hidden")
    assert page.locator("#facet-author").is_visible()
    # the keyboard reaches the card's title; the paper view names every author
    page.keyboard.press("Tab")  # from the search box: the mode, the button, ...
    for _ in range(20):
        if page.evaluate("document.activeElement.classList.contains('title')"):
            break
        page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Purkinje cell timing"
    page.keyboard.press("Enter")
    page.wait_for_selector("#paper:not([hidden]) .passages li")
    assert page.locator("#paper-body .byline").inner_text().startswith(", ".join(AUTHORS))
    assert page.locator("#paper .passages > li").count() == 4
    no_overflow = "document.documentElement.scrollWidth <= window.innerWidth"
    assert page.evaluate(no_overflow)


def test_language_filter_by_keyboard(page):
    page.select_option("#mode", "lexical")
    _search_with_keyboard(page, "dendrite")
    page.wait_for_selector("#status:has-text('3 papers (lexical')")
    page.wait_for_selector("#facet-language li")
    labels = page.locator("#facet-language label").all_inner_texts()
    assert sorted(labels) == ["Chinese (zh) (1)", "English (en) (1)", "Russian (ru) (1)"]
    box = page.get_by_label("Chinese (zh)")
    box.focus()
    page.keyboard.press("Space")
    page.wait_for_function("document.querySelectorAll('#hits .hit').length === 1")
    assert page.locator("#hits .hit h3 a").inner_text() == "树突钙信号"
    assert "language=zh" in page.url
    page.get_by_label("Russian (ru)").check()
    page.wait_for_function("document.querySelectorAll('#hits .hit').length === 2")
    assert "language=zh&language=ru" in page.url
    no_overflow = "document.documentElement.scrollWidth <= window.innerWidth"
    assert page.evaluate(no_overflow)
    page.click("#clear-filters")
    page.wait_for_function("document.querySelectorAll('#hits .hit').length === 3")
    assert "language=" not in page.url
