"""ING-6 (issue 33): an imported or captured conversation keeps the person's words, names the message
each memory came from, files under a project on request, and is governed like every other memory."""

from __future__ import annotations

import json
import os
import time
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from tests.support import run_cli, total_hits
from vodou_desktop.errors import InvalidInput
from vodou_desktop.governance.forget import Forgetting
from vodou_desktop.ingest import window as w
from vodou_desktop.ingest.importer import import_export
from vodou_desktop.vault import ALL_PROJECTS, FactFilter, Vault
from vodou_desktop.vault import ingest_store as store
from vodou_desktop.vault import query as q

from .conftest import all_facts, turns_of

T0 = 1_710_000_000.0
PLAN_REPLY = ("Certainly! A weekly review keeps a budget honest without taking much time.\n\n"
              "### Steps\n1. **Track every expense**: log it the same day.\n"
              "2. **Review on Sundays**: compare against the plan.\n"
              "3. **Adjust the categories**: move money where it is short.\n\nWould you like a template?")
LONG = " ".join(f"Sentence number {i} of a very long message about my garden in Porto." for i in range(700))


def chatgpt_export(messages: list[tuple[str, str, float]], cid: str = "conv-1", title: str = "Budget") -> list[Any]:
    """A real ChatGPT ``conversations.json``: a null root, a hidden system message, then the messages."""
    mapping: dict[str, Any] = {
        "root": {"id": "root", "message": None, "parent": None, "children": ["sys"]},
        "sys": {"id": "sys", "parent": "root", "children": [], "message": {
            "id": "sys", "author": {"role": "system"}, "create_time": None,
            "content": {"content_type": "text", "parts": [""]},
            "metadata": {"is_visually_hidden_from_conversation": True}}},
    }
    parent = "sys"
    for i, (role, text, at) in enumerate(messages):
        node = f"{cid}-m{i}"
        mapping[node] = {"id": node, "parent": parent, "children": [], "message": {
            "id": node, "author": {"role": role}, "create_time": at,
            "content": {"content_type": "text", "parts": [text]}}}
        mapping[parent]["children"].append(node)
        parent = node
    return [{"id": cid, "conversation_id": cid, "title": title, "create_time": T0, "mapping": mapping,
             "current_node": parent}]


CHAT = [
    ("user", "I'm starting remote work three days a week from June 15, how can I plan my budget?", T0),
    ("assistant", PLAN_REPLY, T0 + 10),
    ("user", "That sounds like a solid plan. I'll track my expenses in YNAB from now on.", T0 + 20),
    ("assistant", "Great choice! YNAB works well for that.", T0 + 30),
    # two messages of the person in the same second: only the source event tells them apart
    ("user", "I prefer weekly reviews over monthly ones.", T0 + 40),
    ("user", "Always show amounts in euros when I ask about my budget.", T0 + 40),
    ("assistant", "Noted, amounts in euros from now on.", T0 + 50),
    ("user", "Thanks!", T0 + 60),
]


@pytest.fixture
def export(tmp_path: Path) -> Path:
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(chatgpt_export(CHAT)), encoding="utf-8")
    return path


def _messages(vault: Vault) -> dict[int, tuple[int, str, str | None]]:
    everything = FactFilter(project=ALL_PROJECTS, include_forgotten=True)
    facts = all_facts(vault, turns=True, include_forgotten=True)
    return vault.read(partial(q.message_entries, ids=[f.id for f in facts], f=everything))


def test_each_of_the_persons_messages_is_kept_whole(vault, export):
    report = import_export(vault, export, "chatgpt")
    turns = turns_of(vault)
    persons = [text for role, text, _ in CHAT if role == "user"]
    assert [t.text for t in turns] == persons  # "Thanks!" too: the person's words, whatever they are
    assert report.conversation_memories == len(persons) and report.messages == len(persons)
    assert {t.kind for t in turns} == {"conversation"} and all(t.confidence is None for t in turns)
    assert len({t.extra.get("thread_id") for t in turns}) <= 1  # one conversation, in order
    ordered = vault.read(partial(q.thread_neighbour_ids, ids=[turns[1].id], f=FactFilter(project=ALL_PROJECTS)))
    assert sorted(other for _, _, other in ordered) == [turns[0].id, turns[2].id]


