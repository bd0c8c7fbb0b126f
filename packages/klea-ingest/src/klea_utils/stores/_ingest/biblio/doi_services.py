"""DOI look-ups against Crossref, OpenAlex and Semantic Scholar, tried in rotation.

Every service answers a DOI with a different JSON shape; each parser here maps it onto the
extraction fields (``title``, ``authors``, ``keywords``, ``year``, ``journal``, ``url_doi``).

Look-ups never hang a run: each request has a short timeout, a 429 or an error moves on to the
next service, and a service that cannot be reached (connection refused, timeout) is not asked
again in this process. When no service is reachable a single warning is logged and every
later look-up is skipped at once.

Base URLs and the timeout come from the environment so tests (and mirrors) can redirect them:
``KLEA_CROSSREF_URL``, ``KLEA_OPENALEX_URL``, ``KLEA_SEMANTIC_SCHOLAR_URL``,
``KLEA_DOI_TIMEOUT`` (seconds) and ``KLEA_DOI_LOOKUP`` (``0`` disables look-ups).
"""

from __future__ import annotations

import itertools
import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx

DEFAULT_TIMEOUT_S = 5.0
"""Per-request timeout (connect and read) in seconds."""

_log = logging.getLogger(__name__)

Parser = Callable[[Any], dict[str, Any]]


def _first(value: Any) -> Any:
    if isinstance(value, list):
        return value[0] if value else None
    return value


def _clean_str(value: Any) -> str | None:
    if isinstance(value, str) and value.strip():
        return " ".join(value.split())
    return None


