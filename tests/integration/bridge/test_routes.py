"""Every route through a real server: the happy path and its error statuses."""

from __future__ import annotations

from tests.integration.bridge.helpers import Bridge
from tests.support import file_hashes
from vodou_desktop.bridge import events

URL = "https://example.org/articles/one?utm_source=x#top"
KEY = "https://example.org/articles/one"


def test_site_mode_get_put_and_list(bridge: Bridge) -> None:
    got = bridge.get("/api/page-match/site-mode?host=Example.ORG.")
    assert got.status == 200 and got.json["host"] == "example.org" and got.json["mode"] == "collect"
    assert bridge.get("/api/page-match/site-mode?host=" + URL.split("#")[0].replace("?", "%3F")).status == 200
    put = bridge.request("PUT", "/api/page-match/site-mode", {"host": "example.org", "mode": "suggest"})
    assert put.status == 200 and put.json["mode"] == "suggest"
    assert bridge.get("/api/page-match/site-mode?host=news.example.org").json["mode"] == "suggest"
    listed = bridge.get("/api/page-match/site-modes").json
    assert listed["globalDefault"] == "collect" and listed["paused"] is False
    assert [r["host"] for r in listed["rules"]] == ["example.org"]
    assert bridge.get("/api/page-match/site-mode").status == 400
    assert bridge.get("/api/page-match/site-mode?host=not%20a%20host").status == 400
    bad = bridge.request("PUT", "/api/page-match/site-mode", {"host": "example.org", "mode": "always"})
    assert bad.status == 400 and "mode" in bad.json["error"]["message"]


def test_writes_then_match_and_probe(bridge: Bridge) -> None:
    assert bridge.get(f"/api/page-match/probe?url={KEY}").json["state"] == "none"
    note = bridge.post("/api/notes", {"url": URL, "title": "One", "text": "the launch moved to May"})
    assert note.status == 201 and note.json["fact"]["page_key"] == KEY
    assert note.json["fact"]["source_url"] == URL and note.json["fact"]["source_host"] == "example.org"
    link = bridge.post("/api/links", {"url": URL, "title": "One"})
    assert link.status == 201 and "One" in link.json["fact"]["text"]
    sel = bridge.post("/api/selection", {"url": URL, "title": "One", "text": "a selected sentence"})
    assert sel.status == 201 and sel.json["fact"]["title"] == "One"
    lib = bridge.post("/api/library", {"url": URL, "title": "One",
                                       "html": "<p>Body text</p><script>alert(1)</script>"})
    assert lib.status == 201 and lib.json["document"]["page_key"] == KEY
    match = bridge.post("/api/page-match/match", {"url": KEY}).json
    assert {f["text"] for f in match["facts"]} >= {"the launch moved to May", "a selected sentence"}
    assert [d["id"] for d in match["documents"]] == [lib.json["id"]]
    assert bridge.get(f"/api/page-match/probe?url={KEY}").json["state"] == "green"
    suggest = bridge.post("/api/page-match/suggest", {"url": URL, "prefix": "laun"})
    assert suggest.status == 200 and suggest.json["suggestions"][0]["text"] == "the launch moved to May"


def test_write_errors(bridge: Bridge) -> None:
    before = file_hashes(bridge.vault.path)
    assert bridge.post("/api/selection", {"url": URL, "text": "no title"}).status == 400
    assert bridge.post("/api/selection", {"title": "T", "text": "no url"}).status == 400
    assert bridge.post("/api/notes", {"url": URL}).status == 400
    assert bridge.post("/api/notes", {"url": "javascript:alert(1)", "text": "x"}).status == 400
    assert bridge.post("/api/notes", {"url": URL, "text": 5}).status == 400
    assert bridge.post("/api/library", {"url": URL, "title": "T"}).status == 400
    assert bridge.post("/api/page-link", {"id": "x", "url": URL}).status == 400
    assert file_hashes(bridge.vault.path) == before
    assert bridge.post("/api/page-link", {"id": 999, "url": URL}).status == 404


def test_page_link_is_manual(bridge: Bridge) -> None:
    fact_id = bridge.post("/api/notes", {"url": "https://a.example/x", "text": "linked later"}).json["id"]
    reply = bridge.post("/api/page-link", {"id": fact_id, "url": URL})
    assert reply.status == 200 and reply.json["fact"]["page_set_by"] == "manual"
    assert reply.json["fact"]["page_key"] == KEY


def test_forget_dry_run_confirm_undo(bridge: Bridge) -> None:
    bridge.post("/api/notes", {"url": URL, "text": "forget me"})
    plan = bridge.post("/api/forget/dry-run", {"host": "example.org"})
    assert plan.status == 200 and plan.json["facts"] == 1
    assert bridge.post("/api/page-match/match", {"url": KEY}).json["facts"]
    done = bridge.post("/api/forget/confirm", {"token": plan.json["token"]})
    assert done.status == 200 and done.json["facts"] == 1
    assert bridge.post("/api/page-match/match", {"url": KEY}).json["facts"] == []
    assert bridge.post("/api/forget/confirm", {"token": plan.json["token"]}).status == 409
    assert bridge.post("/api/forget/confirm", {"token": "never-issued"}).status == 400
    undo = bridge.post("/api/forget/undo", {"op": done.json["op"]})
    assert undo.status == 200 and undo.json["facts_restored"] == 1
    assert bridge.post("/api/forget/undo", {"op": done.json["op"]}).status == 409
    assert bridge.post("/api/forget/undo", {"op": "nope"}).status == 404
    assert bridge.post("/api/forget/dry-run", {"host": "bad host"}).status == 400