def test_every_memory_names_the_message_it_came_from(vault, export):
    import_export(vault, export, "chatgpt")
    entries = _messages(vault)
    facts = all_facts(vault, turns=True)
    assert set(entries) == {f.id for f in facts}  # every memory, distilled or kept whole
    by_text = {f.text: entries[f.id][1] for f in facts}
    # the two messages of the same second are told apart (valid_at alone could not)
    assert by_text["I prefer weekly reviews over monthly ones."] == "conv-1-m4"
    assert by_text["Always show amounts in euros when I ask about my budget."] == "conv-1-m5"
    assert by_text["I'm starting remote work three days a week from June 15."] == "conv-1-m0"
    assert {f.kind for f in facts if entries[f.id][1] == "conv-1-m5"} == {"conversation", "instruction"}
    events = vault.read(partial(store.events_for_batch, batch_id=facts[0].batch_id))
    assert {e["id"] for e in events} >= {entries[f.id][0] for f in facts}


def test_an_assistant_reply_is_kept_only_as_what_the_person_accepted(vault, export):
    report = import_export(vault, export, "chatgpt")
    entries = _messages(vault)
    facts = all_facts(vault, turns=True)
    from_assistant = [f for f in facts if entries[f.id][2] == "assistant"]
    assert report.accepted == 1 and len(from_assistant) == 1  # the plan accepted; "Great choice!" etc. never
    accepted = from_assistant[0]
    assert accepted.kind == "decision" and entries[accepted.id][1] == "conv-1-m1" and accepted.confidence == 0.8
    assert accepted.text.startswith("Accepted the assistant's suggestion: A weekly review keeps a budget honest")
    assert "Track every expense; Review on Sundays; Adjust the categories" in accepted.text
    assert not any("Noted, amounts in euros" in f.text or "Great choice" in f.text for f in facts)
    message = vault.read(partial(q.source_message, fact_id=accepted.id, f=FactFilter(project=ALL_PROJECTS)))
    assert message.role == "assistant" and message.text is None  # the reply itself is not kept
    assert message.accepted_in == CHAT[2][1]


def test_the_message_text_is_shown_for_a_distilled_memory(vault, export):
    import_export(vault, export, "chatgpt")
    fact = next(f for f in all_facts(vault) if f.text == "I'm starting remote work three days a week from June 15.")
    message = vault.read(partial(q.source_message, fact_id=fact.id, f=FactFilter(project=ALL_PROJECTS)))
    assert message.text == CHAT[0][1] and message.role == "user" and message.entry_id == "conv-1-m0"
    assert message.at == "2024-03-09T16:00:00.000000+00:00"


def test_a_very_long_message_is_kept_in_parts_and_shown_whole(vault, tmp_path):
    path = tmp_path / "long.json"
    path.write_text(json.dumps(chatgpt_export([("user", LONG, T0)])), encoding="utf-8")
    import_export(vault, path, "chatgpt")
    parts = turns_of(vault)
    assert len(parts) >= 2 and all(len(p.text) <= 8_000 for p in parts)
    assert " ".join(p.text for p in parts) == LONG  # nothing cut off, in order
    message = vault.read(partial(q.source_message, fact_id=parts[1].id, f=FactFilter(project=ALL_PROJECTS)))
    assert message.text.replace("\n", " ") == LONG and message.turn_ids == tuple(p.id for p in parts)


def test_import_into_a_project(vault, export):
    report = import_export(vault, export, "chatgpt", project="budget")
    facts = all_facts(vault, turns=True)
    assert report.project == "budget"
    assert {f.project for f in facts if f.kind != "preference"} == {"budget"}
    assert {f.project for f in facts if f.kind == "preference"} == {None}  # about the person: global
    other = vault.read(partial(q.list_facts, f=FactFilter(project="other")))
    assert [f.kind for f in other] == ["preference"]  # the wall holds for the rest, turns included
    assert vault.read(q.mixed_batch_tags) == [] and vault.read(q.memories_without_message) == ([], 0)
    again = import_export(vault, export, "chatgpt", project="budget")
    assert again.facts == 0 and again.messages == 0
    with pytest.raises(InvalidInput, match="project"):
        import_export(vault, export, "chatgpt", project="bad\nname")


