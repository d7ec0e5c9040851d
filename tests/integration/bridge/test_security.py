"""The security matrix of the bridge (BRIDGE-2), against a real server on 127.0.0.1."""

from __future__ import annotations

import logging
import socket
import time

import pytest

from tests.integration.bridge.helpers import EXT_ID, ORIGIN, Bridge
from tests.support import file_hashes
from vodou_desktop.bridge.routes import ROUTES
from vodou_desktop.bridge.security import PUBLIC_ROUTES

URL = "https://example.org/a"
SAMPLE_BODIES = {
    "/api/pair/start": {}, "/api/pair/complete": {"code": "AAAAAAAA"},
    "/api/page-match/site-mode": {"host": "example.org", "mode": "suggest"},
    "/api/page-match/match": {"url": URL}, "/api/page-match/suggest": {"url": URL, "prefix": "la"},
    "/api/notes": {"url": URL, "text": "a note"}, "/api/links": {"url": URL},
    "/api/selection": {"url": URL, "title": "A", "text": "sel"},
    "/api/library": {"url": URL, "title": "A", "text": "doc"}, "/api/page-link": {"id": 1, "url": URL},
    "/api/active-page": {"url": URL}, "/api/forget/dry-run": {"host": "example.org"},
    "/api/forget/confirm": {"token": "x"}, "/api/forget/undo": {"op": "x"}, "/api/turns": {"content": "hi"},
    "/api/approvals/1": {"decision": "deny"},
}
QUERIES = {"/api/page-match/site-mode": "?host=example.org", "/api/page-match/probe": "?url=" + URL}


def concrete(method: str, path: str) -> str:
    path = path.replace("{id}", "1")
    return path + (QUERIES.get(path, "") if method == "GET" else "")


PROTECTED = [(m, p) for m, p, _ in ROUTES if (m, p) not in PUBLIC_ROUTES]
WRITES = [(m, p) for m, p, _ in ROUTES if m != "GET"]


def send(bridge: Bridge, method: str, path: str, **kw):  # type: ignore[no-untyped-def]
    body = SAMPLE_BODIES.get(path.replace("{id}", "1")) if method != "GET" else None
    return bridge.request(method, concrete(method, path), body, **kw)


@pytest.mark.parametrize(("method", "path"), PROTECTED)
def test_every_protected_route_needs_the_exact_token(bridge: Bridge, method: str, path: str) -> None:
    before = file_hashes(bridge.vault.path)
    off_by_one = bridge.token[:-1] + ("0" if bridge.token[-1] != "0" else "1")
    for token in (None, "not-a-token", off_by_one, bridge.token + "0", bridge.token.upper()):
        reply = send(bridge, method, path, token=token)
        assert reply.status == 401, (token, reply.raw)
        assert reply.code == "unauthorized"
    assert file_hashes(bridge.vault.path) == before


def bad_hosts(port: int) -> list[str | None]:
    name = socket.gethostname()
    return [f"rebind.attacker.test:{port}", "", None, "localhost.attacker.test", "attacker.localhost",
            f"0.0.0.0:{port}", f"127.0.0.1.nip.io:{port}", name, f"{name}:{port}", "127.0.0.1", f"localhost:{port + 1}",
            f"LOCALHOST:{port}"]


@pytest.mark.parametrize("path", ["/api/ping", "/api/page-match/site-modes", "/api/nowhere"])
def test_host_allowlist_comes_first(bridge: Bridge, path: str) -> None:
    for host in bad_hosts(bridge.port):
        reply = bridge.get(path, host=host)
        assert reply.status == 403, (host, reply.status, reply.raw)
        assert reply.code == "bad_host"
    for good in (f"127.0.0.1:{bridge.port}", f"localhost:{bridge.port}", f"[::1]:{bridge.port}"):
        assert bridge.get("/api/ping", host=good).status == 200


def test_missing_host_is_refused_on_the_wire(bridge: Bridge) -> None:
    with socket.create_connection(("127.0.0.1", bridge.port), timeout=5) as sock:
        sock.sendall(b"GET /api/ping HTTP/1.0\r\n\r\n")
        head = sock.recv(4096)
    assert head.split(b"\r\n", 1)[0].split()[1] == b"403"


@pytest.mark.parametrize("origin", [
    "http://evil.test", "null", "chrome-extension://" + "b" * 32, "CHROME-EXTENSION://" + EXT_ID,
    "chrome-extension://" + EXT_ID.upper(), "Chrome-Extension://" + EXT_ID, ORIGIN + "/", ORIGIN + ".evil.test",
    "http://127.0.0.1", "moz-extension://" + EXT_ID,
])
def test_foreign_origins_are_refused_without_cors(bridge: Bridge, origin: str) -> None:
    before = file_hashes(bridge.vault.path)
    for method, path in [("GET", "/api/page-match/site-modes"), ("POST", "/api/notes"), ("OPTIONS", "/api/notes")]:
        reply = send(bridge, method, path, origin=origin)
        assert reply.status == 403, (origin, method, reply.raw)
        assert reply.code == "bad_origin"
        assert not [h for h in reply.headers if h.lower().startswith("access-control-")]
    assert file_hashes(bridge.vault.path) == before