def test_active_page_emits_an_event(bridge: Bridge) -> None:
    reply = bridge.post("/api/active-page", {"url": URL, "title": "One"})
    assert reply.status == 200 and reply.json["accepted"] is True
    assert (events.ACTIVE_PAGE, reply.json) in bridge.events
    bridge.request("PUT", "/api/page-match/site-mode", {"host": "example.org", "mode": "off"})
    bridge.events.clear()
    refused = bridge.post("/api/active-page", {"url": URL})
    assert refused.status == 403 and refused.code == "policy_refused"
    assert not [e for e in bridge.events if e[0] == events.ACTIVE_PAGE]
    off = bridge.post("/api/active-page", {"offHost": "news.example.org"})  # the host only, so the tray dims
    assert off.status == 200 and off.json["accepted"] is False and off.json["url"] is None
    assert (off.json["host"], off.json["mode"]) == ("news.example.org", "off")
    assert [e for e in bridge.events if e[0] == events.ACTIVE_PAGE] == [(events.ACTIVE_PAGE, off.json)]
    not_off = bridge.post("/api/active-page", {"offHost": "elsewhere.example"})
    assert not_off.status == 400 and "not off" in not_off.json["error"]["message"]


def test_turn_without_model_records_the_note(bridge: Bridge) -> None:
    reply = bridge.post("/api/turns", {"content": "remember that the cat is called Miso"})
    assert reply.status == 201 and reply.json["reply"] is None
    assert reply.json["executed"][0]["tool"] == "remember" and reply.json["pending"] == []
    match = bridge.post("/api/turns", {"content": "what is the cat called"}).json["matches"]
    assert any("Miso" in m["text"] for m in match)
    assert bridge.post("/api/turns", {"content": "   "}).status == 400


def test_approvals_list_and_decide(bridge: Bridge) -> None:
    turn = bridge.post("/api/turns", {"content": "note this", "pageContext": "some page text",
                                      "url": "https://example.org/a"}).json
    [pending] = turn["pending"]
    assert bridge.get("/api/approvals").json["approvals"][0]["id"] == pending["id"]
    assert any(kind == events.APPROVALS_CHANGED for kind, _ in bridge.events)
    assert bridge.post(f"/api/approvals/{pending['id']}", {"decision": "maybe"}).status == 400
    done = bridge.post(f"/api/approvals/{pending['id']}", {"decision": "approve"})
    assert done.status == 200 and done.json["status"] == "approved" and done.json["result"]["id"]
    assert bridge.post(f"/api/approvals/{pending['id']}", {"decision": "deny"}).status == 409
    assert bridge.post("/api/approvals/999", {"decision": "deny"}).status == 404
    assert bridge.post("/api/approvals/abc", {"decision": "deny"}).status == 400
    assert bridge.get("/api/approvals").json["approvals"] == []
    assert len(bridge.get("/api/approvals?status=all").json["approvals"]) == 1


def test_unknown_route_and_method(bridge: Bridge) -> None:
    assert bridge.get("/api/nowhere").status == 404
    assert bridge.request("DELETE", "/api/notes").status == 405


def test_green_probe_and_from_this_page_list_the_same_memories_of_every_project(bridge: Bridge) -> None:
    """Issue 14 defect 1: the icon is green exactly when the panel's list is non-empty, and the list
    holds every project's memories from this page, each with its project."""
    assert bridge.get(f"/api/page-match/probe?url={KEY}").json["state"] == "none"
    assert bridge.post("/api/page-match/match", {"url": KEY}).json["facts"] == []
    saved = {}
    for project in ("family", "thesis", None):
        body = {"url": URL, "title": "One", "text": f"a memory for {project or 'everyone'}"}
        if project:
            body["project"] = project
        saved[bridge.post("/api/notes", body).json["id"]] = project
    assert bridge.get(f"/api/page-match/probe?url={KEY}").json["state"] == "green"
    for chosen in (None, "family"):
        body = {"url": KEY, **({"project": chosen} if chosen else {})}
        match = bridge.post("/api/page-match/match", body).json
        assert {f["id"]: f["project"] for f in match["facts"]} == saved
        assert match["projects"] == ["family", "thesis"]
    bridge.request("PUT", "/api/page-match/site-mode", {"host": "example.org", "mode": "off"})
    off = bridge.post("/api/page-match/match", {"url": KEY}).json
    assert off["facts"] == off["projects"] == []
    assert bridge.get(f"/api/page-match/probe?url={KEY}").json["state"] is None
