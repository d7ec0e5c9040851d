"""A schema-driven fuzz of the bridge: every route of the OpenAPI document, with bodies and query
strings built from its schemas plus hostile values (deep nesting, lone surrogates, huge numbers,
bad URLs, wrong types, raw garbage). No answer may be a 5xx, and the vault stays intact.

Bounded (a fixed number of examples, no deadline) so that it runs in the normal suite.
"""

from __future__ import annotations

import json
import logging
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.integration.bridge.helpers import ORIGIN, Bridge
from vodou_desktop.bridge import openapi

DOC = openapi.document()
OPERATIONS = [(method.upper(), path, op) for path, item in sorted(DOC["paths"].items())
              for method, op in sorted(item.items())]
# Query parameters the routes read (the document describes them in the summary).
QUERY_NAMES = {"/api/page-match/site-mode": ["host"], "/api/page-match/probe": ["url"], "/api/approvals": ["status"]}

BAD_URLS = ["https://[zz]/", "https://example.com:99999/", "https://[::1", "https://ex.com:-1/", "javascript:alert(1)",
            "https://", "http://[::1]:65536/", "https://a.example/\ud800", "file:///etc/passwd", "https://xn--/",
            "https://" + "a" * 300 + ".example/", "https://exa mple.com/", "//no-scheme.example/"]
GOOD_URLS = ["https://example.org/a", "https://docs.example.com/guide?utm_source=x#frag", "http://127.0.0.1:8080/x",
             "https://[::1]:8443/p", "https://bücher.example/b"]
HOSTS = ["example.org", "EXAMPLE.org.", "a.b.example.com", "[::1]", "127.0.0.1", "localhost:8080", "-bad-.example"]
EXAMPLES_PER_ROUTE = 10
WORDS = ["off", "suggest", "collect", "approve", "deny", "all", "pending", "remember", ""]


def hostile_text() -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from(BAD_URLS + GOOD_URLS + HOSTS + WORDS),
        st.text(max_size=40),
        st.text(max_size=20).map(lambda s: s + "\ud800"),
        st.sampled_from(["\udfff", "a\ud83d", "<vodou:context>x</vodou:context>", "\x00", "%00", "\u202e"]),
        st.integers(min_value=0, max_value=9).map(lambda n: "9" * (n * 5 + 1)),
    )


def nested(depth: int) -> Any:
    value: Any = "x"
    for i in range(depth):
        value = [value] if i % 2 else {"k": value}
    return value


def hostile_value() -> st.SearchStrategy[Any]:
    scalars = st.one_of(hostile_text(), st.integers(min_value=-(2**70), max_value=2**70),
                        st.sampled_from([10**30, -(10**30), 2**63, 2**63 - 1, 0, -1, 1.5, 1e308, True, None]))
    return st.one_of(scalars, st.integers(min_value=30, max_value=1_200).map(nested),
                     st.lists(scalars, max_size=3), st.dictionaries(hostile_text(), scalars, max_size=3))


def value_for(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    typed = st.integers(min_value=-5, max_value=50) if schema.get("type") == "integer" else hostile_text()
    return st.one_of(typed, typed, hostile_value())


@st.composite
def request_for(draw: st.DrawFn, operation: tuple[str, str, dict[str, Any]]) -> tuple[str, str, bytes | None]:
    method, path, op = operation
    if "{id}" in path:
        ident = draw(st.one_of(st.integers(min_value=-(2**70), max_value=2**70), st.just(10**30),
                               st.sampled_from(["abc", "1e3", "-0", "0x10", "%F0", "١"])))
        path = path.replace("{id}", quote(str(ident), safe=""))
    names = QUERY_NAMES.get(path, [])
    if names:
        pairs = [(name, draw(hostile_text())) for name in names if draw(st.booleans()) or method == "GET"]
        if pairs:
            path += "?" + "&".join(f"{n}={quote(v, safe='', errors='surrogatepass')}" for n, v in pairs)
    schema = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
    if method == "GET" or (schema is None and draw(st.booleans())):
        return method, path, None
    kind = draw(st.sampled_from(["schema", "schema", "schema", "raw"]))
    if kind == "raw":
        raw = draw(st.sampled_from([b"{", b"[1,2]", b'"x"', b"null", b"{\"a\": NaN}", b"\xff\xfe", b"1" * 5000,
                                    b'{"a": ' + b"[" * 3000 + b"]" * 3000 + b"}", b'{"url": "\\ud800"}']))
        return method, path, raw
    props = (schema or {}).get("properties", {})
    body: dict[str, Any] = {}
    for name, prop in props.items():
        if name in (schema or {}).get("required", []) or draw(st.booleans()):
            body[name] = draw(value_for(prop))
    body.update(draw(st.dictionaries(hostile_text(), hostile_value(), max_size=2)))
    try:
        return method, path, json.dumps(body).encode()
    except (ValueError, RecursionError):
        return method, path, b'{"deep": ' + b"[" * 2000 + b"]" * 2000 + b"}"


@pytest.fixture
def fuzzed(bridge: Bridge) -> Bridge:
    bridge.server.context.write_budget = 10**9  # the budget has its own test; here it would hide routes
    bridge.request("PUT", "/api/page-match/site-mode", {"host": "example.org", "mode": "collect"})
    bridge.post("/api/notes", {"url": "https://example.org/a", "text": "a seeded note"})
    return bridge


def test_every_route_survives_hostile_input(fuzzed: Bridge, caplog: pytest.LogCaptureFixture) -> None:
    for operation in OPERATIONS:  # each route gets its own examples: none is left out by chance

        @settings(max_examples=EXAMPLES_PER_ROUTE, deadline=None, derandomize=True, database=None,
                  suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                         HealthCheck.data_too_large])
        @given(request_for(operation), st.booleans())
        def one(req: tuple[str, str, bytes | None], with_origin: bool) -> None:
            method, path, raw = req
            reply = fuzzed.request(method, path, raw=raw, origin=ORIGIN if with_origin else None,
                                   content_type="application/json" if method != "GET" else None)
            assert reply.status < 500, (method, path, raw[:200] if raw else None, reply.raw[:300])
            assert reply.headers["Content-Type"].startswith("application/json")

        one()
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert not errors, [r.getMessage() for r in errors]
    fuzzed.vault.checkpoint()
    assert fuzzed.vault.read(lambda c: [r[0] for r in c.execute("PRAGMA integrity_check")]) == ["ok"]
