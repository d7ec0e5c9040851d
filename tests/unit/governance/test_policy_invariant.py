"""GOV-4 / GOV-5: one authority, every enforcement point, every reader (seed 000's invariant).

Each page operation is tested on its own under off / suggest / collect. "Without touching memory"
is proved with SQLite's own statement trace: while a read runs on an ``off`` page, no statement
names ``chunks`` or ``documents``.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from vodou_desktop.errors import NotFound, PolicyRefused
from vodou_desktop.governance import policy
from vodou_desktop.governance.page_memory import PageMemory
from vodou_desktop.governance.sitemodes import SiteModes
from vodou_desktop.ingest.remember import Origin, save_document
from vodou_desktop.pages import page_key
from vodou_desktop.vault import ALL_PROJECTS, Document, Fact, FactFilter, Vault
from vodou_desktop.vault import query as q

from .conftest import add_fact

PAGE = "https://docs.example.com/guide?utm_source=x"
MODES = ("off", "suggest", "collect")
WRITES = ("note", "link", "selection", "library", "page_link")


@contextmanager
def sql_trace(vault: Vault) -> Iterator[list[str]]:
    """Every SQL statement this thread's reader connection runs inside the block."""
    statements: list[str] = []
    conn = vault.reader()

    def tracer(cursor: Any, sql: str, bindings: Any) -> bool:
        statements.append(sql)
        return True

    conn.exec_trace = tracer
    try:
        yield statements
    finally:
        conn.exec_trace = None


def _touches_memory(statements: list[str]) -> list[str]:
    return [s for s in statements if re.search(r"\b(chunks|documents|chunks_fts)\b", s, re.IGNORECASE)]


@pytest.fixture
def seeded(vault: Vault) -> int:
    """One fact and one document saved from PAGE."""
    save_document(vault, "Guide chapter about widgets and gadgets.",
                  Origin(kind="library", url=PAGE, title="Guide", tool="test"))
    return add_fact(vault, "widgets need calibration every spring", PAGE)


def _write(pm: PageMemory, name: str, fact_id: int) -> Any:
    calls = {
        "note": lambda: pm.note(PAGE, "Guide", "a widget note"),
        "link": lambda: pm.link(PAGE, "Guide", "worth reading"),
        "selection": lambda: pm.selection(PAGE, "Guide", "selected widget text"),
        "library": lambda: pm.library(PAGE, "Guide", html="<p>widget page</p><script>evil()</script>"),
        "page_link": lambda: pm.page_link(fact_id, PAGE),
    }
    return calls[name]()


def _memory_state(vault: Vault) -> tuple[Any, ...]:
    def read(conn):  # type: ignore[no-untyped-def]
        everything = FactFilter(project=ALL_PROJECTS, include_forgotten=True, include_superseded=True)
        return (tuple(f.as_json().__repr__() for f in q.list_facts(conn, everything, limit=1000)),
                tuple(d.id for d in q.list_documents(conn, everything, limit=1000)))
    return vault.read(read)


# -- one test per enforcement point, each under off / suggest / collect ------------------------

@pytest.mark.parametrize("mode", MODES)
def test_match_enforcement(page_memory: PageMemory, sites: SiteModes, vault: Vault, seeded: int, mode: str) -> None:
    sites.set_rule("example.com", mode)
    with sql_trace(vault) as statements:
        result = page_memory.match(PAGE, "Guide", page_context="widgets calibration")
    assert (result["mode"], result["reason"]) == (mode, "user rule on example.com")
    if mode == "off":
        assert result["facts"] == result["documents"] == result["related"] == []
        assert _touches_memory(statements) == []
    else:
        assert [f["id"] for f in result["facts"]] == [seeded]
        assert len(result["documents"]) == 1
        assert _touches_memory(statements)


@pytest.mark.parametrize("mode", MODES)
def test_probe_enforcement(page_memory: PageMemory, sites: SiteModes, vault: Vault, seeded: int, mode: str) -> None:
    sites.set_rule("example.com", mode)
    with sql_trace(vault) as statements:
        result = page_memory.probe(PAGE)
    if mode == "off":
        assert result == {"state": None, "mode": "off"}
        assert _touches_memory(statements) == []
        assert page_memory.probes.loads == 0
    else:
        assert result == {"state": "green", "mode": mode}


@pytest.mark.parametrize("mode", MODES)
def test_suggest_enforcement(page_memory: PageMemory, sites: SiteModes, vault: Vault, seeded: int, mode: str) -> None:
    sites.set_rule("example.com", mode)
    with sql_trace(vault) as statements:
        if mode == "off":
            with pytest.raises(PolicyRefused) as info:
                page_memory.suggest(PAGE, "calib")
            assert "off" in str(info.value) and "user rule on example.com" in str(info.value)
            assert _touches_memory(statements) == []
            return
        result = page_memory.suggest(PAGE, "widgets calib")
    assert [f["id"] for f in result] == [seeded]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("write", WRITES)
