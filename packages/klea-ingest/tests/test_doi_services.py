"""DOI look-ups through real httpx against a loopback server: rotation, 429s, timeouts, cache."""

from __future__ import annotations

import json
import logging
import socket
import time
from pathlib import Path

import pytest
from ingest_store_support import DoiServer, crossref_body, doi_server, openalex_body, s2_body
from klea_utils.stores._ingest.biblio import doi_cache as _doi_cache
from klea_utils.stores._ingest.biblio import doi_services as _doi_services
from klea_utils.stores._ingest.biblio.doi_services import DoiResolver, DoiService, default_services
from klea_utils.stores.biblio import extract_metadata

DOI = "10.1234/klea.5678"


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> DoiServer:
    with doi_server() as srv:
        monkeypatch.setenv("KLEA_CROSSREF_URL", srv.base_url + "/cr")
        monkeypatch.setenv("KLEA_OPENALEX_URL", srv.base_url + "/oa")
        monkeypatch.setenv("KLEA_SEMANTIC_SCHOLAR_URL", srv.base_url + "/s2")
        monkeypatch.setenv("KLEA_DOI_TIMEOUT", "0.5")
        _doi_services.reset_shared_resolver()
        yield srv
        _doi_services.reset_shared_resolver()


def _path(service: DoiService, doi: str) -> str:
    return service.url(doi).split("127.0.0.1", 1)[1].split("/", 1)[1].join(["/", ""])


def _route_all(srv: DoiServer, doi: str, status: int = 200, delay: float = 0.0) -> None:
    cr, oa, s2 = default_services()
    srv.route(
        _path(cr, doi), status, crossref_body("CR title", [("Ankur", "Sinha")], 2021, "J CR"), delay
    )
    srv.route(
        _path(oa, doi), status, openalex_body("OA title", ["Ankur Sinha"], 2022, "J OA"), delay
    )
    srv.route(_path(s2, doi), status, s2_body("S2 title", ["Ankur Sinha"], 2023, "J S2"), delay)


def test_services_are_tried_in_rotation(server: DoiServer) -> None:
    _route_all(server, DOI)
    resolver = DoiResolver()
    titles = [resolver.lookup(DOI)["title"] for _ in range(3)]  # type: ignore[index]
    assert titles == ["CR title", "OA title", "S2 title"]
    record = DoiResolver().lookup(DOI)
    assert record is not None
    assert record["authors"] == ["Ankur Sinha"]
    assert record["year"] == 2021
    assert record["journal"] == "J CR"
    assert record["keywords"] == ["Neuroscience"]


def test_429_falls_back_to_the_next_service(server: DoiServer) -> None:
    _route_all(server, DOI)
    cr, _, _ = default_services()
    server.route(_path(cr, DOI), 429, {"message": "slow down"})
    record = DoiResolver().lookup(DOI)
    assert record is not None
    assert record["title"] == "OA title"
    assert record["_service"] == "openalex"


def test_all_429_is_not_a_definite_miss(server: DoiServer) -> None:
    _route_all(server, DOI, status=429)
    resolver = DoiResolver()
    assert resolver.lookup(DOI) is None
    assert not resolver.offline  # rate limits do not mark a service dead


def test_unknown_doi_everywhere_is_a_cacheable_miss(server: DoiServer) -> None:
    assert DoiResolver().lookup("10.9999/nothing") == {}


def test_timeouts_skip_the_service_and_never_hang(server: DoiServer, caplog) -> None:
    _route_all(server, DOI, delay=2.0)
    resolver = DoiResolver(timeout=0.3)
    start = time.monotonic()
    with caplog.at_level(logging.WARNING):
        assert resolver.lookup(DOI) is None
        assert resolver.lookup(DOI) is None  # now offline: answered at once
    assert time.monotonic() - start < 2.0
    assert resolver.offline
    warnings = [r for r in caplog.records if "DOI services unreachable" in r.getMessage()]
    assert len(warnings) == 1


def test_slow_service_then_fast_fallback(server: DoiServer) -> None:
    _route_all(server, DOI)
    cr, _, _ = default_services()
    server.route(_path(cr, DOI), 200, crossref_body("late", [], 2020, "x"), delay=2.0)
    resolver = DoiResolver(timeout=0.3)
    record = resolver.lookup(DOI)
    assert record is not None
    assert record["title"] == "OA title"
    assert not resolver.offline


