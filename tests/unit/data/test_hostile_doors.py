"""DATA-7, issue "every door that lets data in treats it as data": the hostile-input corpus of
``tests/hostile.py`` against every door that takes it (``import vodou``, ``import chatgpt``,
``import claude``, ``restore``, ``key restore --check``, opening a vault from elsewhere), from the
CLI, with the same invariants each time:

- no traceback, ever; a refusal is one line on stderr (exit 2) naming what is wrong, and the vault's
  files are byte for byte as they were;
- whatever the input, the vault's schema is exactly what the migrations make, no memory is rewritten
  (the canary keeps its words, nothing says PWNED), no setting only this computer may set is taken
  from the input;
- text is stored as the very text it was (where the door stores text as given).
"""

from __future__ import annotations

from pathlib import Path

import apsw
import pytest

from tests.hostile import CANARY, CASES, PRIVATE_SETTINGS, REFUSED, SKIPPED, STORED, Case, memory_texts, pairs, run_door
from tests.support import file_hashes
from vodou_desktop.vault import schema_objects
from vodou_desktop.vault.facts import clean_text
from vodou_desktop.vault.migrations import applied_migrations

AS_GIVEN = ("import vodou", "restore", "open")  # doors that store a text exactly (the others distil it)


def _settings(path: Path) -> dict[str, str]:
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return dict(conn.execute("SELECT key, value FROM settings").fetchall())
    finally:
        conn.close()


def _differences(path: Path) -> list[schema_objects.Difference]:
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return schema_objects.differences(conn, applied_migrations(conn))
    finally:
        conn.close()


@pytest.mark.parametrize(("door", "case"), pairs(CASES), ids=[f"{d}-{c.id}" for d, c in pairs(CASES)])
def test_every_door_treats_hostile_input_as_data(door: str, case: Case, tmp_path: Path) -> None:
    outcome = run_door(door, tmp_path, case)
    result = outcome.result
    said = result.out + result.err
    assert "Traceback" not in said and result.code in (0, 1, 2), said
    if case.expect == REFUSED:
        assert result.code == 2 and result.err.count("\n") == 1, said
        assert file_hashes(outcome.vault) == outcome.hashes_before, "a refused input changed the vault"
    else:
        assert result.code in (0, 1) and (result.code == 0 or case.expect == SKIPPED), said
    for word in case.words_at(door):
        assert word in said, said
    if case.expect == REFUSED and door == "open":
        return  # the hostile file itself, left as it was (checked above)
    assert _differences(outcome.vault) == []
    texts = memory_texts(outcome.vault)
    assert CANARY in texts and not any(t.startswith("PWNED") for t in texts)
    settings = _settings(outcome.vault)
    assert not {k for k in settings if k.startswith("sync_") or k in PRIVATE_SETTINGS} - {"sync_capture"}
    assert settings.get("sync_capture", "0") == "0" and settings.get("vectors_model") != "planted"
    if case.expect == STORED and case.kind == "text" and door in AS_GIVEN:
        assert clean_text(case.payload) in texts


def test_the_corpus_reaches_every_door_with_every_kind_it_takes() -> None:
    """A door added to ``DOORS`` or a kind of case nobody runs fails here, not silently."""
    from tests.hostile import DOORS

    reached = {(door, case.kind) for door, case in pairs(CASES)}
    assert reached == {(door, kind) for door, (_, kinds) in DOORS.items() for kind in kinds}
    assert {c.expect for c in CASES} == {REFUSED, STORED, SKIPPED}
