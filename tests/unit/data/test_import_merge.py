"""DATA-2, DATA-7: `vodou import vodou` writes only what export writes, only through the product's own
statements, and adds what the vault already holds once: importing a file twice, or again after an
import was killed, leaves the vault as one import does; revisions, forgets and pins that meet a
memory already here merge by the rules sync uses."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import apsw
import pytest

from tests.support import file_hashes, run_cli
from tests.unit.data.test_export import _seed
from vodou_desktop.data.export import import_records, read_jsonl
from vodou_desktop.data.export_schema import EXPORTED_SETTINGS, is_exported_setting
from vodou_desktop.data.sample_vault import sample_records
from vodou_desktop.governance.forget import Forgetting
from vodou_desktop.ingest.remember import Origin, correct, pin, remember
from vodou_desktop.vault import ALL_PROJECTS, FactFilter, Vault, retraction
from vodou_desktop.vault import query as q
from vodou_desktop.vault import sync_store as st
from vodou_desktop.vault import transfer as t
from vodou_desktop.vault.facts import set_page_link
from vodou_desktop.vault.settings_store import set_setting


def _export(vault: Path, dest: Path, *extra: str) -> Path:
    done = run_cli("--vault", str(vault), "export", *extra, str(dest))
    assert done.code == 0, done.err
    return dest


def _import(vault: Path, dump: Path) -> dict[str, object]:
    done = run_cli("--vault", str(vault), "import", "vodou", str(dump), "--json")
    assert done.code == 0, done.err
    return dict(json.loads(done.out))


def _memories(path: Path) -> list[tuple[str | None, str, str | None, bool, bool]]:
    """Every memory as (global id, text, project, forgotten, pinned), in a stable order."""
    with Vault.open(path) as vault:
        facts = vault.read(lambda c: q.list_facts(c, FactFilter(project=ALL_PROJECTS, include_forgotten=True,
                                                                include_superseded=True), limit=10**6))
        ids = dict(vault.read(lambda c: c.execute("SELECT id, sync_id FROM chunks").fetchall()))
    return sorted((ids[f.id], f.text, f.project, f.forgotten, f.tier == "pinned") for f in facts)


def test_the_sql_in_a_key_file_of_the_issue_changes_no_memory(tmp_path: Path) -> None:
    vault = tmp_path / "v.sqlite"
    with Vault.open(vault) as v:
        remember(v, "the heron nests by the mill", Origin(kind="cli"))
    bad = tmp_path / "f.jsonl"
    bad.write_text('{"type":"header","format":"vodou-export","version":2}\n'
                   '{"type":"setting","key, value) SELECT \'x\', ?; UPDATE chunks SET text = \'PWNED \' || text; --":'
                   '"v"}\n')
    before = file_hashes(vault)
    done = run_cli("--vault", str(vault), "import", "vodou", str(bad))
    assert done.code == 2 and done.err == ("vodou: error: f.jsonl, line 2: setting record: missing field key; nothing "
                                           "was imported\n")
    assert file_hashes(vault) == before
    assert [m[1] for m in _memories(vault)] == ["the heron nests by the mill"]


def test_a_file_of_sync_settings_turns_nothing_on(tmp_path: Path) -> None:
    """The issue's file: sync identity, folder, key and capture. Skipped, counted, named; sync stays off."""
    vault, stranger = tmp_path / "v.sqlite", tmp_path / "stranger"
    stranger.mkdir()
    with Vault.open(vault) as v:
        remember(v, "the heron nests by the mill", Origin(kind="cli"))
    planted = {"sync_device_id": "evil", "sync_folder": str(stranger), "sync_key": "c3RyYW5nZXI=", "sync_capture": "1"}
    dump = tmp_path / "sync.jsonl"
    dump.write_text("\n".join(json.dumps(r) for r in [{"type": "header", "format": "vodou-export", "version": 2},
                                                      *({"type": "setting", "key": k, "value": v}
                                                        for k, v in planted.items())]) + "\n")
    done = run_cli("--vault", str(vault), "import", "vodou", str(dump))
    assert done.code == 0, done.err
    assert ("4 settings that only this computer may set were skipped (sync_device_id, sync_folder, sync_key, "
            "sync_capture)") in done.out
    with Vault.open(vault) as v:
        settings = dict(v.read(lambda c: c.execute("SELECT key, value FROM settings").fetchall()))
    assert not [k for k in settings if k.startswith("sync_") and k != "sync_capture"]
    assert settings.get("sync_capture", "0") == "0"
    status = run_cli("--vault", str(vault), "sync", "status")
    assert "this vault does not sync" in status.out
    assert run_cli("--vault", str(vault), "sync", "now").code == 2
    assert list(stranger.iterdir()) == []


