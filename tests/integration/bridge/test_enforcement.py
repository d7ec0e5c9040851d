"""GOV-4 at the HTTP level: each route that takes a page URL obeys the site mode on its own."""

from __future__ import annotations

import pytest

from tests.integration.bridge.helpers import Bridge
from tests.support import file_hashes
from vodou_desktop.bridge import routes
from vodou_desktop.governance.policy import scan_unregistered

URL = "https://mode.example/page"
WRITES = {
    "/api/notes": {"url": URL, "text": "a note"}, "/api/links": {"url": URL},
    "/api/selection": {"url": URL, "title": "T", "text": "sel"},
    "/api/library": {"url": URL, "title": "T", "text": "doc"},
}


def set_mode(bridge: Bridge, mode: str) -> None:
    assert bridge.request("PUT", "/api/page-match/site-mode", {"host": "mode.example", "mode": mode}).status == 200


@pytest.fixture
def seeded(bridge: Bridge) -> tuple[Bridge, int]:
    fact_id = bridge.post("/api/notes", {"url": URL, "text": "seeded fact"}).json["id"]
    return bridge, fact_id


def test_off_match_is_empty_without_reading(seeded: tuple[Bridge, int]) -> None:
    bridge, _ = seeded
    set_mode(bridge, "off")
    loads = bridge.services.pages.probes.loads
    reply = bridge.post("/api/page-match/match", {"url": URL, "pageContext": "seeded fact"}).json
    assert reply["facts"] == [] and reply["documents"] == [] and reply["related"] == [] and reply["mode"] == "off"
    assert bridge.services.pages.probes.loads == loads


def test_off_probe_has_no_state(seeded: tuple[Bridge, int]) -> None:
    bridge, _ = seeded
    assert bridge.get(f"/api/page-match/probe?url={URL}").json["state"] == "green"
    set_mode(bridge, "off")
    loads = bridge.services.pages.probes.loads
    assert bridge.get(f"/api/page-match/probe?url={URL}").json["state"] is None
    assert bridge.services.pages.probes.loads == loads


@pytest.mark.parametrize("mode", ["off", "suggest"])
def test_writes_need_collect(seeded: tuple[Bridge, int], mode: str) -> None:
    bridge, fact_id = seeded
    set_mode(bridge, mode)
    before = file_hashes(bridge.vault.path)
    for path, body in [*WRITES.items(), ("/api/page-link", {"id": fact_id, "url": URL})]:
        reply = bridge.post(path, body)
        assert reply.status == 403 and reply.code == "policy_refused", (path, reply.raw)
    assert file_hashes(bridge.vault.path) == before


def test_suggest_needs_suggest_or_collect(seeded: tuple[Bridge, int]) -> None:
    bridge, _ = seeded
    set_mode(bridge, "off")
    assert bridge.post("/api/page-match/suggest", {"url": URL, "prefix": "see"}).status == 403
    set_mode(bridge, "suggest")
    assert bridge.post("/api/page-match/suggest", {"url": URL, "prefix": "see"}).json["suggestions"]
    assert bridge.post("/api/page-match/match", {"url": URL}).json["facts"]


def test_sensitive_default_is_off_and_pause_turns_everything_off(bridge: Bridge) -> None:
    bank = "https://login.example.com/"
    assert bridge.post("/api/notes", {"url": bank, "text": "x"}).status == 403
    bridge.services.sites.set_paused(True)
    assert bridge.post("/api/notes", {"url": URL, "text": "x"}).status == 403
    assert bridge.get(f"/api/page-match/probe?url={URL}").json["state"] is None


def test_no_page_path_in_the_bridge_bypasses_the_policy() -> None:
    assert scan_unregistered("vodou_desktop.bridge") == []
    assert scan_unregistered("vodou_desktop.governance.approvals") == []


def test_page_routes_call_governed_services_only() -> None:
    """Handlers that read a url/host pass it to a @page_operation, to SiteModes, or to forget."""
    import inspect

    allowed = ("pages.", "sites.", "forgetting.", "ActivePage(", ".turns.run")
    for _, _, handler in routes.ROUTES:
        source = inspect.getsource(handler)
        if '"url"' in source or '"host"' in source:
            assert any(a in source for a in allowed), handler.__name__
        assert "execute(" not in source and "SELECT " not in source
