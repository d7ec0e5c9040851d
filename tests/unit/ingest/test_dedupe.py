"""ING-2: both gates, each tested with the counter-example that the other gate stops; the figures a
fact states; election."""

from __future__ import annotations

import json
from functools import partial

import pytest

from tests.support import run_cli
from vodou_desktop.ingest.dedupe import (
    JACCARD_MIN,
    cosine_gate,
    dedupe_scan,
    elect,
    figures,
    group_new,
    group_via_index,
    jaccard,
    recheck_groups_once,
    same_fact,
)
from vodou_desktop.runtime import Runtime
from vodou_desktop.search.backfill import backfill
from vodou_desktop.search.vectors import VectorIndex
from vodou_desktop.vault import ALL_PROJECTS, FactFilter, Vault
from vodou_desktop.vault import query as q
from vodou_desktop.vault.facts import insert_fact
from vodou_desktop.vault.groups import set_groups
from vodou_desktop.vault.sources import stamp_source

HEADER = ("# Atlas project weekly status notes for the client steering committee meeting\n"
          "Source: Atlas project weekly status notes for the client steering committee meeting\n"
          "## Atlas project weekly status notes for the client steering committee meeting, week 12\n")
SAME = ("I prefer dark mode in my editor.", "I prefer dark mode in my code editor.")
COSINE_ONLY = (HEADER + "Budget approved.", HEADER + "Launch slipped.")  # headers inflate cosine
JACCARD_ONLY = ("Kai's phone number ends in 4417.", "Kai's phone number ends in 9902.")
# Each pair passes both gates with the real model, yet states another figure (a distance, a price, a
# version, a date): the second is an update of the first, not a copy of it.
UPDATES = [
    ("I run 3 km every morning before work.", "I run 5 km every morning before work."),
    ("My rent in Shoreditch is £1,800 a month.", "My rent in Shoreditch is £2,100 a month."),
    ("We pinned Bootstrap 5.3.0 from the CDN.", "We pinned Bootstrap 5.3.1 from the CDN."),
    ("My daughter's recital is on May 20.", "My daughter's recital is on May 30."),
]
# ... and each of these restates the same figures: a copy.
RESTATED = [
    ("I run 5 km every morning before work.", "I run 5 km every single morning before work."),
    ("My rent in Shoreditch is £1,800 a month.", "My rent in Shoreditch is £1800 a month now."),
]


def cosine(model, a: str, b: str) -> float:
    va, vb = model.encode([a, b])
    return float(va @ vb)


def add(vault, text, tier="first_party", created_at=None, kind="cli", project=None):
    def job(conn, change):
        sid = stamp_source(conn, change, kind=kind, tier=tier)
        return insert_fact(conn, change, text=text, source_id=sid, created_at=created_at, project=project)
    return vault.write(job)


def test_header_lines_do_not_count_for_jaccard():
    assert jaccard(*COSINE_ONLY) == 0.0
    assert jaccard("# Notes\nSource: x\nWe use ruff.", "We use ruff.") == 1.0


@pytest.mark.model
def test_each_gate_alone_would_collapse_different_facts(model):
    c_same, c_cos, c_jac = cosine(model, *SAME), cosine(model, *COSINE_ONLY), cosine(model, *JACCARD_ONLY)
    gate = cosine_gate(model.model_id)  # the model's own (bge-small sits higher than MiniLM)
    assert c_same >= gate and jaccard(*SAME) >= JACCARD_MIN and same_fact(c_same, *SAME, gate)
    # cosine alone says "same" for two different status lines under one header ...
    assert c_cos >= gate and jaccard(*COSINE_ONLY) < JACCARD_MIN and not same_fact(c_cos, *COSINE_ONLY, gate)
    # ... and Jaccard alone says "same" for two different phone numbers.
    assert jaccard(*JACCARD_ONLY) >= JACCARD_MIN and c_jac < gate and not same_fact(c_jac, *JACCARD_ONLY, gate)