def test_cli_import_with_project_and_summary(vault_path, export):
    res = run_cli("--vault", str(vault_path), "import", "chatgpt", str(export), "--project", "budget")
    assert res.code == 0, res.err
    assert res.out.startswith("1 conversation read, 1 imported into project budget (5 new messages: 5 kept as "
                              "conversation, ")
    assert "1 of them from replies you accepted" in res.out
    res = run_cli("--vault", str(vault_path), "import", "chatgpt", str(export), "--project", "budget", "--json")
    assert json.loads(res.out)["messages"] == 0 and json.loads(res.out)["project"] == "budget"


def test_mem_show_prints_the_message_a_memory_came_from(vault_path, export):
    run_cli("--vault", str(vault_path), "import", "chatgpt", str(export))
    vault = Vault.open(vault_path)
    try:
        fact = next(f for f in all_facts(vault) if f.text == "I'm starting remote work three days a week from June 15.")
        accepted = next(f for f in all_facts(vault) if f.text.startswith("Accepted the assistant's"))
    finally:
        vault.close()
    shown = run_cli("--vault", str(vault_path), "mem", "show", str(fact.id))
    assert shown.code == 0 and "From your message conv-1-m0" in shown.out
    assert "how can I plan my budget?" in " ".join(shown.out.split())  # the whole message, request and all
    data = json.loads(run_cli("--vault", str(vault_path), "mem", "show", str(fact.id), "--json").out)
    assert data["message"]["text"] == CHAT[0][1] and data["source_event_id"] == data["message"]["event_id"]
    shown = run_cli("--vault", str(vault_path), "mem", "show", str(accepted.id))
    assert "From the assistant's reply (message conv-1-m1" in shown.out and "which you accepted" in shown.out
    assert "I'll track my expenses in YNAB" in " ".join(shown.out.split())


def test_capture_windows_keep_the_persons_turns_under_unanimity(vault):
    w.enqueue(vault, [w.Entry("We use Terraform for the Atlas infra.", "cursor", project="atlas"),
                      w.Entry("Can you check the plan output?", "claude-code", project=None)])
    report = w.flush(vault)
    turns = turns_of(vault)
    assert [t.text for t in turns] == ["We use Terraform for the Atlas infra.", "Can you check the plan output?"]
    assert report.label.project is None and {t.project for t in turns} == {None}  # one untagged entry: global
    assert report.turn_ids == [t.id for t in turns] and len(report.distilled_ids) == 1
    assert vault.read(q.memories_without_message) == ([], 0)


def test_an_inbox_file_is_distilled_not_kept_as_a_turn(vault, tmp_path):
    """A file dropped in the inbox is a note, not a conversation: its memories are distilled only."""
    from vodou_desktop.ingest.watch import SessionWatcher

    inbox = tmp_path / "inbox"
    inbox.mkdir()
    note = inbox / "note.txt"
    note.write_text("We use Podman for containers. Can you remind me of the flags?")
    os.utime(note, (time.time() - 5, time.time() - 5))  # settled: unchanged for longer than SETTLE_S
    watcher = SessionWatcher(vault, None, inbox)
    watcher._mark(note)
    watcher.process_dirty()
    assert [(f.text, f.kind) for f in all_facts(vault, turns=True)] == [("We use Podman for containers.", "fact")]


def test_conversation_memory_is_governed_like_every_memory(vault, vault_path, export, tmp_path):
    """Wall, forget, erase and export reach the person's turns as they reach any memory."""
    from vodou_desktop.data.export import ExportScope, import_records, write_jsonl

    import_export(vault, export, "chatgpt", project="budget")
    turn = next(t for t in turns_of(vault) if t.text.startswith("I'm starting remote work"))
    assert vault.read(partial(q.list_facts, f=FactFilter(project="elsewhere"))) != []  # the preference only
    assert turn.id not in {f.id for f in vault.read(partial(q.list_facts, f=FactFilter(project="elsewhere")))}
    forgetting = Forgetting(vault)
    forgetting.forget_fact(turn.id)
    assert turn.id not in {f.id for f in vault.read(partial(q.list_facts, f=FactFilter(project="budget")))}
    hidden = vault.read(partial(q.source_message, fact_id=next(
        f.id for f in all_facts(vault) if f.text.startswith("I'm starting remote")), f=FactFilter(project="budget")))
    assert hidden.text is None  # the forgotten message is not shown through a memory distilled from it
    out = tmp_path / "export.jsonl"
    with out.open("w", encoding="utf-8") as fh:
        write_jsonl(vault, ExportScope(include_forgotten=True), fh)
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    copy = Vault.open(tmp_path / "copy.sqlite")
    try:
        import_records(copy, records)
        assert _messages(copy) == _messages(vault)  # every memory still names its message
        assert {f.id: f.confidence for f in all_facts(copy, turns=True, include_forgotten=True)} == \
            {f.id: f.confidence for f in all_facts(vault, turns=True, include_forgotten=True)}
    finally:
        copy.close()
    canary = "three days a week from June 15, how can I plan"
    forgetting.erase_fact(turn.id)
    vault.checkpoint()
    assert total_hits(vault_path, canary) == 0


