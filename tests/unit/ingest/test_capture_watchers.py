"""The app's capture watchers (MCP-2), Qt-free: states, nothing before the first yes, pause skips what
was written meanwhile, folders that appear later, and the published state file."""

from __future__ import annotations

import json
import time
from pathlib import Path

from vodou_desktop import config
from vodou_desktop.ingest.capture_watchers import (
    MISSING,
    NOT_ASKED,
    OFF,
    PAUSED,
    WATCHING,
    CaptureWatchers,
    needs_first_run_question,
    with_capture,
)
from vodou_desktop.vault import Vault

from .conftest import all_facts


def session_line(text: str, uid: str) -> str:
    return json.dumps({"type": "user", "uuid": uid, "cwd": "/nowhere", "timestamp": "2026-07-12T10:00:00Z",
                       "message": {"role": "user", "content": text}}) + "\n"


def wait_for(check, timeout: float = 20.0) -> bool:  # type: ignore[no-untyped-def]
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if check():
            return True
        time.sleep(0.05)
    return False


def states(watchers: CaptureWatchers) -> dict[str, str]:
    return {s.name: s.state for s in watchers.states()}


def make(vault: Vault, tmp_path: Path, **extra: object) -> CaptureWatchers:
    settings = config.Settings(extra={"claude_projects_dir": str(tmp_path / "claude"),
                                      "inbox_dir": str(tmp_path / "inbox"), **extra})
    return CaptureWatchers(vault, settings, flush_after=0.1, state_file=tmp_path / "run" / "capture.json")


def test_nothing_is_watched_before_the_person_answers(vault: Vault, tmp_path: Path) -> None:
    (tmp_path / "claude" / "p").mkdir(parents=True)
    (tmp_path / "claude" / "p" / "s.jsonl").write_text(session_line("We use Vim for every edit.", "a"))
    watchers = make(vault, tmp_path, capture_inbox=False)
    assert needs_first_run_question(watchers.settings)
    watchers.start()
    assert states(watchers) == {"claude_code": NOT_ASKED, "inbox": OFF}
    assert json.loads((tmp_path / "run" / "capture.json").read_text())["claude_code"]["state"] == NOT_ASKED
    watchers.reconfigure(with_capture(watchers.settings, claude_code=True))  # the person says yes
    assert states(watchers)["claude_code"] == WATCHING
    log = tmp_path / "claude" / "p" / "s.jsonl"
    with log.open("a") as fh:
        fh.write(session_line("We use Helix for new projects.", "b"))
    assert wait_for(lambda: [f.text for f in all_facts(vault)] == ["We use Helix for new projects."])
    watchers.stop()
    assert not (tmp_path / "run" / "capture.json").exists()
    assert [f.text for f in all_facts(vault)] == ["We use Helix for new projects."]  # not the line before the yes


def test_pause_skips_what_was_written_meanwhile(vault: Vault, tmp_path: Path) -> None:
    log = tmp_path / "claude" / "p" / "s.jsonl"
    log.parent.mkdir(parents=True)
    log.write_text("")
    watchers = make(vault, tmp_path, capture_claude_code=True)
    watchers.start()
    assert states(watchers) == {"claude_code": WATCHING, "inbox": WATCHING}
    watchers.set_paused(True)
    assert states(watchers) == {"claude_code": PAUSED, "inbox": PAUSED}
    with log.open("a") as fh:
        fh.write(session_line("We use Emacs while paused.", "p1"))
    (tmp_path / "inbox" / "dropped.md").write_text("My cousin lives in Porto.\n")
    watchers.set_paused(False)
    with log.open("a") as fh:
        fh.write(session_line("We use Neovim after the pause.", "p2"))
    assert wait_for(lambda: len(all_facts(vault)) == 2)
    watchers.stop()
    texts = sorted(f.text for f in all_facts(vault))
    assert texts == ["My cousin lives in Porto.", "We use Neovim after the pause."]  # inbox drops are deliberate
    assert all(f.tier == "capture" for f in all_facts(vault))


def test_a_missing_folder_is_said_and_picked_up_when_it_appears(vault: Vault, tmp_path: Path) -> None:
    watchers = make(vault, tmp_path, capture_claude_code=True, capture_inbox=False)
    watchers.start()
    assert states(watchers) == {"claude_code": MISSING, "inbox": OFF}
    (tmp_path / "claude").mkdir()
    watchers.refresh()
    assert states(watchers)["claude_code"] == WATCHING
    watchers.reconfigure(with_capture(watchers.settings, claude_code=False))
    assert states(watchers)["claude_code"] == OFF
    watchers.stop()
