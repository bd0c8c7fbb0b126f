"""klea-serve under generated input: the HTTP API from its own OpenAPI schema, and MCP tools.

- HTTP: Schemathesis loads ``/api/openapi.json`` from the app in-process and each
  operation gets generated requests, valid ones and invalid ones. No answer may be a 5xx,
  and each must match the schema (status code, content type, body). Three ways in: an
  open app; a locked one (a token) called with its token; the locked one called without
  it, where every operation answers 401 (403 when the case adds another site's
  ``Origin``, refused first). Schemathesis's ASGI transport runs the app's
  lifespan (the MCP sessions), as uvicorn would.
- MCP: each tool's input schema, as the server lists it, generates arguments (valid and
  invalid, through the same Schemathesis generators). Every call answers a result of the
  tool's shape or a tool error whose text says what was wrong, without a traceback or a
  path of the server's files.

Sized for CI (``HYPOTHESIS_PROFILE=ci`` derandomises): ``MAX_EXAMPLES`` per operation and
mode. A failure prints the generated case and a curl command that repeats it.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from klea_utils.stores.config import RetrieverConfig
from klea_utils.stores.serve import AccessPolicy, KleaService, ServeOptions, build_app, open_service
from schemathesis import GenerationMode
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from serve_support import Stores, build_stores

TOKEN = "fuzz-token-0123456789abcdef"
BASE_URL = "http://127.0.0.1"  # a Host the default AccessPolicy accepts (loopback)
MAX_EXAMPLES = 30
QUERY_LIMIT = 4096
SCHEMA_CHECKS = [status_code_conformance, content_type_conformance, response_schema_conformance]
MODES = [mode.value for mode in GenerationMode]
OPERATIONS = [
    "POST /api/retrieve",
    "GET /api/search",
    "GET /api/documents/{file_name}",
    "GET /api/papers/{file_name}/pages/{page}.png",
    "GET /api/papers/{file_name}/file",
    "GET /api/papers/{file_name}/citations",
    "GET /api/facets",
    "POST /api/graph",
    "GET /api/health",
]
NO_INPUT = {"GET /api/health"}
"""Operations without parameters or body: no invalid request to generate."""
CASES = [
    (label, mode)
    for label in OPERATIONS
    for mode in MODES
    if not (mode == "negative" and label in NO_INPUT)
]
TOOL_KEYS = {
    "retrieve": {"passages", "notes", "references"},
    "search": {"hits", "chips", "error"},
    "get_document": {"title", "passages"},
    "citations": {"references", "cited_by"},
    "facets": {"papers", "facets"},
}
FUZZ_SETTINGS = settings(max_examples=MAX_EXAMPLES, suppress_health_check=list(HealthCheck))


@pytest.fixture(scope="module")
def stores(fake_embeddings) -> Iterator[Stores]:
    # A prefix of its own, searched for in the error messages below.
    with tempfile.TemporaryDirectory(prefix="klea-fuzz-", ignore_cleanup_errors=True) as d:
        yield build_stores(Path(d), fake_embeddings)


def _service(stores: Stores, embeddings) -> KleaService:
    options = ServeOptions(
        config=RetrieverConfig.model_validate_json(stores.config.read_text()),
        embedding_model=embeddings,
        fts5_index=stores.fts5,
        vectors=stores.vectors,
        k=3,
    )
    return open_service(options, progress=lambda _: None)


@dataclass(frozen=True)
class Access:
    """The app's token (``None``: an open app) and whether the requests send it."""

    token: str | None
    sends_token: bool

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.sends_token else {}

    @property
    def refused(self) -> bool:
        return self.token is not None and not self.sends_token


ACCESSES = {
    "open": Access(None, sends_token=False),
    "locked": Access(TOKEN, sends_token=True),
    "locked-without-token": Access(TOKEN, sends_token=False),
}


@pytest.fixture(params=sorted(ACCESSES))
def served(request, stores, fake_embeddings) -> Iterator[tuple[schemathesis.BaseSchema, Access]]:
    """A fresh app's schema, read through Schemathesis's ASGI client, and how it is called.

    The client starts the app's lifespan (MCP runs, as under uvicorn); Schemathesis's
    pytest plugin ends every lifespan it started when a test ends, and the lifespan's end
    closes the service, so each test gets an app of its own.
    """
    from schemathesis.python.asgi import shutdown_lifespans

    access = ACCESSES[request.param]
    app = build_app(_service(stores, fake_embeddings), access=AccessPolicy(token=access.token))
    # /api/openapi.json is open: read without the token, whatever the app's.
    schema = schemathesis.openapi.from_asgi("/api/openapi.json", app, headers={"host": "127.0.0.1"})
    schema.config.output.sanitization.update(enabled=False)  # curl shows context_tokens
    yield schema, access
    shutdown_lifespans()  # done already by the plugin, unless it is disabled


