"""The search page in Debian's chromium: hostile papers show as text, and the token prompt.

A tiny library whose title, authors, journal and text are ``<script>`` and
``<img onerror>`` payloads is searched and opened; nothing may run (``window.__pwned``
stays unset, no dialog opens) and the payloads show literally. The page runs once under
its Content-Security-Policy (no violation may be reported: the page itself is CSP-clean)
and once with CSP bypassed, so the escaping alone is proven, not only the policy.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from klea_utils.stores.config import RetrieverConfig
from klea_utils.stores.exceptions import ServeStartupError
from klea_utils.stores.serve import AccessPolicy, ServeOptions, build_app, open_service
from langchain_core.documents import Document
from retrieval_support import write_corpus_pickle, write_fts5_index
from serve_support import ServerThread, chromium, free_port

pytestmark = pytest.mark.slow

TOKEN = "page-token-0123456789abcdef"
TITLE = "<script>window.__pwned = 'title'; alert('title')</script>"
AUTHOR = "<img src=x onerror=\"window.__pwned = 'author'; alert('author')\">"
JOURNAL = "<svg onload=\"window.__pwned = 'journal'\"></svg>"
TEXT = (
    "Heatshock chaperones <img src=x onerror=\"window.__pwned = 'text'; alert('text')\"> "
    "fold proteins. <script>window.__pwned = 'text'</script> Heatshock again."
)
WATCH = """
window.__violations = [];
document.addEventListener("securitypolicyviolation",
  (e) => window.__violations.push(e.violatedDirective + " " + e.blockedURI));
"""


def _hostile_library(folder: Path) -> Path:
    meta = {"title": TITLE, "authors": [AUTHOR, "Ann Smith"], "journal": JOURNAL, "year": 2020}
    docs = [
        Document(id=f"evil.pdf:{i}", page_content=text, metadata={"file_name": "evil.pdf", **meta})
        for i, text in enumerate([TEXT, f"Second passage {AUTHOR} heatshock."])
    ]
    pickle_path = write_corpus_pickle(folder / "bm25.pkl", docs)
    write_fts5_index(folder / "chunks.sqlite", docs)
    bm25 = [
        {"name": "p", "path": str(pickle_path)},
        {"name": "f", "path": f"fts5:{folder}/chunks.sqlite"},
    ]
    config = folder / "stores.json"
    config.write_text(json.dumps({"domains": {"evil": {"bm25_stores": bm25}}}), encoding="utf-8")
    return config


def _server(
    config: Path, embeddings, access: AccessPolicy, *, broken_facets: bool = False
) -> ServerThread:
    options = ServeOptions(
        config=RetrieverConfig.model_validate_json(config.read_text()),
        embedding_model=embeddings,
        fts5_index=config.parent / "chunks.sqlite",
    )
    service = open_service(options, progress=lambda _: None)
    if broken_facets:

        async def facets(*args: object, **kwargs: object) -> dict[str, object]:
            raise ServeStartupError("the stores could not be loaded: OSError: disk gone")

        service.facets = facets  # type: ignore[method-assign]
    port = free_port()
    return ServerThread(build_app(service, port=port, access=access), port)


@pytest.fixture(scope="module")
def library(tmp_path_factory) -> Path:
    return _hostile_library(tmp_path_factory.mktemp("serve-xss"))


@pytest.fixture(scope="module")
def server(library, fake_embeddings):
    with _server(library, fake_embeddings, AccessPolicy()) as running:
        yield running


@pytest.fixture(scope="module")
def locked_server(library, fake_embeddings):
    with _server(library, fake_embeddings, AccessPolicy(token=TOKEN)) as running:
        yield running


@pytest.fixture(scope="module")
def failing_server(library, fake_embeddings):
    with _server(library, fake_embeddings, AccessPolicy(), broken_facets=True) as running:
        yield running


@pytest.fixture(scope="module")
def browser(server, locked_server, failing_server):
    with chromium() as launched:  # after the servers (see chromium())
        yield launched


def _open(browser, url: str, *, bypass_csp: bool = False):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=bypass_csp)
    context.add_init_script(WATCH)
    page = context.new_page()
    dialogs: list[str] = []
    errors: list[str] = []

    def dismiss(dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", dismiss)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(url)
    return context, page, dialogs, errors


@pytest.mark.parametrize("bypass_csp", [False, True], ids=["with-csp", "csp-bypassed"])
def test_hostile_metadata_and_text_show_as_text(browser, server, bypass_csp):
    context, page, dialogs, errors = _open(
        browser, server.url + "/?q=heatshock&mode=lexical", bypass_csp=bypass_csp
    )
    try:
        page.wait_for_selector("#hits .hit h3 a")
        page.wait_for_selector("#facet-journal li")
        hits = page.locator("#hits").inner_text()
        assert TITLE in hits
        assert "onerror=\"window.__pwned = 'author'" in hits
        facets = page.locator("#facets").inner_text()
        assert JOURNAL in facets
        page.locator("#hits .hit h3 a").first.click()
        page.wait_for_selector("#paper:not([hidden]) .passages li")
        paper = page.locator("#paper").inner_text()
        assert TITLE in paper
        assert JOURNAL in paper
        assert "<script>window.__pwned = 'text'</script>" in paper
        page.wait_for_timeout(300)  # give an onerror of a broken <img> time to fire
        assert page.evaluate("window.__pwned") is None
        assert page.locator("#paper img, #hits img, #paper script, #hits script").count() == 0
        assert dialogs == []
        assert errors == []
        assert page.evaluate("window.__violations") == []
    finally:
        context.close()


def test_the_page_asks_for_the_token_once_per_tab(browser, locked_server):
    context, page, dialogs, errors = _open(
        browser, locked_server.url + "/?q=heatshock&mode=lexical"
    )
    try:
        page.wait_for_selector("#token-dialog[open] #token-input")
        page.fill("#token-input", "wrong-token-0123456789")
        page.keyboard.press("Enter")
        page.wait_for_selector("#token-dialog[open] label:has-text('refused')")
        page.fill("#token-input", TOKEN)
        page.keyboard.press("Enter")
        page.wait_for_selector("#hits .hit h3 a")
        assert TITLE in page.locator("#hits").inner_text()
        assert page.evaluate("sessionStorage.getItem('klea-serve-token')") == TOKEN
        page.reload()
        page.wait_for_selector("#hits .hit h3 a")
        assert page.locator("#token-dialog").count() == 0
        assert (dialogs, errors, page.evaluate("window.__violations")) == ([], [], [])
    finally:
        context.close()


def test_the_filters_say_why_they_are_missing(browser, locked_server, failing_server, tmp_path):
    # the token prompt given up (Escape): the facets answer 401
    context, page, _, errors = _open(browser, locked_server.url + "/")
    try:
        page.wait_for_selector("#token-dialog[open] #token-input")
        page.keyboard.press("Escape")
        page.wait_for_selector("#facets-error:not([hidden])")
        assert "need the access token" in page.locator("#facets-error").inner_text()
        assert errors == []
    finally:
        context.close()
    # a store that cannot be read: the facets answer 503 and the page says so
    context, page, _, errors = _open(browser, failing_server.url + "/")
    try:
        page.wait_for_selector("#facets-error:not([hidden])")
        shown = page.locator("#facets-error").inner_text()
        assert shown.startswith("The filters could not be loaded: ServeStartupError: ")
        assert "disk gone" in shown
        page.screenshot(path=str(tmp_path / "facets-error.png"))
        assert errors == []
    finally:
        context.close()
