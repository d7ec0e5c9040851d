"""ING-1 / seed 004: flush windows, the unanimity rule, and the mixed-batch audit."""

from __future__ import annotations

from functools import partial

import pytest

from vodou_desktop.errors import InvalidInput
from vodou_desktop.ingest import window as w
from vodou_desktop.ingest.window import Entry
from vodou_desktop.vault import FactFilter
from vodou_desktop.vault import ingest_store as store
from vodou_desktop.vault import query as q

WEB = "We decided to price the Atlas retainer at 4000 euros per month."
TERMINAL = [
    "We use ruff for linting in every Python repo.",
    "I prefer pytest over unittest for new code.",
    "Our deploy script runs from the ops laptop.",
]


def _mixed_window(vault):
    w.enqueue(vault, [Entry(WEB, "web", project="atlas", event_at="2026-07-02T09:00:00+00:00")])
    w.enqueue(vault, [Entry(t, "claude-code", event_at=f"2026-07-02T09:0{i + 1}:00+00:00")
                      for i, t in enumerate(TERMINAL)])
    return w.flush(vault)


def test_rule_unanimity_not_dominance():
    assert w.window_project(["a", "a", "a"]) == "a"
    assert w.window_project(["a", None, None]) is None  # the seed-004 bug: the only tag must not win
    assert w.window_project(["a", "b"]) is None
    assert w.window_project([None]) is None
    assert w.window_scope(["work", None, "work", "home"]) == "work"  # scope keeps dominance


def test_mixed_window_stays_global_and_visible_from_every_project(vault, facts_of):
    report = _mixed_window(vault)
    assert report.entries == 4 and report.label.project is None
    facts = facts_of(vault)
    assert len(facts) == 4
    assert all(f.project is None for f in facts)
    for project in ("atlas", "other-client", None):
        visible = vault.read(partial(q.list_facts, f=FactFilter(project=project)))
        assert {f.text for f in visible} >= {WEB}
        assert len(visible) == 8  # each entry kept whole, and what was distilled from it
    assert vault.read(q.mixed_batch_tags) == []


def test_unanimous_window_is_tagged_and_walled(vault, facts_of):
    w.enqueue(vault, [Entry("We decided to ship Atlas v2 on Friday.", "claude-code", project="atlas"),
                      Entry("Our Atlas staging database is called atlas-stg.", "cursor", project="atlas")])
    report = w.flush(vault)
    assert report.label.project == "atlas"
    facts = facts_of(vault)
    assert len(facts) == 2 and {f.project for f in facts} == {"atlas"}
    assert vault.read(partial(q.list_facts, f=FactFilter(project="other"))) == []
    assert vault.read(q.mixed_batch_tags) == []


def test_every_fact_traces_to_its_batch_inputs(vault, facts_of):
    report = _mixed_window(vault)
    events = vault.read(partial(store.events_for_batch, batch_id=report.batch_id))
    assert len(events) == 4
    assert {e["project"] for e in events} == {"atlas", None}
    assert {e["tool"] for e in events} == {"web", "claude-code"}
    assert all(f.batch_id == report.batch_id for f in facts_of(vault))
    assert w.pending_count(vault) == 0
    assert w.flush(vault).entries == 0  # entries are turned into facts exactly once


def test_audit_finds_a_fact_tagged_from_a_mixed_batch(vault):
    """Seed the old dominance bug by hand: the audit query names the row."""
    report = _mixed_window(vault)
    fact_id = report.fact_ids[0]
    vault.write(lambda c, ch: c.execute("UPDATE chunks SET project_id = 'atlas' WHERE id = ?", (fact_id,)))
    assert vault.read(q.mixed_batch_tags) == [(fact_id, "atlas", 2)]


def test_scope_by_dominance_and_preferences_stay_global(vault, facts_of):
    w.enqueue(vault, [Entry("I prefer tabs over spaces in Makefiles.", "cursor", project="atlas", scope="work"),
                      Entry("We use Terraform for the Atlas infra.", "cursor", project="atlas", scope="work"),
                      Entry("We use Grafana dashboards for Atlas alerts.", "cursor", project="atlas", scope="home")])
    w.flush(vault)
    facts = {f.text: f for f in facts_of(vault)}
    assert {f.scope for f in facts.values()} == {"work"}
    assert facts["I prefer tabs over spaces in Makefiles."].project is None
    assert facts["We use Terraform for the Atlas infra."].project == "atlas"


def test_context_fences_never_reach_the_buffer_or_facts(vault, vault_path, facts_of):
    from tests.support import total_hits

    text = "We use Podman for containers. <vodou:context>CANARY-7731 we use Docker</vodou:context>"
    w.enqueue(vault, [Entry(text, "web")])
    w.flush(vault)
    vault.checkpoint()
    assert [f.text for f in facts_of(vault)] == ["We use Podman for containers."]
    assert total_hits(vault_path, "CANARY-7731") == 0


def test_bad_entries_are_refused_before_anything_is_written(vault):
    with pytest.raises(InvalidInput, match="empty"):
        w.enqueue(vault, [Entry("We use ruff.", "cli"), Entry("<vodou:context>x</vodou:context>", "cli")])
    with pytest.raises(InvalidInput, match="event time"):
        w.enqueue(vault, [Entry("We use ruff.", "cli", event_at="yesterday")])
    assert w.pending_count(vault) == 0


def test_web_conversation_maps_to_one_project(vault, facts_of):
    turns = [Entry("We decided the Atlas logo stays blue.", "panel"), Entry("Our Atlas contact is Mia Ross.", "panel")]
    report = w.capture_conversation(vault, turns, project="atlas", conversation_id="conv-1")
    assert report.label.project == "atlas"
    assert {f.project for f in facts_of(vault)} == {"atlas"}
    assert vault.read(q.mixed_batch_tags) == []
