"""Source scans of the vodou_desktop package: the policy invariants that live in code, not in rows.

They run in the test suite (``tests/unit/test_code_audit.py``) over the real package; ``vodou doctor``
checks the person's data only.

1. Project predicates without the global carve-out (seed 004's grep): a comparison
   ``project_id = ?``/``:name``/``$n`` in SQL with no ``IS NULL`` on the same or the next line hides
   global memories inside projects. ``SET project_id = ?`` (a write) is not a predicate.
2. Readers of governed columns vs policy consultations (seed 000, GOV-5). Counted per function
   with ``ast``: a *governed reader* is a function containing one SQL text (a literal, an f-string
   or a ``+`` of them, module string constants filled in) that is a SELECT naming a governed column
   (``source_host``, ``source_url``, ``invalid_at``, ``project_id``); it
   *consults the policy* when it builds its WHERE with the vault's query builder — it calls
   ``.where()`` or ``_document_where`` (the FactFilter predicates) — or it is a declared owner
   diagnostic (the doctor's own audits, which must see every row to judge them). Everything else
   is reported: a reader the policy does not reach. This is a static count over literal SQL; SQL
   assembled at run time from non-literal pieces is invisible to it, and that limit is stated.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import vodou_desktop

GOVERNED = ("source_host", "source_url", "invalid_at", "project_id")
_CARVE = re.compile(r"project_id\s*==?\s*[?:$]")
_SELECT = re.compile(r"\bSELECT\b", re.IGNORECASE)
_GOVERNED_RE = re.compile(r"\b(?:" + "|".join(GOVERNED) + r")\b")
POLICY_CALLS = frozenset({"where", "_document_where"})
OWNER_DIAGNOSTICS = frozenset({"vault/query.py:mixed_batch_tags", "vault/audits.py:sources_without_url"})
# Helpers read and found to be no policy gap, each with the reason (seed 000: "the diff between the
# two lists showing only helpers"). A new reader is reported until someone reviews it here.
REVIEWED: dict[str, str] = {
    "vault/schema.py:_m0006_sync_operations": "migration: copies every existing forget stamp into the covers "
                                              "table (ids and times); returns nothing",
    "vault/sync_store.py:journal_everything": "sync: journals every row's global id and which of its fields are "
                                              "set, for a device's first sync; copies no text out",
    "vault/sync_store.py:_read_document": "sync: reads one Library document whole, forgotten or not, to send its "
                                          "record to this person's other computers (sync carries forgets too)",
    "vault/sync_store.py:_erased_hosts_of": "sync: whether an arriving memory's host was erased (keyed hashes); "
                                            "returns the erase, no text",
    "vault/transfer.py:insert_source_event": "import write path: whether the same input label is here already; "
                                             "returns an id",
    "vault/transfer.py:merge_fact": "import write path: a memory already here meets its exported record (its "
                                    "forget stamp, its source) by sync's rules; returns whether it changed",
    "vault/transfer.py:document_here": "import write path: whether the same document is here already (text, "
                                       "address and project); returns an id",
    "vault/transfer.py:merge_document": "import write path: a document already here takes the file's forget by "
                                        "sync's rule; returns nothing",
    "vault/transfer.py:__init__": "import write path (MemoriesHere): indexes the memories already here by global "
                                  "id and by text, project and source, forgotten ones too, so none is added twice",
    "vault/facts.py:_page_for": "write path: copies the new fact's own source URL onto it (and reads the "
                                "source's kind, tool and tier to place it in a conversation)",
    "vault/facts.py:insert_document": "write path: copies the new document's own source URL onto it",
    "vault/ingest_store.py:events_for_batch": "reads a batch's input labels (source_events), never facts",
    "vault/revisions.py:_load": "write path: loads the one fact being corrected or pinned, by id, to copy it",
    "vault/revisions.py:set_pinned": "write path: copies the fact's own source row into its pinned copy",
    "vault/facts.py:_thread_tail": "write path: reads the fact written last (highest id), before a new one, to "
                                   "decide whether they share a conversation; nothing is shown or returned",
    "vault/schema.py:_m0004_threads": "migration: numbers existing facts into threads; reads no text and "
                                      "returns nothing",
    "vault/transfer.py:source_events_for": "export: the input labels (source_events) of the capture batches "
                                           "of facts a policy reader (facts_for_export) already let through",
    "vault/transfer.py:sources_by_id": "export: the source rows of facts and documents a policy reader "
                                       "(facts_for_export / documents_for_export) already let through, by id",
    "vault/revisions.py:head_of": "write path: which revision of one memory is current (not replaced, shown "
                                  "first), to give it the memory's id; returns an id, no text",
    "vault/journal_store.py:move": "write path: reads each memory being moved (kind, project, forgotten or not) to "
                                   "skip what cannot move; returns counts and ids",
    "vault/journal_store.py:undo_move": "write path: reads whether each revision a move wrote changed since "
                                        "(replaced, hidden) before undoing it; returns counts",
    "vault/sync_store.py:read_value": "sync replication: one row's fields, by its sync id, sealed into a change "
                                      "file for the person's own devices; it must read forgotten rows because the "
                                      "forget itself is replicated (erased rows are gone and read as _GONE); "
                                      "nothing reaches a person or an AI tool from here",
    "vault/sync_store.py:_source": "sync replication and write path: the source row, by id, of a fact "
                                   "read_value is sending or of a fact being pinned on merge (to copy it)",
    "vault/sync_store.py:_carry_forget": "write path (sync merge): reads whether a fact is hidden by an active "
                                         "forget to hide its later revisions too; returns ids, no text",
}
# Project predicates without the carve-out on purpose, by file and exact line, each with the reason. A
# new one (or an edited one) is reported until it is reviewed here.
WITHOUT_CARVE_OUT: dict[tuple[str, str], str] = {
    ("vault/query.py", '_PROJECT_ONLY = "c.project_id = ?"'):
        "FactFilter's 'this project only' scope: a narrowing the person (or a caller) asks for inside the "
        "wall, built only by FactFilter.where(); the wall itself (project + global) is the default",
    ("vault/query.py", '_DOCUMENT_PROJECT_ONLY = "d.project_id = ?"  # "this project only" for documents '
                       '(see _PROJECT_ONLY)'):
        "the same narrowing for Library documents, built only by _document_where()",
}
# Modules that ARE a policy: their SQL over governed columns is the policy's own implementation.
POLICY_MODULES: dict[str, str] = {
    "vault/retraction.py": "the soft-delete/erase policy itself (forget, erase, undo by host)",
    "vault/query.py": "the query builder: readers here build WHERE with FactFilter",
}


@dataclass(frozen=True)
class Hit:
    file: str
    line: int
    text: str


def package_root() -> Path:
    return Path(vodou_desktop.__file__).resolve().parent


def _py_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)


def missing_carve_out(root: Path | None = None) -> list[Hit]:
    root = root or package_root()
    hits = []
    for path in _py_files(root):
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        for i, line in enumerate(lines):
            match = _CARVE.search(line)
            if not match or re.search(r"\bSET\s+(?:\w+\s*=\s*[^,]+,\s*)*$", line[: match.start()], re.I):
                continue
            nearby = line + (lines[i + 1] if i + 1 < len(lines) else "")
            if (str(path.relative_to(root).as_posix()), line.strip()) in WITHOUT_CARVE_OUT:
                continue
            if "IS NULL" not in nearby.upper():
                hits.append(Hit(str(path.relative_to(root)), i + 1, line.strip()))
    return hits


@dataclass(frozen=True)
class ReaderCount:
    readers: list[str]
    consulting: list[str]
    unchecked: list[str]


def governed_readers(root: Path | None = None) -> ReaderCount:
    root = root or package_root()
    readers, consulting = [], []
    trees = {}
    for path in _py_files(root):
        try:
            trees[path.relative_to(root).as_posix()] = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
        except SyntaxError:
            continue
    constants = _module_strings(trees.values())
    for rel, tree in trees.items():
        for fn in ast.walk(tree):
            if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef) or not _reads_governed(fn, constants):
                continue
            name = f"{rel}:{fn.name}"
            readers.append(name)
            if name in OWNER_DIAGNOSTICS or name in REVIEWED or rel in POLICY_MODULES or _calls_policy(fn):
                consulting.append(name)
    return ReaderCount(readers, consulting, [r for r in readers if r not in consulting])


def _module_strings(trees: Iterable[ast.Module]) -> dict[str, str]:
    """Module-level string constants (``FACT_COLUMNS = "c.id, …"``) by name, across the package."""
    out: dict[str, str] = {}
    for tree in trees:
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                out[node.targets[0].id] = _strings(node.value, {})
    return out


def _strings(node: ast.AST, constants: dict[str, str]) -> str:
    """Every string literal in ``node``, plus the value of each module string constant it names."""
    parts = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            parts.append(sub.value)
        elif isinstance(sub, ast.Name) and sub.id in constants:
            parts.append(constants[sub.id])
    return " ".join(parts)


def _is_text(node: ast.AST, constants: dict[str, str]) -> bool:
    """A string expression: a literal, an f-string, a named string constant, a ``+`` of them, or a
    choice (``a if c else b``) between them."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _is_text(node.left, constants) or _is_text(node.right, constants)
    if isinstance(node, ast.IfExp):
        return _is_text(node.body, constants) and _is_text(node.orelse, constants)
    return isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Name) and node.id in constants)