def test_the_operations_fuzzed_are_all_the_schema_has(served):
    schema, _ = served
    assert sorted(op.ok().label for op in schema.get_all_operations()) == sorted(OPERATIONS)
    for label in NO_INPUT:  # left out of the negative cases: they must take no input
        method, path = label.split(" ")
        raw = schema[path][method].definition.raw
        assert "parameters" not in raw
        assert "requestBody" not in raw


# -- HTTP: every operation, generated requests ---------------------------------------------
# Schemathesis's own pytest integration (``from_fixture(...).parametrize()``) fails under
# pytest 9.2 (it sets ``Function._nodeid``): each operation's strategy runs under @given.


def _sends_origin(case: schemathesis.Case) -> bool:
    """Whether ``case`` carries an ``Origin`` header: a negative case may add headers of its
    own, and which ones changes with what else the test run has imported."""
    return any(name.lower() == "origin" for name in case.headers or {})


def _repeat(case: schemathesis.Case, response: Any, access: Access) -> str:
    curl = case.as_curl_command(headers=access.headers, base_url=BASE_URL)
    return f"{response.status_code} {response.text[:500]}\nrepeat: {curl}"


@pytest.mark.parametrize(("label", "mode"), CASES)
def test_every_operation_answers_within_its_schema(served, label, mode):
    schema, access = served
    method, path = label.split(" ")
    operation = schema[path][method]

    @FUZZ_SETTINGS
    @given(case=operation.as_strategy(generation_mode=GenerationMode(mode)))
    def answers(case: schemathesis.Case) -> None:
        response = case.call(base_url=BASE_URL, headers=access.headers)
        if access.refused:
            # A foreign Origin is refused (403) before the token is asked for (401).
            refusals = (401, 403) if _sends_origin(case) else (401,)
            assert response.status_code in refusals, _repeat(case, response, access)
            if response.status_code == 401:
                assert response.headers["www-authenticate"] == ['Bearer realm="klea-serve"']
            return
        # First and on a line of its own: Hypothesis reports a 5xx apart from a schema miss.
        assert response.status_code < 500, _repeat(case, response, access)
        case.validate_response(response, checks=SCHEMA_CHECKS, headers=access.headers)

    answers()


def _asgi_client(app: Any):
    """Schemathesis's requests client of ``app``: the event loop the app's lifespan runs on."""
    from schemathesis.python.asgi import get_client

    return get_client(app)


def test_the_transport_ran_the_lifespan(served):
    """/mcp answers an MCP initialize: its sessions run only inside the app's lifespan."""
    schema, access = served
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "fuzz", "version": "1"},
        },
    }
    headers = {
        **Access(access.token, sends_token=True).headers,
        "accept": "application/json, text/event-stream",
    }
    with _asgi_client(schema.app) as client:
        response = client.post(BASE_URL + "/mcp", json=initialize, headers=headers, timeout=30)
    assert response.status_code == 200, response.text
    assert "klea-serve" in response.text


@pytest.mark.parametrize(
    ("method", "path", "kwargs"),
    [
        ("POST", "/api/retrieve", {"json": {"query": "golgi " * 1000}}),
        ("GET", "/api/search", {"params": {"q": "golgi " * 1000}}),
        ("GET", "/api/facets", {"params": {"q": "golgi " * 1000}}),
    ],
)
def test_an_over_long_query_is_refused_naming_the_limit(served, method, path, kwargs):
    schema, access = served
    with _asgi_client(schema.app) as client:
        response = client.request(
            method, BASE_URL + path, headers=access.headers, timeout=30, **kwargs
        )
    if access.refused:  # the token is asked for before the query is read
        assert response.status_code == 401, response.text
        return
    assert response.status_code == 422, response.text
    assert f"{QUERY_LIMIT} characters" in response.text


def test_without_the_token_only_the_docs_answer(stores, fake_embeddings):
    """/api/... and /mcp answer 401 to a missing or wrong token; the API's docs stay open."""
    from starlette.testclient import TestClient

    app = build_app(_service(stores, fake_embeddings), access=AccessPolicy(token=TOKEN))
    paths = [p.replace("{file_name}", "sinha2021.pdf") for p in app.openapi()["paths"]]
    # Outside a `with`: no lifespan, and nothing here reaches the service.
    client = TestClient(app, base_url=BASE_URL)
    for path in ("/api/docs", "/api/openapi.json"):
        assert client.get(path).status_code == 200, path
    wrong = [{}, {"Authorization": "Bearer not-the-token-0123"}, {"Authorization": TOKEN}]
    for headers in wrong:
        for path in [*paths, "/mcp", "/api", "/api/nowhere"]:
            for method in ("GET", "POST"):
                response = client.request(method, path, headers=headers)
                assert response.status_code == 401, (method, path, headers)


# -- MCP: every tool, generated arguments ---------------------------------------------------