def test_write_enforcement(page_memory: PageMemory, sites: SiteModes, vault: Vault, seeded: int,
                           mode: str, write: str) -> None:
    sites.set_rule("example.com", mode)
    before = _memory_state(vault)
    if mode != "collect":
        with pytest.raises(PolicyRefused) as info:
            _write(page_memory, write, seeded)
        assert info.value.status == 403
        assert f"site mode is {mode}" in str(info.value) and "user rule on example.com" in str(info.value)
        assert _memory_state(vault) == before
        return
    result = _write(page_memory, write, seeded)
    assert _memory_state(vault) != before
    if isinstance(result, Document):
        assert result.page_key == page_key(PAGE)
    else:
        assert isinstance(result, Fact) and result.source_host == "docs.example.com" or write == "page_link"
        assert result.page_key == page_key(PAGE)


def test_sensitive_default_and_pause_are_enforced_like_rules(page_memory: PageMemory, sites: SiteModes) -> None:
    with pytest.raises(PolicyRefused, match="sensitive default: bank"):
        page_memory.note("https://www.chase.com/account", "Account", "balance is 12")
    assert page_memory.probe("https://www.chase.com/")["state"] is None
    sites.set_paused(True)
    with pytest.raises(PolicyRefused, match="paused"):
        page_memory.note(PAGE, "Guide", "while paused")
    assert page_memory.match(PAGE)["reason"] == "paused"


def test_page_link_checks_the_target_page_not_the_fact(page_memory: PageMemory, sites: SiteModes,
                                                      vault: Vault) -> None:
    fact_id = add_fact(vault, "a fact from elsewhere", "https://other.example.org/a")
    sites.set_rule("other.example.org", "off")
    linked = page_memory.page_link(fact_id, PAGE)
    assert linked.page_set_by == "manual"
    with pytest.raises(PolicyRefused):
        page_memory.page_link(fact_id, "https://www.chase.com/")


# -- the registry and the scan ------------------------------------------------------------------

def test_every_page_operation_is_registered_with_its_access() -> None:
    policy.scan_unregistered()  # imports every governed module, so the registry is complete
    ops = {k.split(":")[1]: v for k, v in policy.PAGE_OPERATIONS.items() if "page_memory" in k}
    assert ops == {"PageMemory.match": "read", "PageMemory.probe": "read", "PageMemory.suggest": "suggest",
                   **{f"PageMemory.{w}": "write" for w in WRITES}}


def test_no_public_function_taking_a_url_or_host_bypasses_the_policy() -> None:
    assert policy.scan_unregistered() == []


def test_exemptions_are_few_and_each_has_a_reason() -> None:
    assert len(policy.EXEMPT) <= 12
    assert all(reason.strip() for reason in policy.EXEMPT.values())