def test_paired_origin_gets_cors_echo_never_wildcard(bridge: Bridge) -> None:
    reply = bridge.get("/api/page-match/site-modes", origin=ORIGIN)
    assert reply.status == 200
    assert reply.headers["Access-Control-Allow-Origin"] == ORIGIN
    assert reply.headers["Vary"] == "Origin"
    assert "Access-Control-Allow-Credentials" not in reply.headers
    pre = bridge.request("OPTIONS", "/api/notes", token=None, origin=ORIGIN, content_type=None)
    assert pre.status == 204 and pre.headers["Access-Control-Allow-Origin"] == ORIGIN
    assert "Authorization" in pre.headers["Access-Control-Allow-Headers"]


def test_token_of_another_extension_does_not_pass_with_this_origin(bridge: Bridge) -> None:
    other = "c" * 32
    bridge.tokens.pair(other)
    assert bridge.get("/api/page-match/site-modes", origin=f"chrome-extension://{other}").status == 401
    assert bridge.get("/api/page-match/site-modes", origin=ORIGIN).status == 200


NOT_JSON = [
    ("text/plain", b'{"url": "https://example.org/a", "text": "x"}'),
    ("application/x-www-form-urlencoded", b"url=https%3A%2F%2Fexample.org%2Fa&text=x"),
    ("multipart/form-data; boundary=XyZ",
     b'--XyZ\r\nContent-Disposition: form-data; name="text"\r\n\r\nx\r\n--XyZ--\r\n'),
    (None, b'{"url": "https://example.org/a", "text": "x"}'),
]


@pytest.mark.parametrize(("method", "path"), WRITES)
def test_writes_accept_only_json(bridge: Bridge, method: str, path: str) -> None:
    before = file_hashes(bridge.vault.path)
    origin = ORIGIN if path.startswith("/api/pair/") else None
    for content_type, raw in NOT_JSON:
        reply = bridge.request(method, concrete(method, path), raw=raw, content_type=content_type, origin=origin)
        assert reply.status == 415, (path, content_type, reply.raw)
        assert reply.code == "unsupported_media_type"
    assert file_hashes(bridge.vault.path) == before


@pytest.mark.parametrize(("method", "path"), WRITES)
def test_writes_need_the_client_header(bridge: Bridge, method: str, path: str) -> None:
    before = file_hashes(bridge.vault.path)
    origin = ORIGIN if path.startswith("/api/pair/") else None
    reply = send(bridge, method, path, client=False, origin=origin)
    assert reply.status == 403 and reply.code == "missing_client_header", reply.raw
    assert file_hashes(bridge.vault.path) == before


def test_huge_content_length_is_refused_before_reading(bridge: Bridge) -> None:
    head = (f"POST /api/notes HTTP/1.1\r\nHost: 127.0.0.1:{bridge.port}\r\nAuthorization: Bearer {bridge.token}\r\n"
            "Content-Type: application/json\r\nX-Vodou-Client: extension\r\nContent-Length: 1000000000000\r\n\r\n")
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", bridge.port), timeout=5) as sock:
        sock.sendall(head.encode() + b'{"url": ')
        answer = sock.recv(4096)
    assert time.monotonic() - started < 1.0
    assert answer.startswith(b"HTTP/1.1 413"), answer[:100]
    assert b"payload_too_large" in answer


def test_body_just_over_the_limit_is_413(bridge: Bridge) -> None:
    raw = b'{"url": "https://example.org/a", "text": "' + b"x" * (3 * 1024 * 1024) + b'"}'
    reply = bridge.request("POST", "/api/notes", raw=raw)
    assert reply.status == 413


def test_token_in_query_is_400_and_never_logged(bridge: Bridge, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    secret = bridge.token
    for name in ("token", "access_token", "Token", "key"):
        reply = bridge.get(f"/api/page-match/site-modes?{name}={secret}")
        assert reply.status == 400 and reply.code == "token_in_query"
        reply = bridge.get(f"/api/ping?{name}={secret}", token=None)
        assert reply.status == 400
    assert bridge.get("/api/page-match/site-modes").status == 200  # the access log is on
    time.sleep(0.1)
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "/api/page-match/site-modes" in logged
    assert secret not in logged and secret not in caplog.text


def test_api_major_version_mismatch_is_412(bridge: Bridge) -> None:
    assert bridge.get("/api/ping", headers={"X-Vodou-API": "2.0"}).status == 412
    assert bridge.get("/api/ping", headers={"X-Vodou-API": "0.9"}).code == "api_version_mismatch"
    assert bridge.get("/api/ping", headers={"X-Vodou-API": "1.7"}).status == 200


def test_bad_tokens_back_off_without_locking_out_the_paired_extension(bridge: Bridge) -> None:
    statuses = [bridge.get("/api/approvals", token=f"wrong{i}").status for i in range(21)]
    assert statuses[:20] == [401] * 20 and statuses[-1] == 429
    started = time.monotonic()
    assert bridge.get("/api/approvals").status == 200
    assert time.monotonic() - started < 0.5


def test_errors_are_json_without_traces(bridge: Bridge) -> None:
    for reply in (bridge.get("/api/nowhere"), bridge.request("PATCH", "/api/notes", {}),
                  bridge.post("/api/notes", raw=b"{not json"), bridge.post("/api/notes", raw=b"[1, 2]")):
        assert reply.headers["Content-Type"].startswith("application/json")
        assert set(reply.json["error"]) == {"code", "message"}
        assert b"Traceback" not in reply.raw and b"/vodou_desktop/" not in reply.raw