def _local_texts(fn: ast.AST, constants: dict[str, str]) -> dict[str, str]:
    """The function's own string variables (``live = " AND invalid_at IS NULL" if … else ""``), so that
    SQL assembled from them in a later statement is read whole."""
    local = dict(constants)
    for node in ast.walk(fn):
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and _is_text(node.value, local)):
            local[node.targets[0].id] = _strings(node.value, local)
    return local


def _sql_texts(fn: ast.AST, constants: dict[str, str]) -> list[str]:
    """Each outermost string expression in ``fn`` as one text (an f-string's constants filled in).

    One text is one statement: a SELECT of an unrelated value and an INSERT naming a governed
    column, written as two statements, are not a read of that column."""
    constants = _local_texts(fn, constants)
    texts, inside = [], set()
    for node in ast.walk(fn):  # breadth first: an expression is met before its parts
        if id(node) in inside or not _is_text(node, constants):
            continue
        inside.update(id(sub) for sub in ast.walk(node))
        texts.append(_strings(node, constants))
    return texts


def _reads_governed(fn: ast.AST, constants: dict[str, str]) -> bool:
    return any(_SELECT.search(t) and _GOVERNED_RE.search(t) for t in _sql_texts(fn, constants))


def _calls_policy(fn: ast.AST) -> bool:
    for node in ast.walk(fn):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name in POLICY_CALLS:
                return True
    return False