def _year(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value[:4].isdigit():
        return int(value[:4])
    return None


def _compact(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if v not in (None, "", [])}


def parse_crossref(payload: Any) -> dict[str, Any]:
    """Map a Crossref ``/works/{doi}`` answer onto extraction fields."""
    msg = payload.get("message", {}) if isinstance(payload, dict) else {}
    authors = []
    for person in msg.get("author", []) or []:
        if isinstance(person, dict):
            name = " ".join(p for p in (person.get("given"), person.get("family")) if p)
            name = name or person.get("name", "")
            if _clean_str(name):
                authors.append(_clean_str(name))
    issued = msg.get("issued", {}) or msg.get("published", {}) or {}
    parts = _first(issued.get("date-parts") or [[None]]) or [None]
    return _compact(
        {
            "title": _clean_str(_first(msg.get("title"))),
            "authors": authors,
            "keywords": [s for s in (msg.get("subject") or []) if _clean_str(s)],
            "year": _year(_first(parts)),
            "journal": _clean_str(_first(msg.get("container-title"))),
            "url_doi": _clean_str(msg.get("URL")),
        }
    )


def parse_openalex(payload: Any) -> dict[str, Any]:
    """Map an OpenAlex ``/works/doi:{doi}`` answer onto extraction fields."""
    if not isinstance(payload, dict):
        return {}
    authors = [
        _clean_str((a.get("author") or {}).get("display_name"))
        for a in payload.get("authorships", []) or []
        if isinstance(a, dict)
    ]
    source = ((payload.get("primary_location") or {}).get("source")) or {}
    keywords = [_clean_str(k.get("display_name")) for k in payload.get("keywords", []) or []]
    return _compact(
        {
            "title": _clean_str(payload.get("title") or payload.get("display_name")),
            "authors": [a for a in authors if a],
            "keywords": [k for k in keywords if k],
            "year": _year(payload.get("publication_year")),
            "journal": _clean_str(source.get("display_name")),
            "url_doi": _clean_str(payload.get("doi")),
        }
    )


def parse_semantic_scholar(payload: Any) -> dict[str, Any]:
    """Map a Semantic Scholar ``/graph/v1/paper/DOI:{doi}`` answer onto extraction fields."""
    if not isinstance(payload, dict):
        return {}
    authors = [_clean_str(a.get("name")) for a in payload.get("authors", []) or []]
    journal = (payload.get("journal") or {}).get("name") or payload.get("venue")
    return _compact(
        {
            "title": _clean_str(payload.get("title")),
            "authors": [a for a in authors if a],
            "keywords": [k for k in payload.get("fieldsOfStudy") or [] if _clean_str(k)],
            "year": _year(payload.get("year")),
            "journal": _clean_str(journal),
            "url_doi": _clean_str(payload.get("url")),
        }
    )


@dataclass(frozen=True)
class DoiService:
    """One DOI metadata service: where to ask and how to read the answer."""

    name: str
    base_url: str
    path_template: str
    parser: Parser

    def __post_init__(self) -> None:
        if not self.base_url.startswith(("http://", "https://")):
            raise ValueError(f"{self.name}: base URL must be http(s), got {self.base_url!r}")
        if "{doi}" not in self.path_template:
            raise ValueError(f"{self.name}: path template lacks '{{doi}}'")

    def url(self, doi: str) -> str:
        """The request URL for ``doi``."""
        path = self.path_template.format(doi=quote(doi, safe="/:"))
        return self.base_url.rstrip("/") + path


def default_services() -> tuple[DoiService, ...]:
    """The three services, with base URLs taken from the environment when set."""
    env = os.environ.get
    return (
        DoiService(
            "crossref",
            env("KLEA_CROSSREF_URL", "https://api.crossref.org"),
            "/works/{doi}",
            parse_crossref,
        ),
        DoiService(
            "openalex",
            env("KLEA_OPENALEX_URL", "https://api.openalex.org"),
            "/works/doi:{doi}",
            parse_openalex,
        ),
        DoiService(
            "semantic_scholar",
            env("KLEA_SEMANTIC_SCHOLAR_URL", "https://api.semanticscholar.org"),
            "/graph/v1/paper/DOI:{doi}?fields=title,authors,year,venue,journal,url,fieldsOfStudy",
            parse_semantic_scholar,
        ),
    )


def lookups_enabled() -> bool:
    """Whether DOI look-ups are enabled (``KLEA_DOI_LOOKUP`` is not ``0``/``false``/``no``)."""
    return os.environ.get("KLEA_DOI_LOOKUP", "1").strip().lower() not in {"0", "false", "no"}


def _timeout_from_env() -> float:
    raw = os.environ.get("KLEA_DOI_TIMEOUT")
    try:
        value = float(raw) if raw else DEFAULT_TIMEOUT_S
    except ValueError:
        _log.warning("KLEA_DOI_TIMEOUT=%r is not a number; using %s s", raw, DEFAULT_TIMEOUT_S)
        return DEFAULT_TIMEOUT_S
    return value if value > 0 else DEFAULT_TIMEOUT_S


class DoiResolver:
    """Resolve DOIs through the services in rotation, with fallbacks and a dead-service list."""

    def __init__(
        self,
        services: tuple[DoiService, ...] | None = None,
        timeout: float | None = None,
        client: httpx.Client | None = None,
    ) -> None:
        self.services = services if services is not None else default_services()
        if not self.services:
            raise ValueError("DoiResolver needs at least one service")
        self.timeout = timeout if timeout is not None else _timeout_from_env()
        self._client = client
        self._dead: set[str] = set()
        self._warned = False
        self._rotation = itertools.count()
        self._lock = threading.Lock()

    @property
    def offline(self) -> bool:
        """True once every service has proved unreachable."""
        return len(self._dead) >= len(self.services)

    def _http(self) -> httpx.Client:
        if self._client is None:
            self._client = httpx.Client(
                timeout=httpx.Timeout(self.timeout),
                follow_redirects=True,
                headers={"User-Agent": "klea-ingest (bibliographic metadata)"},
            )
        return self._client

    def _order(self) -> list[DoiService]:
        with self._lock:
            start = next(self._rotation) % len(self.services)
        ordered = self.services[start:] + self.services[:start]
        return [s for s in ordered if s.name not in self._dead]

    def _mark_dead(self, service: DoiService, exc: Exception) -> None:
        _log.debug("DOI service %s unreachable: %s", service.name, exc)
        self._dead.add(service.name)
        if self.offline and not self._warned:
            self._warned = True
            _log.warning("DOI services unreachable (%s); skipping DOI look-ups for this run", exc)

    def lookup(self, doi: str) -> dict[str, Any] | None:
        """Return fields for ``doi`` from the first service that knows it.

        ``{}`` means every reachable service answered and none knew the DOI (cacheable);
        ``None`` means no definite answer (offline, rate-limited, errors): do not cache.
        """
        definite = True
        answered = False
        for service in self._order():
            try:
                response = self._http().get(service.url(doi))
            except (httpx.ConnectError, httpx.TimeoutException) as exc:
                self._mark_dead(service, exc)
                definite = False
                continue
            except httpx.HTTPError as exc:
                _log.debug("DOI service %s failed for %s: %s", service.name, doi, exc)
                definite = False
                continue
            if response.status_code == 404:
                answered = True
                continue
            if response.status_code != 200:
                status = response.status_code
                _log.debug("DOI service %s: HTTP %s for %s", service.name, status, doi)
                definite = False
                continue
            try:
                record = service.parser(response.json())
            except ValueError as exc:
                _log.debug("DOI service %s: bad JSON for %s: %s", service.name, doi, exc)
                definite = False
                continue
            if record:
                record["_service"] = service.name
                return record
            answered = True
        return {} if definite and answered else None

    def close(self) -> None:
        """Close the HTTP client."""
        if self._client is not None:
            self._client.close()
            self._client = None


_RESOLVER: DoiResolver | None = None


def shared_resolver() -> DoiResolver:
    """The process-wide resolver (so a dead service stays dead for the whole run)."""
    global _RESOLVER
    if _RESOLVER is None:
        _RESOLVER = DoiResolver()
    return _RESOLVER


def reset_shared_resolver() -> None:
    """Forget the process-wide resolver (tests change the environment between runs)."""
    global _RESOLVER
    if _RESOLVER is not None:
        _RESOLVER.close()
    _RESOLVER = None
