"""klea-serve closed to those it should be closed to: Host, Origin, token, headers, CORS.

Real uvicorn servers on free loopback ports; the Host and Origin headers a rebinding or
cross-site page would send are set by hand.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest
from klea_utils.stores.config import RetrieverConfig
from klea_utils.stores.exceptions import ServeAccessError
from klea_utils.stores.serve import (
    AccessPolicy,
    ServeOptions,
    access_policy,
    build_app,
    open_service,
)
from klea_utils.stores.serve.http.access import is_loopback
from klea_utils.stores.serve.http.guard import same_origin
from serve_support import ServeProcess, ServerThread, build_stores, free_port

TOKEN = "s3cret-token-for-tests-0123456789"
CORS = "https://notebook.lab.example"
ROUTES = ["/api/health", "/", "/static/app.js", "/api/documents/sinha2021.pdf"]


def _server(stores, embeddings, access: AccessPolicy) -> ServerThread:
    options = ServeOptions(
        config=RetrieverConfig.model_validate_json(stores.config.read_text()),
        embedding_model=embeddings,
        fts5_index=stores.fts5,
    )
    service = open_service(options, progress=lambda _: None)
    port = free_port()
    return ServerThread(build_app(service, port=port, access=access), port)


@pytest.fixture(scope="module")
def stores(tmp_path_factory, fake_embeddings):
    return build_stores(tmp_path_factory.mktemp("serve-security"), fake_embeddings)


@pytest.fixture(scope="module")
def open_server(stores, fake_embeddings):
    with _server(stores, fake_embeddings, AccessPolicy()) as running:
        yield running


@pytest.fixture(scope="module")
def locked_server(stores, fake_embeddings):
    policy = access_policy("127.0.0.1", token=TOKEN, cors_origins=[CORS])
    with _server(stores, fake_embeddings, policy) as running:
        yield running


# -- Host and Origin (DNS rebinding, cross-site pages) -------------------------------------


@pytest.mark.parametrize("path", [*ROUTES, "/mcp"])
def test_a_foreign_host_is_refused_on_every_route(open_server, path):
    response = httpx.get(open_server.url + path, headers={"host": "evil.example"})
    assert response.status_code == 400
    assert response.text == "Invalid host header"
    assert response.headers["x-content-type-options"] == "nosniff"
    rebound = httpx.get(
        open_server.url + path, headers={"host": f"evil.example:{open_server.port}"}
    )
    assert rebound.status_code == 400


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "[::1]"])
def test_the_loopback_names_are_served(open_server, host):
    response = httpx.get(
        open_server.url + "/api/health", headers={"host": f"{host}:{open_server.port}"}
    )
    assert response.status_code == 200


def test_an_origin_of_another_site_is_refused(open_server):
    evil = httpx.post(
        open_server.url + "/api/retrieve",
        json={"query": "golgi"},
        headers={"origin": "http://evil.example"},
    )
    assert evil.status_code == 403
    assert "'http://evil.example'" in evil.json()["detail"]
    other_port = httpx.get(
        open_server.url + "/api/health", headers={"origin": "http://127.0.0.1:1"}
    )
    assert other_port.status_code == 403
    assert httpx.get(open_server.url + "/mcp", headers={"origin": "null"}).status_code == 403
    own = httpx.get(open_server.url + "/api/health", headers={"origin": open_server.url})
    assert own.status_code == 200


def test_no_cors_headers_without_cors_origin(open_server):
    response = httpx.get(open_server.url + "/api/health", headers={"origin": open_server.url})
    assert not [h for h in response.headers if h.startswith("access-control-")]


# -- headers ------------------------------------------------------------------------------


def _policy(header: str) -> dict[str, list[str]]:
    """A Content-Security-Policy header as ``{directive: [source, ...]}``."""
    directives: dict[str, list[str]] = {}
    for part in header.split(";"):
        name, *sources = part.split() or [""]
        if name:
            assert name.lower() not in directives, f"{name} given twice"
            directives[name.lower()] = sources
    return directives


def _assert_strict_policy(header: str) -> None:
    policy = _policy(header)
    assert policy.get("default-src") == ["'self'"]
    assert policy.get("script-src") == ["'self'"]  # no inline, eval, hash, nonce or other host
    assert policy.get("object-src") == ["'none'"]
    assert policy.get("frame-ancestors") == ["'none'"]  # no page may frame this one
    for directive, sources in policy.items():
        for source in sources:
            assert not source.startswith("'unsafe-"), f"{directive} allows {source}"
            assert "*" not in source, f"{directive} allows the wildcard {source}"
            if source.endswith(":"):  # a whole scheme is a wildcard too; data: images only
                assert (directive, source) == ("img-src", "data:"), f"{directive} {source}"


@pytest.mark.parametrize(
    "header",
    [
        "default-src 'self'; script-src 'self' 'unsafe-inline'; object-src 'none'; "
        "frame-ancestors 'none'",
        "default-src 'self'; script-src 'self' https:; object-src 'none'; frame-ancestors 'none'",
        "default-src 'self'; script-src 'self'; object-src 'none'; frame-ancestors *",
        "default-src 'self'; script-src 'self'; style-src *.example.org; object-src 'none'; "
        "frame-ancestors 'none'",
        "default-src 'self'; script-src 'self'; frame-ancestors 'none'",
    ],
    ids=["unsafe-inline", "scheme", "framed", "wildcard-host", "no-object-src"],
)
def test_the_policy_check_refuses_a_weak_policy(header):
    with pytest.raises(AssertionError):
        _assert_strict_policy(header)


@pytest.mark.parametrize("path", [*ROUTES, "/api/docs", "/static/nope.js", "/api/search?q="])
def test_security_headers_on_every_answer(open_server, path):
    response = httpx.get(open_server.url + path)
    assert response.headers["x-content-type-options"] == "nosniff"
    _assert_strict_policy(response.headers["content-security-policy"])
    assert response.headers["referrer-policy"] == "no-referrer"


def test_the_page_has_no_inline_script_or_style(open_server):
    response = httpx.get(open_server.url + "/")
    page = response.text
    assert "<script>" not in page
    assert "<style" not in page
    assert " style=" not in page
    assert 'src="/static/app.js"' in page
    policy = _policy(response.headers["content-security-policy"])
    assert policy.get("style-src") == ["'self'"]  # the page's own stylesheet, nothing inline


# -- the token ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "authorization",
    [None, "Bearer wrong-token-0123456789", f"Basic {TOKEN}", TOKEN, "Bearer"],
)
@pytest.mark.parametrize("path", ["/api/health", "/api/search?q=golgi", "/mcp"])
def test_without_the_token_api_and_mcp_answer_401(locked_server, path, authorization):
    headers = {"authorization": authorization} if authorization else {}
    response = httpx.get(locked_server.url + path, headers=headers)
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == 'Bearer realm="klea-serve"'
    assert "Authorization: Bearer" in response.json()["detail"]


def test_with_the_token_api_answers_200(locked_server):
    auth = {"authorization": f"Bearer {TOKEN}"}
    assert httpx.get(locked_server.url + "/api/health", headers=auth).status_code == 200
    found = httpx.post(locked_server.url + "/api/retrieve", json={"query": "golgi"}, headers=auth)
    assert found.status_code == 200
    assert found.json()["passages"]


@pytest.mark.parametrize("path", ["/", "/static/app.js", "/static/auth.js", "/api/docs"])
def test_the_page_and_the_api_docs_load_without_the_token(locked_server, path):
    assert httpx.get(locked_server.url + path).status_code == 200


def test_a_foreign_host_is_refused_before_the_token_is_asked(locked_server):
    response = httpx.get(
        locked_server.url + "/api/health",
        headers={"host": "evil.example", "authorization": f"Bearer {TOKEN}"},
    )
    assert response.status_code == 400


def test_mcp_with_the_token(locked_server):
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async def talk() -> list[str]:
        headers = {"authorization": f"Bearer {TOKEN}"}
        async with httpx.AsyncClient(headers=headers, timeout=30) as http:
            transport = streamable_http_client(f"{locked_server.url}/mcp", http_client=http)
            async with Client(transport) as mcp:
                tools = await mcp.list_tools()
                return sorted(t.name for t in tools.tools)

    assert asyncio.run(talk()) == ["citations", "facets", "get_document", "retrieve", "search"]


def test_cors_only_for_the_named_origin(locked_server):
    preflight = {
        "origin": CORS,
        "access-control-request-method": "GET",
        "access-control-request-headers": "authorization",
    }
    allowed = httpx.options(locked_server.url + "/api/health", headers=preflight)
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == CORS
    auth = {"authorization": f"Bearer {TOKEN}", "origin": CORS}
    answer = httpx.get(locked_server.url + "/api/health", headers=auth)
    assert answer.headers["access-control-allow-origin"] == CORS
    other = httpx.options(
        locked_server.url + "/api/health", headers={**preflight, "origin": "https://evil.example"}
    )
    assert other.status_code == 403
    assert "access-control-allow-origin" not in other.headers


# -- the policy the command line builds ------------------------------------------------------


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.20", "papers.lab.example"])
def test_off_loopback_without_token_or_no_auth_is_refused(host):
    with pytest.raises(ServeAccessError, match=r"--host .* --no-auth"):
        access_policy(host, environ={})
    assert access_policy(host, no_auth=True, environ={}).token is None
    assert access_policy(host, token=TOKEN, environ={}).token == TOKEN


def test_the_token_comes_from_flag_file_or_environment(tmp_path: Path):
    file = tmp_path / "token"
    file.write_text(TOKEN + "\n", encoding="utf-8")
    assert access_policy("0.0.0.0", token_file=file, environ={}).token == TOKEN
    assert access_policy("0.0.0.0", environ={"KLEA_SERVE_TOKEN": TOKEN}).token == TOKEN
    assert access_policy("127.0.0.1", environ={}).token is None
    (tmp_path / "empty").write_text("\n", encoding="utf-8")
    problems = {
        "the file is empty": {"token_file": tmp_path / "empty"},
        "cannot be read": {"token_file": tmp_path / "missing"},
        "not both": {"token": TOKEN, "token_file": file},
        "at least 16": {"token": "short"},
        "--no-auth contradicts the token given by --token": {"token": TOKEN, "no_auth": True},
    }
    for message, kwargs in problems.items():
        with pytest.raises(ServeAccessError, match=message):
            access_policy("0.0.0.0", environ={}, **kwargs)  # type: ignore[arg-type]


def test_allowed_hosts_and_origins_are_normalised():
    policy = access_policy(
        "192.168.1.20",
        token=TOKEN,
        allowed_hosts=["Papers.Lab.Example.", "::1", "*.lab.example"],
        cors_origins=["HTTPS://Notebook.lab.example:8888/"],
        environ={},
    )
    assert policy.allowed_hosts == (
        "127.0.0.1",
        "localhost",
        "[::1]",
        "192.168.1.20",
        "papers.lab.example",
        "*.lab.example",
    )
    assert policy.cors_origins == ("https://notebook.lab.example:8888",)
    assert "0.0.0.0" not in access_policy("0.0.0.0", no_auth=True, environ={}).allowed_hosts
    for bad in ["http://papers.example", "papers.example:8765", "a b", ""]:
        with pytest.raises(ServeAccessError, match="--allowed-host"):
            access_policy("127.0.0.1", allowed_hosts=[bad], environ={})
    for bad in ["*", "notebook.example", "https://x.example/path", "ftp://x.example"]:
        with pytest.raises(ServeAccessError, match="--cors-origin"):
            access_policy("127.0.0.1", cors_origins=[bad], environ={})


def test_any_host_needs_a_token(stores, fake_embeddings):
    # '*' switches the Host check off: a rebinding page's Origin equals its Host, so only
    # the token is left to stop it.
    for build in (
        lambda: access_policy("127.0.0.1", allowed_hosts=["*"], environ={}),
        lambda: access_policy("0.0.0.0", no_auth=True, allowed_hosts=["*"], environ={}),
        lambda: AccessPolicy(allowed_hosts=("*",)),
    ):
        with pytest.raises(ServeAccessError, match=r"'\*' answers any Host name.*token"):
            build()
    policy = access_policy("127.0.0.1", token=TOKEN, allowed_hosts=["*"], environ={})
    assert "*" in policy.allowed_hosts
    rebinding = {"host": "evil.example:8765", "origin": "http://evil.example:8765"}
    with _server(stores, fake_embeddings, policy) as running:
        assert httpx.get(running.url + "/api/health", headers=rebinding).status_code == 401
        auth = {**rebinding, "authorization": f"Bearer {TOKEN}"}
        assert httpx.get(running.url + "/api/health", headers=auth).status_code == 200


def test_a_cors_origin_with_its_default_port_matches_the_browser_origin(stores, fake_embeddings):
    assert access_policy(
        "127.0.0.1", cors_origins=["https://nb.example:443", "http://nb.example:80/"], environ={}
    ).cors_origins == ("https://nb.example", "http://nb.example")
    policy = access_policy("127.0.0.1", cors_origins=["https://nb.example:443"], environ={})
    with _server(stores, fake_embeddings, policy) as running:
        # a browser leaves :443 out of Origin
        answer = httpx.get(running.url + "/api/health", headers={"origin": "https://nb.example"})
        assert answer.status_code == 200
        assert answer.headers["access-control-allow-origin"] == "https://nb.example"
        spelled = httpx.get(
            running.url + "/api/health", headers={"origin": "https://nb.example:443"}
        )
        assert spelled.status_code == 200  # the same origin, written out: not refused


def test_loopback_and_same_origin():
    assert all(map(is_loopback, ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "LOCALHOST"]))
    assert not any(map(is_loopback, ["0.0.0.0", "::", "10.0.0.1", "example.org"]))
    assert same_origin("http://127.0.0.1:8765", "127.0.0.1:8765")
    assert same_origin("https://papers.example", "papers.example")
    assert same_origin("http://[::1]:8765", "[::1]:8765")
    assert not same_origin("http://127.0.0.1:8766", "127.0.0.1:8765")
    assert not same_origin("http://evil.example", "127.0.0.1:8765")
    assert not same_origin("null", "127.0.0.1:8765")
    assert not same_origin("http://x:99999", "x:80")


def test_the_token_is_compared_whole():
    policy = AccessPolicy(token=TOKEN)
    assert policy.authorized(f"Bearer {TOKEN}")
    assert policy.authorized(f"bearer  {TOKEN} ")
    assert not policy.authorized(f"Bearer {TOKEN[:-1]}")
    assert not policy.authorized(f"Bearer {TOKEN}x")
    assert not policy.authorized(None)
    assert TOKEN not in repr(policy)


@pytest.mark.slow
def test_the_command_line_wires_token_and_allowed_host(stores, tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n", encoding="utf-8")
    args = ["--bm25-store", f"fts5:{stores.fts5}", "--token-file", str(token_file)]
    args += ["--allowed-host", "papers.lab.example"]
    auth = {"authorization": f"Bearer {TOKEN}"}
    with ServeProcess(args, tmp_path / "serve.log", auth) as served:
        assert httpx.get(served.url + "/api/health").status_code == 401
        assert httpx.get(served.url + "/api/health", headers=auth).status_code == 200
        named = {**auth, "host": f"papers.lab.example:{served.port}"}
        assert httpx.get(served.url + "/api/health", headers=named).status_code == 200
        evil = {**auth, "host": f"evil.example:{served.port}"}
        assert httpx.get(served.url + "/api/health", headers=evil).status_code == 400
    log = (tmp_path / "serve.log").read_text(encoding="utf-8")
    assert "a bearer token is required on /api and /mcp" in log
    assert TOKEN not in log