def test_search_ranks_a_distilled_memory_above_the_turn_it_came_from(vault, export, keyword_search):
    import_export(vault, export, "chatgpt")
    results = keyword_search.search("weekly reviews monthly", FactFilter(project=ALL_PROJECTS))
    same = [r for r in results if "weekly reviews over monthly" in r.fact.text]
    assert [r.fact.kind for r in same] == ["preference", "conversation"]
    pref, turn = same[0].factors, same[1].factors
    assert (pref["kind_weight"], pref["same_message_weight"]) == (1.5, 1.0)  # standing: weighed up
    assert (turn["kind_weight"], turn["same_message_weight"]) == (0.9, 0.5)  # its message's second memory
    assert same[1].score == pytest.approx(turn["final"]) and turn["final"] < pref["final"]


def test_the_doctor_finds_a_memory_that_names_no_message(vault, export):
    from vodou_desktop.ingest.doctor import check_messages

    import_export(vault, export, "chatgpt")
    assert check_messages(vault).passed
    fact = all_facts(vault)[0]
    vault.write(lambda c, ch: c.execute("UPDATE chunks SET source_event_id = NULL WHERE id = ?", (fact.id,)))
    check = check_messages(vault)
    assert not check.passed and check.rows == [{"fact_id": fact.id, "batch_id": fact.batch_id}]
    vault.write(lambda c, ch: c.execute("UPDATE chunks SET created_at = '2020-01-01T00:00:00+00:00' WHERE id = ?",
                                        (fact.id,)))
    check = check_messages(vault)
    assert check.passed and "1 older memory" in check.detail  # from before messages were named: said, not failed


def test_an_accepted_reply_is_summed_up_by_its_specific_words_not_its_pleasantries():
    from vodou_desktop.ingest.accepted import accepted_bullet, accepts

    reply = ("Great choice! I'll make sure to keep that in mind. That sounds like a great plan overall. "
             "Discussing the $5,000 emergency fund with Douglas early keeps both of you on the same page.\n\n"
             "### Steps\n1. **Gather the numbers**: list the expenses.\n2. **Pick a quiet time**: not at dinner.")
    kept = accepted_bullet(reply)
    assert kept is not None and kept.text == (
        "Accepted the assistant's suggestion: Discussing the $5,000 emergency fund with Douglas early keeps both "
        "of you on the same page. Points: Steps; Gather the numbers; Pick a quiet time.")
    assert accepted_bullet("Sure! Happy to help.") is None
    assert all(accepts(t) for t in ("That sounds like a solid plan. I'll start Monday.", "Yeah, I'll go with that.",
                                    "Thanks for the tips! I'll try the first one.", "Let's do it."))
    assert not any(accepts(t) for t in ("Hmm, what if it rains?", "That doesn't sound right to me.",
                                        "I'm not sure this plan works for me."))


def test_an_accepted_reply_whose_gist_names_nothing_leaves_no_memory():
    from vodou_desktop.ingest.accepted import accepted_bullet

    # Points alone, or a gist that is general advice, say nothing a later search could find the decision by.
    general = ("Making a decision between a new job offer and your current position involves weighing several "
               "factors, including career growth and personal satisfaction.\n\n### Pros\n### Cons")
    assert accepted_bullet(general) is None
    assert accepted_bullet("### Gather the numbers\n### Pick a quiet time") is None
    assert accepted_bullet("It's important to talk openly with Francis about your concerns and plans.\n"
                           "### Discuss the concern with Francis") is None  # a name alone: advice
    named = general.replace("a new job offer", "the Initech offer at $92,000")
    kept = accepted_bullet(named)
    assert kept is not None and "$92,000" in kept.text and kept.text.endswith("Points: Pros; Cons.")