@pytest.fixture(scope="module")
def mcp(stores, fake_embeddings) -> Iterator[tuple[BlockingPortal, Any, dict[str, Any]]]:
    """An in-process MCP client of the tools, on an event loop of its own, and the tools."""
    from klea_utils.stores.serve import build_mcp_server
    from mcp import Client

    service = _service(stores, fake_embeddings)
    server = build_mcp_server(service)
    with (
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(Client(server)) as client,
    ):
        tools = {tool.name: tool for tool in portal.call(client.list_tools).tools}
        yield portal, client, tools
        portal.call(service.aclose)


def _components(value: Any) -> Any:
    """A JSON schema with its ``#/$defs/`` references pointing at OpenAPI components."""
    if isinstance(value, dict):
        return {
            k: v.replace("#/$defs/", "#/components/schemas/")
            if k == "$ref" and isinstance(v, str)
            else _components(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_components(v) for v in value]
    return value


def _arguments(input_schema: dict[str, Any], mode: GenerationMode) -> st.SearchStrategy[Any]:
    """Arguments for a tool: the bodies Schemathesis generates for a POST of its schema."""
    schema = _components(input_schema)
    definitions = schema.pop("$defs", {})
    body = {"required": True, "content": {"application/json": {"schema": schema}}}
    spec = {
        "openapi": "3.1.0",
        "info": {"title": "tool", "version": "1"},
        "paths": {"/call": {"post": {"requestBody": body, "responses": {"200": {}}}}},
        "components": {"schemas": definitions},
    }
    operation = schemathesis.openapi.from_dict(spec)["/call"]["POST"]
    return operation.as_strategy(generation_mode=mode).map(lambda case: case.body)


def _call(mcp, name: str, arguments: dict[str, Any]) -> Any:
    portal, client, _ = mcp
    return portal.call(client.call_tool, name, arguments)


def _error_text(result: Any) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


def _assert_a_clean_message(text: str, name: str, stores: Stores) -> None:
    prefix = f"Error executing tool {name}"
    assert text.strip(), "an empty tool error"
    # The SDK answers a crash (an exception the tool did not expect) with the prefix alone.
    assert text.strip() != prefix, "the tool crashed: its error says nothing"
    assert "Traceback" not in text
    assert not re.search(r'File "[^"]+", line \d+', text)
    assert str(stores.config.parent) not in text
    assert "klea-fuzz-" not in text
    assert "site-packages" not in text


@pytest.mark.parametrize("name", sorted(TOOL_KEYS))
@pytest.mark.parametrize("mode", MODES)
def test_every_tool_answers_a_result_or_a_clean_error(mcp, stores, name, mode):
    tool = mcp[2][name]
    # call_tool sends an object: a negative body that is not one is the client's to refuse.
    arguments = _arguments(tool.input_schema, GenerationMode(mode)).filter(
        lambda value: isinstance(value, dict)
    )

    @FUZZ_SETTINGS
    @given(arguments=arguments)
    def answers(arguments: dict[str, Any]) -> None:
        result = _call(mcp, name, arguments)
        if result.is_error:
            _assert_a_clean_message(_error_text(result), name, stores)
            return
        body = result.structured_content
        assert isinstance(body, dict), result
        keys = TOOL_KEYS[name] | ({"papers"} if arguments.get("group") == "paper" else set())
        assert keys <= set(body), sorted(body)
        json.dumps(body)  # plain JSON

    answers()


def test_the_tools_are_the_five(mcp):
    assert sorted(mcp[2]) == sorted(TOOL_KEYS)


@pytest.mark.parametrize(
    ("name", "arguments", "fragment"),
    [
        ("retrieve", {"query": "golgi " * 1000}, f"{QUERY_LIMIT} characters"),
        ("search", {"query": "golgi " * 1000}, f"{QUERY_LIMIT} characters"),
        ("facets", {"query": "golgi " * 1000}, f"{QUERY_LIMIT} characters"),
        ("retrieve", {"query": "golgi", "domains": ["nope"]}, "unknown domain 'nope'"),
        ("get_document", {"file_name": "../../etc/passwd"}, "no paper '../../etc/passwd'"),
        ("get_document", {"file_name": "\x00"}, "no paper"),
        ("citations", {"file_name": "../../etc/passwd"}, "no paper '../../etc/passwd'"),
        ("search", {"query": "golgi", "filters": {"year_from": 2020, "year_to": 1}}, "above"),
        ("retrieve", {"query": "golgi", "k": 10**6}, "less than or equal to 50"),
    ],
)
def test_explicit_bad_arguments_answer_a_message(mcp, stores, name, arguments, fragment):
    result = _call(mcp, name, arguments)
    assert result.is_error, result.structured_content
    text = _error_text(result)
    _assert_a_clean_message(text, name, stores)
    assert fragment in text
