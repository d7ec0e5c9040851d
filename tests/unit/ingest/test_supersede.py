"""ING-3: same subject + attribute with a different value → the older is superseded, reversibly."""

from __future__ import annotations

from functools import partial

from tests.support import run_cli
from vodou_desktop.ingest.supersede import claim, contradicts, resolve_contradictions
from vodou_desktop.vault import ALL_PROJECTS, FactFilter
from vodou_desktop.vault import query as q
from vodou_desktop.vault.facts import insert_fact
from vodou_desktop.vault.sources import stamp_source


def add(vault, text, valid_at=None, tier="first_party", project=None):
    def job(conn, change):
        sid = stamp_source(conn, change, kind="cli", tier=tier)
        return insert_fact(conn, change, text=text, source_id=sid, valid_at=valid_at, project=project)
    return vault.write(job)


def test_the_rule():
    assert contradicts("I prefer dark mode.", "I prefer light mode in my editor.")
    assert contradicts("Jane lives in Oslo.", "Jane lives in Lima.")
    assert contradicts("Kai's phone number is 555-1234.", "Kai's phone number is 555-9999.")
    assert not contradicts("I prefer dark mode.", "I prefer dark mode in every app.")  # same value
    assert not contradicts("I like pizza.", "I like sushi.")  # not single-valued
    assert not contradicts("I prefer dark mode.", "I prefer light themes.")  # different attribute
    assert not contradicts("Jane lives in Oslo.", "Tom lives in Lima.")  # different subject
    assert claim("Do I prefer dark mode?") is None


def test_newer_wins_and_unsupersede_restores(vault, vault_path):
    old = add(vault, "I prefer dark mode.", "2025-01-01T00:00:00+00:00")
    other = add(vault, "I like sushi a lot.")
    new = add(vault, "I prefer light mode.", "2026-01-01T00:00:00+00:00")
    assert resolve_contradictions(vault, [new]) == [(old, new)]
    live = vault.read(partial(q.list_facts, f=FactFilter(project=ALL_PROJECTS)))
    assert {f.id for f in live} == {other, new}
    hidden = vault.read(partial(q.get_fact, fact_id=old, f=FactFilter(project=ALL_PROJECTS, include_superseded=True)))
    assert hidden.superseded_by == new and hidden.text == "I prefer dark mode."
    vault.close()
    res = run_cli("--vault", str(vault_path), "mem", "unsupersede", str(old))
    assert res.code == 0 and "is live again" in res.out
    res = run_cli("--vault", str(vault_path), "mem", "unsupersede", str(old))
    assert res.code == 2 and "not superseded" in res.err


def test_an_older_import_never_supersedes_newer_memory(vault):
    mine = add(vault, "I prefer light mode.", "2026-03-01T00:00:00+00:00")
    imported = add(vault, "I prefer dark mode.", "2023-11-14T22:13:20+00:00", tier="import")
    assert resolve_contradictions(vault, [imported]) == [(imported, mine)]


def test_projects_do_not_supersede_each_other(vault):
    add(vault, "Jane lives in Oslo.", project="a")
    b = add(vault, "Jane lives in Lima.", project="b")
    assert resolve_contradictions(vault, [b]) == []


def test_a_flush_settles_its_new_facts(vault):
    from vodou_desktop.ingest import window as w
    from vodou_desktop.ingest.settle import settle_new_facts

    old = add(vault, "I prefer dark mode.", "2025-01-01T00:00:00+00:00")
    w.enqueue(vault, [w.Entry("I prefer light mode. Jane Doe works at Acme.", "cursor")])
    report = w.flush(vault)
    settled = settle_new_facts(vault, report.distilled_ids)
    assert settled.superseded == [(old, report.distilled_ids[0])]
    assert settled.entities == ["Jane Doe"] and not settled.grouped