def test_export_writes_and_import_reads_only_the_allowed_settings(tmp_path: Path) -> None:
    """Every setting the product writes, set; the export holds exactly the allowlisted ones, and a file
    naming all of them imports only those."""
    vault, folder = tmp_path / "v.sqlite", tmp_path / "folder"
    folder.mkdir()
    with Vault.open(vault) as v:
        remember(v, "the heron nests by the mill", Origin(kind="link", url="https://herons.example.org/a"))
        v.write(lambda c, ch: [set_setting(c, ch, k, val) for k, val in (
            ("site_modes.global_default", "suggest"), ("site_modes.paused", "1"), ("vectors_model", "m"),
            ("mcp_default_project", "atlas"), ("mcp_default_project:claude-code", "thesis"))])
        v.write(lambda c, ch: retraction.keyed_host(c, ch, "herons.example.org"))  # what an erase of a host makes
    assert run_cli("--vault", str(vault), "sync", "setup", str(folder), "--key-file", str(tmp_path / "k")).code == 0
    with Vault.open(vault) as v:
        every = dict(v.read(lambda c: c.execute("SELECT key, value FROM settings").fetchall()))
    assert {"operations_host_key", "sync_key", "sync_device_id", "site_modes.paused", "vectors_model"} <= set(every)
    dump = _export(vault, tmp_path / "dump.jsonl")
    exported = {r["key"] for r in map(json.loads, dump.read_text().splitlines()) if r["type"] == "setting"}
    assert exported == {k for k in every if is_exported_setting(k)} == {
        "site_modes.global_default", "mcp_default_project", "mcp_default_project:claude-code"}
    assert set(EXPORTED_SETTINGS) <= exported
    everything = tmp_path / "everything.jsonl"
    everything.write_text("\n".join([dump.read_text().splitlines()[0]] + [
        json.dumps({"type": "setting", "key": k, "value": val}) for k, val in sorted(every.items())]) + "\n")
    fresh = tmp_path / "fresh.sqlite"
    report = _import(fresh, everything)
    with Vault.open(fresh) as v:
        now = dict(v.read(lambda c: c.execute("SELECT key, value FROM settings").fetchall()))
    assert {k for k in now if k in every} == exported
    assert sorted(report["settings_skipped"]) == sorted(k for k in every if k not in exported)  # type: ignore[arg-type]


def test_the_vaults_own_settings_and_site_rules_win_over_a_file(tmp_path: Path) -> None:
    """Even into an empty vault: a file never reopens a site the person closed, nor the global default."""
    original, target = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    with Vault.open(original) as v:
        remember(v, "a memory", Origin(kind="cli"))
    assert run_cli("--vault", str(original), "sites", "set", "bank.example.com", "collect").code == 0
    dump = _export(original, tmp_path / "dump.jsonl")
    assert run_cli("--vault", str(target), "sites", "set", "bank.example.com", "off").code == 0
    _import(target, dump)
    listed = run_cli("--vault", str(target), "sites", "list", "--json")
    rules = {r["host"]: r["mode"] for r in json.loads(listed.out)["rules"]}
    assert rules["bank.example.com"] == "off"


def test_importing_twice_adds_each_memory_once(tmp_path: Path) -> None:
    """The issue's 12,012 → 24,024, at a size a unit test can afford: a rich vault and 300 generated
    memories (without global ids: matched by text, project and source), imported into a vault that
    holds memories of its own, twice. The second import adds nothing and says so."""
    rich, target = tmp_path / "rich.sqlite", tmp_path / "target.sqlite"
    _seed(rich)
    dump = _export(rich, tmp_path / "rich.jsonl", "--include-forgotten")
    generated = tmp_path / "generated.jsonl"
    generated.write_text("\n".join(json.dumps(r) for r in sample_records(300)) + "\n")
    with Vault.open(target) as v:
        remember(v, "a memory of the target's own", Origin(kind="cli"))
    first = [_import(target, dump), _import(target, generated)]
    once = _memories(target)
    second = [_import(target, dump), _import(target, generated)]
    assert _memories(target) == once
    assert len(once) == 1 + first[0]["memory"] + 300  # type: ignore[operator]
    assert [r["memory"] for r in second] == [0, 0]
    assert [r["already_here"]["memory"] for r in second] == [first[0]["memory"], 300]  # type: ignore[index]
    said = run_cli("--vault", str(target), "import", "vodou", str(generated))
    assert "already in this vault, not added again: 300 memories" in said.out
    third = _export(target, tmp_path / "third.jsonl", "--include-forgotten")
    _import(target, dump)
    assert _export(target, tmp_path / "fourth.jsonl", "--include-forgotten").read_text() == third.read_text()