def test_offline_is_one_warning_and_fast(monkeypatch: pytest.MonkeyPatch, caplog) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    dead = f"http://127.0.0.1:{port}"
    for var in ("KLEA_CROSSREF_URL", "KLEA_OPENALEX_URL", "KLEA_SEMANTIC_SCHOLAR_URL"):
        monkeypatch.setenv(var, dead)
    resolver = DoiResolver(timeout=0.5)
    start = time.monotonic()
    with caplog.at_level(logging.WARNING):
        for _ in range(5):
            assert resolver.lookup(DOI) is None
    assert time.monotonic() - start < 3.0
    assert sum("unreachable" in r.getMessage() for r in caplog.records) == 1


def test_bad_json_moves_on(server: DoiServer) -> None:
    _route_all(server, DOI)
    cr, _, _ = default_services()
    server.routes[_path(cr, DOI)] = type(server.routes[_path(cr, DOI)])(200, None, 0.0)
    record = DoiResolver().lookup(DOI)
    assert record is not None
    assert record["title"] == "OA title"


def test_service_config_is_validated() -> None:
    with pytest.raises(ValueError, match="crossref: base URL"):
        DoiService("crossref", "ftp://x", "/works/{doi}", _doi_services.parse_crossref)
    with pytest.raises(ValueError, match="lacks"):
        DoiService("crossref", "http://x", "/works/", _doi_services.parse_crossref)


def test_extract_metadata_uses_and_caches_the_doi_services(
    server: DoiServer, tmp_path: Path
) -> None:
    _route_all(server, DOI)
    source = tmp_path / "paper.md"
    source.write_text(f"# Something\n\nDOI: {DOI}\n\nBody text.\n", encoding="utf-8")
    cache_dir = tmp_path / ".klea-cache"
    meta = extract_metadata(source, cache_dir=cache_dir)
    assert meta["title"] == "CR title"
    assert meta["doi"] == DOI
    assert meta["url_doi"] == f"https://doi.org/{DOI}"
    assert meta["_sources"]["title"] == "doi:crossref"
    _doi_cache.flush_all()
    cached = json.loads((cache_dir / "doi-cache.json").read_text())
    assert cached[DOI.lower()]["title"] == "CR title"
    before = len(server.requests)
    _doi_cache._OPEN.clear()  # a new process: reads the cache from disk
    assert extract_metadata(source, cache_dir=cache_dir)["title"] == "CR title"
    assert len(server.requests) == before


def test_lookups_can_be_disabled(server: DoiServer, tmp_path: Path, monkeypatch) -> None:
    _route_all(server, DOI)
    monkeypatch.setenv("KLEA_DOI_LOOKUP", "0")
    source = tmp_path / "paper.txt"
    source.write_text(f"A Plain Title Line\n\ndoi:{DOI}\n", encoding="utf-8")
    meta = extract_metadata(source)
    assert meta["title"] == "A Plain Title Line"
    assert server.requests == []


def test_cache_flushes_in_batches_and_merges(tmp_path: Path) -> None:
    path = tmp_path / "doi-cache.json"
    first = _doi_cache.DoiCache(path, flush_every=2)
    other = _doi_cache.DoiCache(path, flush_every=1)
    first.put("10.1/A", {"title": "a"})
    assert not path.exists()
    other.put("10.1/other", {"title": "o"})
    first.put("10.1/b", {})
    data = json.loads(path.read_text())
    assert data == {"10.1/other": {"title": "o"}, "10.1/a": {"title": "a"}, "10.1/b": {}}
    assert _doi_cache.DoiCache(path).get("10.1/A") == {"title": "a"}


def test_corrupt_cache_is_ignored(tmp_path: Path, caplog) -> None:
    path = tmp_path / "doi-cache.json"
    path.write_text("{not json")
    with caplog.at_level(logging.WARNING):
        cache = _doi_cache.DoiCache(path)
    assert cache.get("10.1/x") is None
    assert str(path) in caplog.text
