"""Acceptance through the CLI: ``vodou sites …``, ``vodou mem forget``, ``vodou mem erase``."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import file_hashes, run_cli, total_hits
from vodou_desktop.ingest.remember import Origin, save_document
from vodou_desktop.vault import Vault


def _vault_arg(path: Path) -> list[str]:
    return ["--vault", str(path)]


def test_sites_acceptance(tmp_path: Path) -> None:
    v = _vault_arg(tmp_path / "v.sqlite")
    assert run_cli(*v, "sites", "pause", "off").code == 0  # a write makes the vault (a read would refuse)
    got = run_cli(*v, "sites", "get", "www.chase.com", "--json")
    assert got.code == 0, got.err
    data = json.loads(got.out)
    assert (data["mode"], data["reason"]) == ("off", "sensitive default: bank")
    assert run_cli(*v, "sites", "set", "chase.com", "collect").code == 0
    data = json.loads(run_cli(*v, "sites", "get", "online.chase.com", "--json").out)
    assert (data["mode"], data["reason"]) == ("collect", "user rule on chase.com")
    plain = run_cli(*v, "sites", "get", "chase.com.evil.test")
    assert plain.out.strip() == "chase.com.evil.test: collect (global default)"
    listed = json.loads(run_cli(*v, "sites", "list", "--json").out)
    assert [(r["host"], r["mode"]) for r in listed["rules"]] == [("chase.com", "collect")]
    assert (listed["global_default"], listed["paused"]) == ("collect", False)
    cleared = run_cli(*v, "sites", "clear", "chase.com")
    assert "rule removed" in cleared.out and "sensitive default: bank" in cleared.out


def test_sites_default_and_pause(tmp_path: Path) -> None:
    v = _vault_arg(tmp_path / "v.sqlite")
    assert run_cli(*v, "sites", "default", "suggest").out.strip() == "global default: suggest"
    assert "suggest (global default)" in run_cli(*v, "sites", "get", "example.org").out
    assert run_cli(*v, "sites", "pause", "on").code == 0
    assert "off (paused)" in run_cli(*v, "sites", "get", "example.org").out
    run_cli(*v, "sites", "pause", "off")
    assert "suggest (global default)" in run_cli(*v, "sites", "get", "example.org").out


def test_sites_bad_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    v = _vault_arg(tmp_path / "v.sqlite")
    for args in (("get", "javascript:alert(1)"), ("get", "exa mple.com"), ("set", "file:///etc", "off")):
        result = run_cli(*v, "sites", *args)
        assert result.code == 2
        assert result.err.startswith("vodou: error:") and result.err.count("\n") == 1
    assert run_cli(*v, "sites", "set", "example.com", "sometimes").code == 2  # argparse choices


def test_forget_dry_run_changes_nothing_and_matches_the_real_run(tmp_path: Path) -> None:
    path = tmp_path / "v.sqlite"
    v = _vault_arg(path)
    for i, url in enumerate(["https://example.com/a", "https://docs.example.com/b", "https://example.org/c"]):
        assert run_cli(*v, "mem", "add", f"fact {i}", "--url", url).code == 0
    with Vault.open(path) as vault:
        save_document(vault, "kept article", Origin(kind="library", url="https://example.com/doc", title="D"))
        vault.checkpoint()
    before = file_hashes(path)
    dry = run_cli(*v, "mem", "forget", "--host", "example.com", "--dry-run", "--json")
    assert dry.code == 0, dry.err
    assert file_hashes(path) == before
    dry_data = json.loads(dry.out)
    assert (dry_data["facts"], dry_data["documents"], dry_data["dry_run"]) == (2, 1, True)
    real = json.loads(run_cli(*v, "mem", "forget", "--host", "example.com", "--json").out)
    assert (real["facts"], real["documents"]) == (dry_data["facts"], dry_data["documents"])
    assert (real["facts_hidden"], real["documents_kept"]) == (2, 1) and real["op"].startswith("op-")
    listed = json.loads(run_cli(*v, "mem", "list", "--json").out)
    assert [f["text"] for f in listed] == ["fact 2"]
    undone = run_cli(*v, "mem", "forget", "--undo", real["op"])
    assert undone.code == 0 and "2 memories" in undone.out
    assert len(json.loads(run_cli(*v, "mem", "list", "--json").out)) == 3
    again = run_cli(*v, "mem", "forget", "--undo", real["op"])
    assert again.code == 2 and "already undone" in again.err


def test_forget_one_memory_by_id_and_undo(tmp_path: Path) -> None:
    v = _vault_arg(tmp_path / "v.sqlite")
    added = json.loads(run_cli(*v, "mem", "add", "a single fact", "--json").out)
    run_cli(*v, "mem", "add", "another fact")
    done = run_cli(*v, "mem", "forget", "--id", str(added["id"]))
    assert done.code == 0 and f"forgot memory #{added['id']}" in done.out
    op = done.out.split("vodou undo ")[1].strip()
    assert [f["text"] for f in json.loads(run_cli(*v, "mem", "list", "--json").out)] == ["another fact"]
    assert run_cli(*v, "mem", "forget", "--id", str(added["id"])).code == 2  # already forgotten
    assert run_cli(*v, "mem", "forget", "--id", str(added["id"]), "--dry-run").code == 2
    undone = run_cli(*v, "mem", "forget", "--undo", op)
    assert undone.code == 0
    assert undone.out.strip() == f"undid “Forget memory #{added['id']}” (just now): 1 memory visible again"
    assert len(json.loads(run_cli(*v, "mem", "list", "--json").out)) == 2


def test_erase_needs_yes_and_then_leaves_no_bytes(tmp_path: Path) -> None:
    path = tmp_path / "v.sqlite"
    v = _vault_arg(path)
    added = json.loads(run_cli(*v, "mem", "add", "CLICANARY-55e1 private", "--url", "https://a.example/",
                               "--json").out)
    run_cli(*v, "mem", "add", "CLIKEEP-93f0", "--url", "https://b.example/")
    refused = run_cli(*v, "mem", "erase", "--id", str(added["id"]))
    assert refused.code == 2 and "--yes" in refused.err
    assert total_hits(path, "CLICANARY-55e1") > 0
    done = run_cli(*v, "mem", "erase", "--id", str(added["id"]), "--yes", "--json")
    assert done.code == 0 and json.loads(done.out)["facts_erased"] == 1
    assert total_hits(path, "CLICANARY-55e1") == 0
    assert total_hits(path, "CLIKEEP-93f0") > 0
    by_host = run_cli(*v, "mem", "erase", "--host", "b.example", "--yes")
    assert by_host.code == 0 and "erased 1" in by_host.out
    assert total_hits(path, "CLIKEEP-93f0") == 0
    missing = run_cli(*v, "mem", "erase", "--id", "999", "--yes")
    assert missing.code == 2
