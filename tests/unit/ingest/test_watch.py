"""Watched sessions: a Claude Code log appended while `vodou capture watch` runs is captured once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.support import run_cli
from vodou_desktop.ingest.watch import SessionWatcher, project_for, prompt_text
from vodou_desktop.vault import Vault

ROOT = Path(__file__).resolve().parents[3]


def line(text: str, cwd: Path, uid: str, kind: str = "user") -> str:
    obj = {"type": kind, "uuid": uid, "cwd": str(cwd), "sessionId": "s1", "timestamp": "2026-07-12T10:00:00.000Z",
           "message": {"role": "user" if kind == "user" else "assistant", "content": text}}
    return json.dumps(obj) + "\n"


def wait_for(predicate, timeout: float = 20.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def texts(vault_path: Path, facts_of) -> list[tuple[str, str | None]]:
    with Vault.open(vault_path) as v:
        return sorted((f.text, f.project) for f in facts_of(v))


def test_prompt_text_and_project_mapping(tmp_path):
    assert prompt_text({"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "content": "x"}, {"type": "text", "text": "We use uv."}]}}) == "We use uv."
    assert prompt_text({"type": "assistant", "message": {"role": "assistant", "content": "hi"}}) is None
    mapping = [("outer", str(tmp_path)), ("inner", str(tmp_path / "a")), ("none", None)]
    assert project_for(str(tmp_path / "a" / "b"), mapping) == "inner"
    assert project_for(str(tmp_path / "ab"), mapping) == "outer"
    assert project_for("/elsewhere", mapping) is None


def test_session_appended_while_watch_runs_is_captured_once(tmp_path, vault_path, facts_of):
    repo = tmp_path / "atlas-repo"
    (repo / "src").mkdir(parents=True)
    claude = tmp_path / "claude" / "projects"
    session_dir = claude / "-tmp-atlas-repo"
    session_dir.mkdir(parents=True)
    inbox = tmp_path / "inbox"
    assert run_cli("--vault", str(vault_path), "projects", "add", "atlas", str(repo)).code == 0
    log = session_dir / "s1.jsonl"
    log.write_text(line("We decided to deploy Atlas from GitHub Actions.", repo, "u1"))

    env = {**os.environ, "VODOU_EMBEDDER": "none", "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "vodou_desktop", "--vault", str(vault_path), "capture", "watch",
           "--claude-dir", str(claude), "--inbox", str(inbox), "--flush-after", "0.3"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert wait_for(lambda: len(texts(vault_path, facts_of)) == 1), "existing session not captured"
        with log.open("a") as fh:  # a complete line, an assistant line and a partial line
            fh.write(line("Our Atlas staging database is called atlas-stg.", repo / "src", "u2"))
            fh.write(line("I prefer tabs in every file I write.", repo, "a1", kind="assistant"))
            fh.write(line("We use Terraform for the Atlas infrastructure.", repo, "u3")[:40])
            fh.flush()
        assert wait_for(lambda: len(texts(vault_path, facts_of)) == 2)
        time.sleep(0.8)
        assert len(texts(vault_path, facts_of)) == 2  # the partial line waits for its newline
        with log.open("a") as fh:
            fh.write(line("We use Terraform for the Atlas infrastructure.", repo, "u3")[40:])
            for i in range(20):  # a burst of events
                fh.write(line("ok thanks", repo, f"b{i}"))
                fh.flush()
        (inbox / "note.md").write_text("My sister lives in Lisbon.\n")
        assert wait_for(lambda: len(texts(vault_path, facts_of)) == 4)
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "captured 23 prompts and 1 inbox file;" in out  # words.plural: "1 inbox file"
    assert texts(vault_path, facts_of) == [
        ("My sister lives in Lisbon.", None),
        ("Our Atlas staging database is called atlas-stg.", "atlas"),
        ("We decided to deploy Atlas from GitHub Actions.", "atlas"),
        ("We use Terraform for the Atlas infrastructure.", "atlas"),
    ]

    # restart: offsets and inbox hashes are persisted, nothing is ingested twice
    with Vault.open(vault_path) as v:
        stats = SessionWatcher(v, claude, inbox, flush_after=0.1).start().stop()
    assert stats.entries == 0 and stats.inbox_files == 0
    assert len(texts(vault_path, facts_of)) == 4


def test_rotated_and_deleted_files(tmp_path, vault, facts_of):
    claude, inbox = tmp_path / "claude", tmp_path / "inbox"
    (claude / "p").mkdir(parents=True)
    log = claude / "p" / "s.jsonl"
    log.write_text(line("We use Grafana for every dashboard.", tmp_path, "r1")
                   + line("We use Sentry for error tracking.", tmp_path, "r2"))
    watcher = SessionWatcher(vault, claude, inbox, flush_after=0.1)
    watcher._mark_all()
    watcher.process_dirty()
    log.unlink()  # rotation: a new, shorter file under the same name
    log.write_text(line("We use Loki for all logs.", tmp_path, "r3"))
    watcher._mark(log)
    watcher.process_dirty()
    watcher.flush()
    assert sorted(f.text for f in facts_of(vault)) == [
        "We use Grafana for every dashboard.", "We use Loki for all logs.", "We use Sentry for error tracking."]
    log.unlink()
    watcher._mark(log)
    watcher.process_dirty()  # a deleted file drops its offset and raises nothing
    assert watcher.stats.entries == 3
