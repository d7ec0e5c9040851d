"""Probe caching (BRIDGE-3) and the OpenAPI document against the router."""

from __future__ import annotations

import re
from pathlib import Path

from tests.integration.bridge.helpers import Bridge
from vodou_desktop.bridge.routes import ROUTES

URL = "https://probe.example/p?utm_source=mail&id=3#frag"
SAME_KEY = ["https://probe.example/p?id=3", "https://PROBE.example/p?id=3&fbclid=zz", URL]
DOC = Path(__file__).resolve().parents[3] / "docs" / "bridge-protocol.md"


def test_probe_burst_reads_once_and_a_note_flips_it(bridge: Bridge) -> None:
    probes = bridge.services.pages.probes
    start = probes.loads
    states = {bridge.get(f"/api/page-match/probe?url={SAME_KEY[i % 3].replace('&', '%26').replace('#', '%23')}")
              .json["state"] for i in range(100)}
    assert states == {"none"}
    assert probes.loads - start == 1
    bridge.post("/api/notes", {"url": URL, "text": "probe fact"})
    assert bridge.get("/api/page-match/probe?url=https://probe.example/p?id=3").json["state"] == "green"
    assert probes.loads - start == 2


def test_probe_cache_expires_after_30_seconds(bridge: Bridge) -> None:
    probes = bridge.services.pages.probes
    now = [1000.0]
    probes.clock = lambda: now[0]
    bridge.get("/api/page-match/probe?url=https://probe.example/q")
    bridge.get("/api/page-match/probe?url=https://probe.example/q")
    loads = probes.loads
    now[0] += 31
    bridge.get("/api/page-match/probe?url=https://probe.example/q")
    assert probes.loads == loads + 1


def test_site_matches_do_not_make_the_probe_green(bridge: Bridge) -> None:
    bridge.post("/api/notes", {"url": "https://probe.example/other", "text": "same site, other page"})
    assert bridge.get("/api/page-match/probe?url=https://probe.example/p").json["state"] == "none"


def test_openapi_matches_the_router(bridge: Bridge) -> None:
    doc = bridge.get("/api/openapi.json").json
    assert doc["openapi"].startswith("3.")
    documented = {(m.upper(), p) for p, ops in doc["paths"].items() for m in ops}
    routed = set()
    for resource in bridge.server.app.router.resources():
        info = resource.get_info()
        path = info.get("path") or info.get("formatter")
        for route in resource:
            if route.method != "HEAD":
                routed.add((route.method, path))
    assert routed == documented
    assert {(m, p) for m, p, _ in ROUTES} == documented


def test_protocol_doc_names_every_route() -> None:
    text = DOC.read_text(encoding="utf-8")
    headings = set(re.findall(r"^### `(GET|POST|PUT|DELETE) (/api/[^`?\s]+)", text, re.M))
    mentioned = {(m, p) for m, p, _ in ROUTES if (m, p) in headings or f"{m} {p}" in text}
    assert mentioned == {(m, p) for m, p, _ in ROUTES}
