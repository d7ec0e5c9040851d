"""DATA-2 as properties, over vaults hypothesis builds through the product's own writers (memories of
any text, projects and kinds, corrections, pins, forgets, site rules, operator memory):

- import(export(v)) = v: an export imported into an empty vault exports again byte for byte;
- import twice = import once: the same file imported again (into that copy, or into a vault that
  holds memories of its own) changes nothing.
"""

from __future__ import annotations

import io
import itertools
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vodou_desktop.data.export import ExportScope, import_records, write_jsonl
from vodou_desktop.data.export_schema import check_records
from vodou_desktop.errors import KnownError
from vodou_desktop.governance.forget import Forgetting
from vodou_desktop.governance.opm import OperatorMemory
from vodou_desktop.governance.sitemodes import SiteModes
from vodou_desktop.ingest.remember import Origin, correct, pin, remember
from vodou_desktop.vault import Vault

EVERYTHING = ExportScope(include_forgotten=True)
_texts = st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=40).filter(
    lambda s: s.replace("\x00", "").strip() != "")
_ops = st.lists(st.one_of(
    st.tuples(st.just("remember"), _texts, st.sampled_from([None, "atlas", "thesis"]),
              st.sampled_from(["fact", "preference", "decision", "note"]),
              st.sampled_from([None, "https://herons.example.org/a", "https://docs.example.com/x?y=1"])),
    st.tuples(st.just("correct"), st.integers(0, 30), _texts),
    st.tuples(st.just("pin"), st.integers(0, 30)),
    st.tuples(st.just("forget"), st.integers(0, 30)),
    st.tuples(st.just("site"), st.sampled_from(["bank.example.com", "news.example.org"]),
              st.sampled_from(["off", "suggest", "collect"])),
    st.tuples(st.just("opm"), st.sampled_from(["preference", "pinned_context"]), _texts),
), min_size=1, max_size=14)


def _build(vault: Vault, ops: list[tuple[object, ...]]) -> None:
    ids: list[int] = []
    for op in ops:
        try:
            if op[0] == "remember":
                _, text, project, kind, url = op
                origin = Origin(kind="link", url=str(url)) if url else Origin(kind="cli")
                ids.append(remember(vault, str(text), origin, kind=str(kind), project=project))  # type: ignore[arg-type]
            elif op[0] == "correct" and ids:
                ids.append(correct(vault, ids[int(op[1]) % len(ids)], str(op[2])))  # type: ignore[call-overload]
            elif op[0] == "pin" and ids:
                pin(vault, ids[int(op[1]) % len(ids)])  # type: ignore[call-overload]
            elif op[0] == "forget" and ids:
                Forgetting(vault).forget_fact(ids[int(op[1]) % len(ids)])  # type: ignore[call-overload]
            elif op[0] == "site":
                SiteModes(vault).set_rule(str(op[1]), str(op[2]))
            elif op[0] == "opm":
                OperatorMemory(vault).add(str(op[1]), str(op[2]))
        except KnownError:
            continue  # what the product refuses (a memory already forgotten, a duplicate preference…)


def _export(vault: Vault) -> str:
    out = io.StringIO()
    write_jsonl(vault, EVERYTHING, out)
    return out.getvalue()


def _import(vault: Vault, text: str) -> dict[str, object]:
    import json

    return import_records(vault, check_records(json.loads(line) for line in text.split("\n") if line.strip())).as_json()


_numbers = itertools.count()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_ops)
def test_import_of_an_export_is_the_vault_and_a_second_import_changes_nothing(ops: list[tuple[object, ...]]) -> None:
    with tempfile.TemporaryDirectory(prefix=f"vodou-prop-{next(_numbers)}-") as tmp:
        folder = Path(tmp)
        with Vault.open(folder / "v.sqlite") as original:
            _build(original, ops)
            exported = _export(original)
        with Vault.open(folder / "copy.sqlite") as copy:
            first = _import(copy, exported)
            assert first["ids_kept"] is True
            assert _export(copy) == exported  # import(export(v)) = v
            again = _import(copy, exported)
            assert again["memory"] == 0 and again["document"] == 0
            assert _export(copy) == exported  # import twice = import once
        with Vault.open(folder / "other.sqlite") as other:
            remember(other, "a memory of its own", Origin(kind="cli"))
            _import(other, exported)
            once = _export(other)
            second = _import(other, exported)
            assert second["memory"] == 0
            assert _export(other) == once
