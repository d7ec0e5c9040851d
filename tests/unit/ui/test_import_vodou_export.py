"""File ▸ Import… takes a Vodou export through the same checked import as `vodou import vodou`: a
good file imports once (twice is once), a bad one is refused with its line and field, in words, and
nothing is written."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import run_cli
from tests.unit.ui.test_window import open_browser
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.vault import ALL_PROJECTS, FactFilter, Vault
from vodou_desktop.vault import query as q


def _count(services) -> int:  # type: ignore[no-untyped-def]
    return int(services.runtime.vault.read(lambda c: q.count_facts(c, FactFilter(project=ALL_PROJECTS))))


def _finish(qtbot, browser, path: Path) -> str:  # type: ignore[no-untyped-def]
    browser.importer.start(path)
    qtbot.waitUntil(lambda: browser.importer.last_summary != "", timeout=20000)
    return str(browser.importer.last_summary)


def test_a_vodou_export_imports_once_and_a_bad_one_is_refused_in_words(qtbot, services, tmp_path):
    source = tmp_path / "elsewhere.sqlite"
    with Vault.open(source) as vault:
        for n in range(3):
            remember(vault, f"the heron came back on day {n}", Origin(kind="cli"))
    dump = tmp_path / "memories.jsonl"
    assert run_cli("--vault", str(source), "export", str(dump)).code == 0
    browser = open_browser(qtbot, services)
    before = _count(services)
    said = _finish(qtbot, browser, dump)
    assert said.startswith("Import finished: imported 3 memories") and _count(services) == before + 3
    said = _finish(qtbot, browser, dump)
    assert "already in this vault, not added again: 3 memories" in said and _count(services) == before + 3
    bad = tmp_path / "bad.jsonl"
    lines = dump.read_text().splitlines()
    record = json.loads(lines[-1])
    record.pop("source")
    bad.write_text("\n".join([lines[0], json.dumps({"type": "setting", "key": "sync_folder", "value": "/x"}),
                              json.dumps(record)]) + "\n")
    said = _finish(qtbot, browser, bad)
    assert said.startswith("Not imported: bad.jsonl, line 3: memory record: missing field source")
    assert _count(services) == before + 3
