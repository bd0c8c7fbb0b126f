"""Search hits grouped by paper: cards ranked by their best passage, authors cut to three."""

from __future__ import annotations

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from klea_utils.stores.serve.search.grouping import group_by_paper


def _hit(file: str, n: int, pages: list[int], authors: int = 2) -> dict:
    return {
        "record_id": f"{file}:{n}",
        "file": file,
        "title": file.upper(),
        "authors": [f"Author {i}" for i in range(authors)],
        "year": 2020,
        "journal": None,
        "doi": None,
        "headings": ["Results"],
        "pages": pages,
        "score": 1.0 / (n + 1),
        "lexical_rank": n + 1,
        "semantic_rank": None,
        "snippets": [{"field": "body", "text": f"text {n}", "highlights": []}],
    }


def test_cards_rank_papers_by_their_best_passage():
    hits = [
        _hit("a.pdf", 0, [3], authors=17),
        _hit("b.pdf", 1, [1, 2]),
        _hit("a.pdf", 2, [5]),
        _hit("a.pdf", 3, [4]),
        _hit("a.pdf", 4, [9]),
        _hit("c.pdf", 5, []),
    ]
    cards = group_by_paper(hits, limit=2)
    assert [(c["rank"], c["file"]) for c in cards] == [(1, "a.pdf"), (2, "b.pdf")]
    first = cards[0]
    assert (first["authors"], first["authors_total"]) == (
        ["Author 0", "Author 1", "Author 2"],
        17,
    )
    assert first["pages"] == [3, 4, 5, 9]
    assert first["hits"] == 4
    assert [p["record_id"] for p in first["passages"]] == ["a.pdf:0", "a.pdf:2", "a.pdf:3"]
    assert first["passages"][0]["snippets"][0]["text"] == "text 0"
    assert cards[1]["pages"] == [1, 2]
    with pytest.raises(ValueError, match="at least 1"):
        group_by_paper(hits, limit=0)


@given(
    st.lists(st.tuples(st.sampled_from("abcdef"), st.lists(st.integers(1, 30))), max_size=40),
    st.integers(1, 6),
    st.integers(1, 4),
)
def test_grouping_keeps_order_and_bounds(files, limit, per_paper):
    hits = [_hit(f"{f}.pdf", n, pages) for n, (f, pages) in enumerate(files)]
    cards = group_by_paper(hits, limit, per_paper)
    firsts = list(dict.fromkeys(h["file"] for h in hits))[:limit]
    assert [c["file"] for c in cards] == firsts
    for card in cards:
        mine = [h for h in hits if h["file"] == card["file"]]
        assert card["hits"] == len(mine)
        assert [p["record_id"] for p in card["passages"]] == [
            h["record_id"] for h in mine[:per_paper]
        ]
        assert card["pages"] == sorted({p for h in mine for p in h["pages"]})


def test_api_search_groups_by_paper(tmp_path, fake_embeddings):
    from klea_utils.stores.config import RetrieverConfig
    from klea_utils.stores.serve import ServeOptions, build_app, open_service
    from serve_support import ServerThread, build_stores, free_port

    stores = build_stores(tmp_path, fake_embeddings)
    options = ServeOptions(
        config=RetrieverConfig.model_validate_json(stores.bm25_config.read_text()),
        embedding_model=fake_embeddings,
        fts5_index=stores.fts5,
    )
    port = free_port()
    app = build_app(open_service(options, progress=lambda _: None), port=port)
    with (
        ServerThread(app, port),
        httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http,
    ):
        params = {"q": "cells OR cerebellum OR neurons", "mode": "lexical"}
        passages = http.get("/api/search", params=params).json()
        grouped = http.get("/api/search", params={**params, "group": "paper"}).json()
        bad = http.get("/api/search", params={**params, "group": "journal"})
    assert passages["group"] == "passage"
    assert "papers" not in passages
    assert grouped["group"] == "paper"
    assert grouped["hits"] == []
    files = [c["file"] for c in grouped["papers"]]
    assert files == list(dict.fromkeys(h["file"] for h in passages["hits"]))
    sinha = next(c for c in grouped["papers"] if c["file"] == "sinha2021.pdf")
    in_order = [h["record_id"] for h in passages["hits"] if h["file"] == "sinha2021.pdf"]
    assert [p["record_id"] for p in sinha["passages"]] == in_order
    assert len(in_order) == 2
    assert bad.status_code == 422
