"""Importers: event times from the export, import tier, per-conversation atomicity, idempotence."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import pytest

from tests.support import run_cli
from vodou_desktop.errors import InvalidInput
from vodou_desktop.ingest.importer import import_export
from vodou_desktop.vault import ingest_store as store

DATA = Path(__file__).resolve().parents[2] / "data"
CHATGPT = DATA / "chatgpt_conversations.json"
CLAUDE = DATA / "claude_conversations.json"


def test_chatgpt_import_uses_message_times_and_import_tier(vault, facts_of):
    progress: list[tuple[int, int]] = []
    report = import_export(vault, CHATGPT, "chatgpt", progress=lambda d, t: progress.append((d, t)))
    assert report.conversations == 5 and progress[-1] == (5, 5)
    facts = {f.text: f for f in facts_of(vault)}
    assert set(facts) == {
        "I prefer dark mode in every editor I use.",
        "I use Neovim at home and VS Code at work.",
        "I'm going to visit my parents in Porto over Easter.",
        "My sister lives in Lisbon, so I will stop there too.",
        "We decided to use Postgres for the billing service.",
    }
    dark = facts["I prefer dark mode in every editor I use."]
    assert dark.valid_at == "2023-11-14T22:13:20.123000+00:00" and dark.valid_precision == "instant"
    assert dark.tier == "import" and dark.source_kind == "import_chatgpt" and dark.title == "Editor setup"
    assert dark.created_at > "2025"  # import time, never the message time
    assert facts["I use Neovim at home and VS Code at work."].valid_at == "2023-11-14T22:15:20.123000+00:00"
    assert all(f.project is None for f in facts.values())


def test_malformed_conversation_is_reported_and_nothing_from_it_is_stored(vault, facts_of):
    report = import_export(vault, CHATGPT, "chatgpt")
    assert len(report.malformed) == 1 and "6a1f0c2e-4444" in report.malformed[0]
    assert "node root is not an object" in report.malformed[0]
    assert report.imported == 4  # the chit-chat one records its messages but yields no facts
    assert not any(f.title == "Broken export entry" for f in facts_of(vault))


def test_edited_away_branch_is_not_imported(vault, facts_of):
    import_export(vault, CHATGPT, "chatgpt")
    assert "I prefer light mode in every editor I use." not in {f.text for f in facts_of(vault)}


def test_reimport_adds_nothing(vault, facts_of):
    first = import_export(vault, CHATGPT, "chatgpt")
    before = facts_of(vault)
    again = import_export(vault, CHATGPT, "chatgpt")
    assert again.imported == 0 and again.facts == 0 and again.messages == 0
    assert facts_of(vault) == before and first.distilled == len(before)
    assert first.facts == first.distilled + first.conversation_memories


def test_each_conversation_is_one_batch_with_its_inputs(vault, facts_of):
    import_export(vault, CHATGPT, "chatgpt")
    fact = next(f for f in facts_of(vault) if f.text.startswith("I prefer dark"))
    events = vault.read(partial(store.events_for_batch, batch_id=fact.batch_id))
    assert len(events) == 2 and all(e["project"] is None for e in events)


def test_claude_import(vault, facts_of):
    report = import_export(vault, CLAUDE, "claude")
    assert len(report.malformed) == 1 and "last tuesday" in report.malformed[0]
    facts = {f.text: f for f in facts_of(vault)}
    assert facts["Our team uses Linear for tickets and Notion for docs."].valid_at == "2024-03-04T09:15:10.000000+00:00"
    assert facts["I'm allergic to penicillin, keep that in mind."].source_kind == "import_claude"
    assert "Priya leads the design team and prefers Figma comments over Slack." in facts
    assert "I run a small pottery studio on weekends." not in facts


@pytest.mark.parametrize(("content", "problem"), [
    ('[{"title": "x", "mapping": {', "truncated"),
    ('{"not": "a list"}', "expected a JSON list"),
    ("[1, 2,, 3]", "not valid JSON"),
    (b"\xff\xfe\x00garbage", "not UTF-8"),
])
def test_broken_files_give_a_clear_error_and_write_nothing(vault, facts_of, tmp_path, content, problem):
    path = tmp_path / "conversations.json"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(InvalidInput, match=problem):
        import_export(vault, path, "chatgpt")
    assert facts_of(vault) == []


def test_huge_and_missing_files(vault, tmp_path):
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([]) + " " * 2000)
    with pytest.raises(InvalidInput, match="too large"):
        import_export(vault, path, "chatgpt", max_bytes=1000)
    with pytest.raises(InvalidInput, match="no such file"):
        import_export(vault, tmp_path / "nope.json", "chatgpt")


def test_cli_import_json_summary_and_exit_codes(vault_path, tmp_path):
    res = run_cli("--vault", str(vault_path), "import", "chatgpt", str(CHATGPT), "--json")
    assert res.code == 1  # a malformed conversation was skipped: said, and not a silent success
    summary = json.loads(res.out)
    assert summary["distilled"] == 5 and summary["conversation_memories"] == 6 and len(summary["malformed"]) == 1
    assert "importing:" not in res.err  # progress is for a terminal; a script gets the summary alone
    res = run_cli("--vault", str(vault_path), "import", "claude", str(tmp_path / "missing.json"))
    assert res.code == 2 and res.err.startswith("vodou: error: no such file")


@pytest.mark.parametrize(("path", "fmt"), [(CHATGPT, "chatgpt"), (CLAUDE, "claude")])
def test_every_message_read_is_recorded_kept_or_not(vault, facts_of, path, fmt):
    """Each user message of a stored conversation — turned into facts or not — is recorded as seen
    (so a re-import adds nothing) and as an input of its conversation's batch (the label audit)."""
    from vodou_desktop.ingest.exports import MalformedConversation, conversations, load_export
    from vodou_desktop.ingest.importer import message_key

    import_export(vault, path, fmt)
    convs = [c for c in conversations(load_export(path), fmt) if not isinstance(c, MalformedConversation)]
    users = [(c, m) for c in convs for m in c.messages if m.role == "user"]
    kept = {f.batch_id for f in facts_of(vault)}
    seen = vault.read(partial(store.seen_keys, keys=[message_key(fmt, c, m.id, m.text) for c, m in users]))
    assert len(seen) == len(users)
    events = vault.read(lambda conn: list(conn.execute("SELECT entry_id, batch_id, tool FROM source_events")))
    batch_of = {entry: batch for entry, batch, _ in events}
    assert sorted(batch_of) == sorted(m.id for _, m in users) and len(events) == len(users)
    assert {t for _, _, t in events} == {fmt}
    for conv in convs:  # one batch per conversation, holding all its user messages
        assert len({batch_of[m.id] for m in conv.messages if m.role == "user"}) == 1
    assert kept <= set(batch_of.values())
    if fmt == "chatgpt":  # its chit-chat conversation gave no fact: its messages are recorded all the same
        assert set(batch_of.values()) - kept