def test_figures_are_the_numbers_a_text_states():
    assert figures("I run 3 km a day.") == {"3"}
    assert figures("Rent is £1,800 a month for 3 months") == figures("3 months at £1800 a month") == {"1800", "3"}
    assert figures("Bootstrap 5.3.0") == {"5.3.0"} != figures("Bootstrap 5.3.1")
    assert figures("Call at 9:40 on May 3.") == {"9", "40", "3"}
    assert figures("# Week 12 notes\nSource: weekly 12\nNo numbers here.") == set()  # headers stripped
    # the figures decide only between texts the two gates already call the same
    assert not same_fact(1.0, "I run 3 km a day.", "I run 5 km a day.")
    assert not same_fact(1.0, "I run a lot.", "I run 5 km.")  # a figure on one side only
    assert same_fact(1.0, "I run 5 km a day.", "I run 5 km a day!")


@pytest.mark.model
@pytest.mark.parametrize("pair", UPDATES, ids=["distance", "price", "version", "date"])
def test_a_changed_figure_is_an_update_not_a_copy(model, pair):
    c, gate = cosine(model, *pair), cosine_gate(model.model_id)
    # both gates pass (so, before the figures counted, the update was demoted as a copy) ...
    assert c >= gate and jaccard(*pair) >= JACCARD_MIN
    # ... and only the figures tell the two facts apart
    assert not same_fact(c, *pair, gate)


@pytest.mark.model
@pytest.mark.parametrize("pair", RESTATED, ids=["same distance", "same price, no separator"])
def test_the_same_figures_restated_are_a_copy(model, pair):
    c, gate = cosine(model, *pair), cosine_gate(model.model_id)
    assert same_fact(c, *pair, gate)


@pytest.mark.model
def test_an_update_keeps_full_weight_on_every_grouping_path(vault, model, facts_of):
    """The full scan, grouping by loading every fact, and grouping on write through the vector index:
    the update stays canonical and out of the older fact's group; its copy joins it."""
    old = add(vault, UPDATES[0][0], created_at="2025-01-01T00:00:00+00:00")
    new = add(vault, UPDATES[0][1])
    copy = add(vault, RESTATED[0][1], "capture", kind="capture")
    backfill(vault, model)  # the vectors the index serves
    assert group_new(vault, model, [new, copy]).groups == [[new, copy]]
    vault.write(lambda conn, change: conn.execute("UPDATE chunks SET fact_group = NULL, is_canonical = 1"))
    index = VectorIndex(vault, model=model.model_id)
    index.load()
    try:
        assert {tuple(g) for g in group_via_index(vault, index, [new, copy]).groups} == {(new, copy)}
    finally:
        index.close()
    assert dedupe_scan(vault, model).groups == [[new, copy]]
    facts = {f.id: f for f in facts_of(vault)}
    assert facts[old].fact_group is None and facts[old].is_canonical
    assert facts[new].is_canonical and facts[new].fact_group == facts[copy].fact_group
    assert not facts[copy].is_canonical


@pytest.mark.model
def test_newer_import_never_takes_canonical_from_older_first_party(vault, model, facts_of):
    mine = add(vault, SAME[0], "first_party", "2025-01-01T00:00:00+00:00")
    other = add(vault, JACCARD_ONLY[0], "first_party")
    imported = add(vault, SAME[1], "import", "2026-06-01T00:00:00+00:00", kind="import_chatgpt")
    report = group_new(vault, model, [imported])
    assert report.groups == [[mine, imported]]
    facts = {f.id: f for f in facts_of(vault)}
    assert facts[mine].is_canonical and not facts[imported].is_canonical
    assert facts[mine].fact_group == facts[imported].fact_group == mine
    assert facts[other].fact_group is None and facts[other].is_canonical
    # the full scan agrees, and a dry run changes nothing
    before = facts_of(vault)
    assert dedupe_scan(vault, model, dry_run=True).groups == [[mine, imported]]
    assert dedupe_scan(vault, model).changed == 0 and facts_of(vault) == before


def test_election_order_tier_then_oldest_then_longer(vault, facts_of):
    add(vault, "We use ruff for linting.", "import", "2020-01-01T00:00:00+00:00", kind="import_claude")
    add(vault, "We use ruff for linting.", "capture", "2026-01-01T00:00:00+00:00", kind="capture")
    add(vault, "We use ruff for linting!", "capture", "2025-01-01T00:00:00+00:00", kind="capture")
    add(vault, "We use ruff for all linting.", "capture", "2025-01-01T00:00:00+00:00", kind="capture")
    facts = facts_of(vault)
    assert elect(facts).text == "We use ruff for all linting."
    assert elect(facts[:3]).text == "We use ruff for linting!"
    assert elect([facts[0]]).tier == "import"