@pytest.mark.skipif(shutil.which("strace") is None, reason="strace is not installed (.ci/system-deps.sh)")
def test_an_import_killed_half_way_then_run_again_adds_each_memory_once(tmp_path: Path) -> None:
    """``vodou import vodou`` killed (SIGKILL, by strace) at its Kth write to the vault's files, for K
    through the import's writes: the vault holds the import whole or not at all, and the import run
    again (twice) leaves every memory once."""
    target, dump = tmp_path / "target.sqlite", tmp_path / "generated.jsonl"
    dump.write_text("\n".join(json.dumps(r) for r in sample_records(400)) + "\n")
    with Vault.open(target) as v:
        remember(v, "a memory of the target's own", Origin(kind="cli"))
    env = {**os.environ, "VODOU_EMBEDDER": "none", "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
    cmd = [sys.executable, "-m", "vodou_desktop", "--vault", str(target), "import", "vodou", str(dump)]
    killed = 0
    for when in (1, 2, 5, 20, 60, 200):
        work = tmp_path / f"kill{when}.sqlite"
        shutil.copyfile(target, work)
        run = subprocess.run(["strace", "-f", "-qq", "-o", os.devnull, "-e", "trace=pwrite64,write",
                              "-e", f"inject=pwrite64:signal=KILL:when={when}",
                              *[str(work) if part == str(target) else part for part in cmd]],
                             env=env, capture_output=True, text=True, timeout=300)
        if run.returncode == 0:
            break  # the import ended before its Kth write
        killed += 1
        count = len(_memories(work))
        assert count in (1, 401), (when, count)  # whole or nothing, never a part
        for _ in range(2):
            again = run_cli("--vault", str(work), "import", "vodou", str(dump))
            assert again.code == 0, again.err
        assert len(_memories(work)) == 401
    assert killed >= 3


def test_revisions_forgets_and_pins_merge_by_the_rules_sync_uses(tmp_path: Path) -> None:
    """A vault imports another's export, both go on, then it imports the newer export: what changed
    there arrives (a revision, a forget, a pin, a manual page link); what this vault undid or set
    itself stays (an undone forget is not forgotten again, its own manual link is kept, its own pin)."""
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    with Vault.open(a) as va:
        release = remember(va, "the release ships in May", Origin(kind="cli"))
        heron = remember(va, "the heron nests by the mill", Origin(kind="cli"))
        otter = remember(va, "the otter swims at dawn", Origin(kind="cli"))
        kept = remember(va, "the kestrel hovers over the field", Origin(kind="cli"))
    with Vault.open(b) as vb:
        remember(vb, "a memory of b's own", Origin(kind="cli"))
    report = _import(b, _export(a, tmp_path / "one.jsonl", "--include-forgotten"))
    ids_in_b = {int(k): v for k, v in report["memory_ids"].items()}  # type: ignore[union-attr]
    with Vault.open(a) as va:
        correct(va, release, "the release ships in June")
        pin(va, heron)
        op = Forgetting(va).forget_fact(otter)["op"]
        va.write(lambda c, ch: set_page_link(c, ch, kept, "https://birds.example.org/kestrel", "manual"))
    with Vault.open(b) as vb:
        b_op = Forgetting(vb).forget_fact(ids_in_b[kept])["op"]
        Forgetting(vb).undo(b_op)
    second = _import(b, _export(a, tmp_path / "two.jsonl", "--include-forgotten"))
    assert second["memory"] == 1 and second["already_here"]["memory"] == 4  # type: ignore[index]
    with Vault.open(b) as vb:
        facts = {f.text: f for f in vb.read(lambda c: q.list_facts(c, FactFilter(
            project=ALL_PROJECTS, include_forgotten=True, include_superseded=True), limit=100))}
    # the memory keeps its id here too: its new revision is shown as it, the earlier one is history
    assert facts["the release ships in June"].id == ids_in_b[release]
    assert facts["the release ships in June"].predecessor_id == facts["the release ships in May"].id
    assert facts["the release ships in May"].superseded_by == facts["the release ships in June"].id
    assert facts["the heron nests by the mill"].tier == "pinned"
    assert facts["the otter swims at dawn"].forgotten and facts["the otter swims at dawn"].invalidated_by == op
    assert facts["the kestrel hovers over the field"].page_url == "https://birds.example.org/kestrel"
    assert not facts["the kestrel hovers over the field"].forgotten
    visible = run_cli("--vault", str(b), "mem", "list").out
    assert "the release ships in June" in visible and "the release ships in May" not in visible
    undo = run_cli("--vault", str(b), "mem", "forget", "--undo", op)  # the imported forget can be undone here
    assert undo.code == 0, undo.err
    assert "the otter swims at dawn" in run_cli("--vault", str(b), "mem", "list").out
    assert _import(b, _export(a, tmp_path / "three.jsonl", "--include-forgotten"))["memory"] == 0
    assert "the otter swims at dawn" in run_cli("--vault", str(b), "mem", "list").out  # undone here: stays


def test_a_memory_erased_here_is_not_brought_back_by_an_old_export(tmp_path: Path) -> None:
    """Erase beats everything, an import too: a memory (and its revisions) erased on this computer or
    one it syncs with (its tombstone) is left out, and the report says so."""
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    with Vault.open(a) as va:
        first = remember(va, "the old door code is 4711", Origin(kind="cli"))
        correct(va, first, "the door code is 4712")
        remember(va, "the heron nests by the mill", Origin(kind="cli"))
    dump = _export(a, tmp_path / "dump.jsonl", "--include-forgotten")
    erased = next(json.loads(line)["sync_id"] for line in dump.read_text().splitlines()
                  if '"the old door code is 4711"' in line)
    with Vault.open(b) as vb:
        remember(vb, "a memory of b's own", Origin(kind="cli"))
        vb.write(lambda c, ch: st.add_tombstone(c, "fact", erased, "0000000000000-0000-x"))
    report = _import(b, dump)
    assert report["erased_here"] == 2 and report["memory"] == 1
    assert not any("door code" in text for _, text, *_ in _memories(b))


def _statements(vault: Vault, dump: Path) -> set[str]:
    """Every statement text an import of ``dump`` runs (runs of ``?`` folded: a batch's size is not SQL)."""
    seen: set[str] = set()

    def trace(_cursor: apsw.Cursor, sql: str, _bindings: object) -> bool:
        seen.add(re.sub(r"\?(\s*,\s*\?)+", "?…", " ".join(sql.split())))
        return True

    vault.write(lambda c, ch: setattr(c, "exec_trace", trace))
    try:
        import_records(vault, read_jsonl(dump))
    finally:
        vault.write(lambda c, ch: setattr(c, "exec_trace", None))
    return seen


def test_every_statement_an_import_runs_is_the_products_own(tmp_path: Path) -> None:
    """SQL is built only from the product's column lists: a file whose keys and values are SQL (valid
    otherwise, so it is imported) makes the import run no statement a plain export does not."""
    rich = tmp_path / "rich.sqlite"
    _seed(rich)
    plain = _export(rich, tmp_path / "plain.jsonl", "--include-forgotten")
    sql = "'); DROP TABLE chunks; --"
    hostile_lines = []
    for line in plain.read_text().splitlines():
        record = json.loads(line)
        record[f"text) VALUES (1); DELETE FROM chunks; --{record['type']}"] = sql
        if record["type"] == "memory":
            record["text"] = record["text"] + sql
            record["scope"] = sql
        hostile_lines.append(json.dumps(record))
    hostile = tmp_path / "hostile.jsonl"
    hostile.write_text("\n".join(hostile_lines) + "\n")
    with Vault.open(tmp_path / "one.sqlite") as one, Vault.open(tmp_path / "two.sqlite") as two:
        remember(one, "already here", Origin(kind="cli"))
        remember(two, "already here", Origin(kind="cli"))
        expected = _statements(one, plain)
        ran = _statements(two, hostile)
        texts = {f.text for f in two.read(lambda c: q.list_facts(c, FactFilter(project=ALL_PROJECTS), limit=100))}
    assert ran <= expected, sorted(ran - expected)
    assert all(";" not in s.rstrip(";") or s.startswith("CREATE") for s in ran)  # one statement per call
    assert "already here" in texts and any(t.endswith(sql) for t in texts)


def test_the_owner_tables_columns_are_exactly_the_products_lists(vault: Vault) -> None:
    """A column a migration adds to an owner table must be decided (exported, or said not to be): the
    import never learns a column from a file."""
    for table, columns in t.TABLE_COLUMNS.items():
        names = tuple(str(r[1]) for r in vault.read(lambda c, tb=table: c.execute(f"PRAGMA table_info({tb})")
                                                    .fetchall()))
        assert names == columns, table
