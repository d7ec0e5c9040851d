"""The export's written schema: the typed records of ``data/export_schema.py``, the JSON Schema in
``docs/export-schema.json`` and the page ``docs/export-format.md`` say the same thing, and what
``vodou export`` writes follows it."""

from __future__ import annotations

import json
from pathlib import Path

from jsonschema import Draft202012Validator

from tests.support import run_cli
from tests.unit.data.test_export import _seed
from vodou_desktop.data.export_schema import FORMAT, FORMAT_VERSION, RECORDS, fields_of, json_schemas

DOCS = Path(__file__).resolve().parents[3] / "docs"


def test_the_json_schema_in_the_docs_is_the_one_the_import_checks() -> None:
    written = json.loads((DOCS / "export-schema.json").read_text())
    assert (written["format"], written["version"]) == (FORMAT, FORMAT_VERSION)
    assert written["records"] == json_schemas(), "regenerate docs/export-schema.json from export_schema.json_schemas()"
    for schema in written["records"].values():
        Draft202012Validator.check_schema(schema)


def test_every_record_an_export_writes_follows_the_written_schema(tmp_path: Path) -> None:
    vault = tmp_path / "v.sqlite"
    _seed(vault)
    (tmp_path / "atlas").mkdir()
    for argv in (["projects", "add", "atlas", str(tmp_path / "atlas")], ["projects", "default", "set", "atlas"]):
        assert run_cli("--vault", str(vault), *argv).code == 0
    dump = tmp_path / "dump.jsonl"
    assert run_cli("--vault", str(vault), "export", "--include-forgotten", str(dump)).code == 0
    schemas = json.loads((DOCS / "export-schema.json").read_text())["records"]
    seen = set()
    for line in dump.read_text().splitlines():
        record = json.loads(line)
        kind = record.pop("type")
        seen.add(kind)
        assert set(record) <= set(fields_of(kind)), (kind, set(record) - set(fields_of(kind)))
        errors = list(Draft202012Validator(schemas[kind]).iter_errors(record))
        assert errors == [], (kind, [e.message for e in errors])
    assert seen == set(RECORDS)  # the seed holds a record of every type


def test_the_format_page_names_every_record_type_and_field() -> None:
    page = (DOCS / "export-format.md").read_text()
    for kind in RECORDS:
        row = next((line for line in page.splitlines() if line.startswith(f"| `{kind}` |")), None)
        assert row is not None, f"docs/export-format.md has no row for {kind}"
        missing = [f for f in fields_of(kind) if f"`{f}`" not in row]
        assert missing == [], (kind, missing)


def test_no_string_field_of_any_record_takes_a_lone_surrogate(tmp_path: Path) -> None:
    """JSON can spell half of a UTF-16 pair alone; no field anywhere may carry one to the vault."""
    import pytest

    from vodou_desktop.data.export_schema import check_records
    from vodou_desktop.errors import InvalidInput

    vault = tmp_path / "v.sqlite"
    _seed(vault)
    dump = tmp_path / "dump.jsonl"
    assert run_cli("--vault", str(vault), "export", "--include-forgotten", str(dump)).code == 0
    records = [json.loads(line) for line in dump.read_text().splitlines()]
    header, tried = records[0], 0
    for record in records[1:]:
        for name, value in record.items():
            targets = [(record, name)] if isinstance(value, str) and name != "type" else []
            if isinstance(value, dict):
                targets = [(value, k) for k, v in value.items() if isinstance(v, str)]
            for holder, key in targets:
                kept = holder[key]
                holder[key] = "a \ud83d alone"
                with pytest.raises(InvalidInput, match="lone surrogate"):
                    check_records([header, record])
                holder[key] = kept
                tried += 1
    assert tried > 50