def test_the_scan_catches_an_unregistered_page_function(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = tmp_path / "probe_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "leaky.py").write_text(
        "class Panel:\n    def matches(self, url):\n        return []\n"
        "def fetch(page_url):\n    return None\n"
        "def safe(text):\n    return text\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert policy.scan_unregistered("probe_pkg") == ["probe_pkg.leaky:Panel.matches", "probe_pkg.leaky:fetch"]


# -- every reader honours a soft delete ------------------------------------------------------

HIDDEN_HOST = "forgotten.example"
HIDDEN_PAGE = f"https://www.{HIDDEN_HOST}/secret"
READERS_WITHOUT_FILTER = {
    "mixed_batch_tags": "owner audit of project tags; returns ids and project names, never fact text",
    "memories_without_message": "owner audit of message provenance; returns ids and batch ids, never fact text",
}


@pytest.fixture
def hidden_host(vault: Vault) -> dict[str, Any]:
    hidden = [add_fact(vault, f"zebracanary hidden fact {i}", HIDDEN_PAGE) for i in range(3)]
    hidden.append(add_fact(vault, f"zebracanary linked fact page: {HIDDEN_PAGE}"))
    visible = add_fact(vault, "zebracanary visible fact", "https://kept.example.net/a")
    save_document(vault, "zebracanary document text", Origin(kind="library", url=HIDDEN_PAGE, title="Secret"))

    def job(conn, change):  # type: ignore[no-untyped-def]
        for cid in [*hidden, visible]:
            conn.execute("UPDATE chunks SET fact_group = 7 WHERE id = ?", (cid,))
        conn.execute("INSERT INTO entities(id, name, created_at) VALUES (5, 'Zebra', 'now')")
        for cid in [*hidden, visible]:
            conn.execute("INSERT INTO entity_links(entity_id, chunk_id) VALUES (5, ?)", (cid,))
        # one conversation: the visible fact sits between hidden turns (neighbour readers)
        for seq, cid in enumerate([hidden[0], hidden[1], visible, hidden[2], hidden[3]]):
            conn.execute("UPDATE chunks SET thread_id = ?, thread_seq = ? WHERE id = ?", (hidden[0], seq, cid))
        # The seed-000 recipe: stamp invalid_at on every fact (and document) of one host.
        conn.execute("UPDATE chunks SET invalid_at = '2025-01-01T00:00:00+00:00' WHERE document_id IS NULL AND"
                     " (page_host LIKE '%forgotten.example' OR source_id IN (SELECT id FROM memory_sources"
                     " WHERE source_host LIKE '%forgotten.example'))")
        conn.execute("UPDATE documents SET invalid_at = '2025-01-01T00:00:00+00:00'"
                     " WHERE page_host LIKE '%forgotten.example'")
        change.touch("chunks", page_keys=[page_key(HIDDEN_PAGE)], hosts=[f"www.{HIDDEN_HOST}"])

    vault.write(job)
    return {"hidden": hidden, "visible": visible, "group": 7, "entity": 5}


def _call_reader(name: str, fn: Any, conn: Any, data: dict[str, Any]) -> list[Any]:
    """Call a reader with arguments chosen by parameter name; one call per hidden id for fact_id."""
    filt = FactFilter(project=ALL_PROJECTS)
    args = {"f": filt, "ids": [*data["hidden"], data["visible"]], "match": '"zebracanary"',
            "key": page_key(HIDDEN_PAGE), "group": data["group"], "after_id": 0,
            "entity_id": data["entity"], "limit": 1000, "offset": 0}
    params = [p for p in inspect.signature(fn).parameters if p != "conn"]
    if "fact_id" in params:
        out = []
        for fact_id in data["hidden"]:
            with pytest.raises(NotFound):
                fn(conn, fact_id, filt)
        out.append(fn(conn, data["visible"], filt))
        return out
    unknown = [p for p in params if p not in args and inspect.signature(fn).parameters[p].default is inspect._empty]
    assert not unknown, f"teach this test how to call reader {name} (parameters {unknown})"
    return [fn(conn, **{p: args[p] for p in params if p in args})]


def _leaks(value: Any, hidden: set[int], top: bool = True) -> list[Any]:
    """Hidden facts, hidden ids or the hidden host in a reader's result (a top-level int is a count)."""
    if isinstance(value, Fact):
        host_hit = HIDDEN_HOST in f"{value.source_host} {value.page_host}"
        return [value] if value.id in hidden or host_hit else []
    if isinstance(value, Document):
        return [value] if HIDDEN_HOST in str(value.page_host) else []
    if isinstance(value, q.RankRow):
        return [value] if value.id in hidden else []
    if isinstance(value, (list, tuple, set)):
        return [x for v in value for x in _leaks(v, hidden, top=False)]
    if isinstance(value, dict):
        return [k for k in value if HIDDEN_HOST in str(k)]
    if isinstance(value, bool):
        return [value] if value else []
    if isinstance(value, int) and not top:
        return [value] if value in hidden else []
    return []


def test_every_reader_returns_nothing_from_a_forgotten_host(vault: Vault, hidden_host: dict[str, Any]) -> None:
    hidden = set(hidden_host["hidden"])
    checked = []
    for name, fn in q.READERS.items():
        if "f" not in inspect.signature(fn).parameters:
            assert name in READERS_WITHOUT_FILTER, f"reader {name} takes no FactFilter: exempt it with a reason"
            continue
        results = vault.read(lambda conn, n=name, f=fn: _call_reader(n, f, conn, hidden_host))
        assert [x for r in results for x in _leaks(r, hidden)] == [], name
        checked.append(name)
    assert vault.read(lambda c: q.count_facts(c, FactFilter(project=ALL_PROJECTS))) == 1
    assert {"get_fact", "list_facts", "keyword_search", "facts_for_page", "page_has_memory",
            "documents_for_page", "list_documents", "thread_neighbour_ids", "facts_for_export",
            "documents_for_export", "count_documents", "rank_rows"} <= set(checked)


def test_every_page_memory_read_returns_nothing_from_a_forgotten_host(page_memory: PageMemory,
                                                                      hidden_host: dict[str, Any]) -> None:
    result = page_memory.match(HIDDEN_PAGE, "Secret", page_context="zebracanary hidden fact")
    assert result["facts"] == result["documents"] == []
    assert all(HIDDEN_HOST not in str(r["source_host"]) + str(r["page_host"]) for r in result["related"])
    assert [r["id"] for r in result["related"]] == [hidden_host["visible"]]
    assert page_memory.probe(HIDDEN_PAGE)["state"] == "none"
    assert [f["id"] for f in page_memory.suggest(HIDDEN_PAGE, "zebraca")] == [hidden_host["visible"]]


# -- structure: nobody outside the vault package selects from chunks --------------------------

def test_no_module_outside_the_vault_selects_from_chunks() -> None:
    root = Path(policy.__file__).resolve().parents[1]
    pattern = re.compile(r"\b(FROM|JOIN)\s+chunks(_fts)?\b", re.IGNORECASE)
    offenders = [str(path.relative_to(root)) for path in root.rglob("*.py")
                 if "vault" not in path.relative_to(root).parts[:1] and pattern.search(path.read_text("utf-8"))]
    assert offenders == []