@pytest.mark.model
def test_groups_stay_inside_one_project(vault, model, facts_of):
    add(vault, SAME[0], project="atlas")
    add(vault, SAME[1], project="zephyr")
    assert dedupe_scan(vault, model).groups == []


@pytest.mark.model
def test_cli_dedupe(vault_path, cli_model, vault):
    a = add(vault, SAME[0])
    b = add(vault, SAME[1], "capture", kind="capture")
    vault.close()
    res = run_cli("--vault", str(vault_path), "mem", "dedupe", "--dry-run", "--json")
    assert res.code == 0, res.err
    assert json.loads(res.out)["groups"] == [[a, b]]
    res = run_cli("--vault", str(vault_path), "mem", "dedupe")
    assert res.code == 0 and f"canonical #{a}: duplicates #{b}" in res.out
    assert "dedupe: 2/2 memories compared" in res.err
    from vodou_desktop.vault import Vault

    with Vault.open(vault_path) as v:
        dup = v.read(partial(q.get_fact, fact_id=b, f=FactFilter(project=ALL_PROJECTS)))
        assert not dup.is_canonical and dup.fact_group == a


ALL = FactFilter(project=ALL_PROJECTS)


def _grouped_the_old_way(vault, model):
    """A vault grouped before the figures rule: the 3 km fact, its 5 km update and the update's copy in
    one group under the oldest, and a pair that still holds under today's rules."""
    old = add(vault, UPDATES[0][0], created_at="2025-01-01T00:00:00+00:00")
    new = add(vault, UPDATES[0][1], created_at="2025-06-01T00:00:00+00:00")
    copy = add(vault, RESTATED[0][1], "capture", "2025-07-01T00:00:00+00:00", kind="capture")
    a, b = add(vault, SAME[0]), add(vault, SAME[1], "capture", kind="capture")
    backfill(vault, model)
    vault.write(partial(set_groups, rows=[(old, old, True), (new, old, False), (copy, old, False),
                                          (a, a, True), (b, a, False)]))
    return old, new, copy, a, b


@pytest.mark.model
def test_groups_formed_before_the_figures_rule_are_split_once_by_a_starting_app(tmp_path, model):
    vault = Vault.open(tmp_path / "v.sqlite")
    old, new, copy, a, b = _grouped_the_old_way(vault, model)
    vault.close()
    with Runtime.open(tmp_path / "v.sqlite", embedder=model, background_backfill=True) as rt:
        rt.recheck.join(60)
        facts = {f.id: f for f in rt.vault.read(lambda c: q.facts_by_ids(c, [old, new, copy, a, b], ALL))}
        # the update is no longer a copy of what it updates, and its own copy stays its copy
        assert facts[old].fact_group is None and facts[old].is_canonical
        assert facts[new].fact_group == facts[copy].fact_group is not None
        assert facts[new].is_canonical and not facts[copy].is_canonical
        # a group that still holds is left exactly as it was
        assert (facts[a].fact_group, facts[a].is_canonical) == (a, True)
        assert (facts[b].fact_group, facts[b].is_canonical) == (a, False)
        # once: the vault records the rules it was checked under
        assert recheck_groups_once(rt.vault, model.model_id) is None


@pytest.mark.model
def test_a_group_with_a_member_still_unembedded_is_checked_at_the_next_start(vault, model, facts_of):
    old, new, copy, a, b = _grouped_the_old_way(vault, model)
    vault.write(lambda conn, change: conn.execute("UPDATE chunks SET embedding = NULL WHERE id = ?", (copy,)))
    report = recheck_groups_once(vault, model.model_id)
    assert report is not None and report.skipped == 1 and report.changed == 0
    assert {f.id: f.fact_group for f in facts_of(vault)}[old] == old  # left as it was, for now
    backfill(vault, model)
    report = recheck_groups_once(vault, model.model_id)
    assert report is not None and report.skipped == 0 and sorted(map(sorted, report.groups)) == [[new, copy]]
    assert recheck_groups_once(vault, model.model_id) is None
