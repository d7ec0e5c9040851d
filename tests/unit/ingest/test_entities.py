"""ING-4 (seed 004): token-window names, the lowercase alias guard, links and `mem entity`."""

from __future__ import annotations

import json

from tests.support import run_cli
from vodou_desktop.ingest.entities import aliases_for, extract_entities, find_names, lowercase_vocabulary
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.vault import entities_store as es


def test_token_window_does_not_swallow_the_name():
    assert find_names("Met Jane Doe at the conference.", set()) == ["Jane Doe"]
    assert find_names("I met Jane Doe and Tom Hardy.", set()) == ["Jane Doe", "Tom Hardy"]
    assert find_names("Mary Ann Smith called on Monday.", set()) == ["Mary Ann Smith"]
    assert find_names("Jane Doe joined Acme Corp.", set()) == ["Jane Doe", "Acme Corp"]


def test_a_sentence_opener_seen_lowercase_is_not_part_of_a_name():
    lowercase = lowercase_vocabulary(["we still owe them a visit"])
    assert find_names("Visit Lisbon Harbour soon.", lowercase) == ["Lisbon Harbour"]


def test_a_token_seen_lowercase_never_becomes_an_alias():
    lowercase = lowercase_vocabulary(["the rose bush by the door needs water"])
    assert aliases_for("Rose Bush", lowercase) == []
    assert aliases_for("Jane Doe", lowercase) == ["Jane", "Doe"]


def test_entities_are_stored_linked_and_listed(vault, vault_path):
    a = remember(vault, "Met Jane Doe at the PyCon sprint.", Origin(kind="cli"))
    b = remember(vault, "Doe prefers email over Slack.", Origin(kind="cli"))
    remember(vault, "A doe and her fawn crossed the road.", Origin(kind="cli"))  # 'doe' seen lowercase
    c = remember(vault, "Priya Shah leads design at Northwind.", Origin(kind="cli"), project="atlas")
    report = extract_entities(vault)
    assert report.entities == {"Jane Doe": ["Jane"], "Priya Shah": ["Priya", "Shah"]}
    assert vault.read(lambda conn: es.find_entities(conn, "Doe")) == []
    assert [n for _, n in vault.read(lambda conn: es.find_entities(conn, "jane"))] == ["Jane Doe"]
    vault.close()
    res = run_cli("--vault", str(vault_path), "mem", "entity", "Jane Doe", "--json")
    assert res.code == 0, res.err
    out = json.loads(res.out)
    assert [f["id"] for f in out[0]["facts"]] == [a]  # 'Doe prefers…' is not linked: no alias 'Doe'
    assert b not in [f["id"] for f in out[0]["facts"]]
    res = run_cli("--vault", str(vault_path), "mem", "entity", "Priya", "--project", "other", "--json")
    assert json.loads(res.out)[0]["facts"] == []  # the project wall holds here too
    res = run_cli("--vault", str(vault_path), "mem", "entity", "Priya", "--project", "atlas", "--json")
    assert [f["id"] for f in json.loads(res.out)[0]["facts"]] == [c]
    res = run_cli("--vault", str(vault_path), "mem", "entity", "Nobody")
    assert res.code == 2 and "no entity called 'Nobody'" in res.err


def test_mem_search_entity_keeps_only_that_entitys_facts(vault, vault_path, monkeypatch):
    monkeypatch.setenv("VODOU_EMBEDDER", "none")
    a = remember(vault, "Met Jane Doe to plan the garden party.", Origin(kind="cli"))
    remember(vault, "The garden party needs forty chairs.", Origin(kind="cli"))
    extract_entities(vault)
    vault.close()
    res = run_cli("--vault", str(vault_path), "mem", "search", "garden party", "--entity", "Jane", "--json")
    assert res.code == 0, res.err
    assert [f["id"] for f in json.loads(res.out)["results"]] == [a]
    res = run_cli("--vault", str(vault_path), "mem", "search", "garden", "--entity", "Nobody")
    assert res.code == 2 and "Nobody" in res.err
