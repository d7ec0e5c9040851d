"""Fact groups and canonical election (ING-2; seed 004).

Two facts are the same when BOTH gates pass: embedding cosine ≥ 0.88 AND token Jaccard ≥ 0.40
after header lines (``# Title``, ``Source: …``) are stripped. Either gate alone collapses facts
that are not the same: cosine alone merges "meeting on Tuesday" with "meeting on Thursday"-like
pairs that share a header; Jaccard alone merges sentences that reuse words for different things.
On top of both, the two must state the same figures (``figures``): "I run 3 km a day" and, later,
"I run 5 km a day" pass both gates, yet the second is an update, not a copy, and demoting it would
hide what is true now.

Each group elects one canonical copy by provenance tier (pinned, first_party, capture, import),
then the OLDEST ``created_at`` (the established copy keeps its status; an import's created_at is
its import time, never event time, so it cannot win by looking new), then the longer text. Other
copies stay searchable at ×0.4. Groups never cross a project boundary.

``group_via_index`` runs on write for new facts (it asks the vector index for near-duplicates only:
rows above ``COSINE_MIN``); ``group_new`` does the same by loading every fact; ``dedupe_scan`` is the
full scan (``vodou mem dedupe``).
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from vodou_desktop.search.embedder import Embedder
from vodou_desktop.search.vectors import VectorIndex
from vodou_desktop.vault import ALL_PROJECTS, Fact, FactFilter, Vault, settings_store
from vodou_desktop.vault import groups as g
from vodou_desktop.vault import query as q
from vodou_desktop.vault.facts import CONVERSATION

COSINE_MIN = 0.88  # all-MiniLM-L6-v2's gate (ING-2)
# bge-small-en-v1.5 puts every pair higher (unrelated memories at .45 median against MiniLM's .10): at
# .88 "Kai's phone number ends in 4417." and "… 9902." (.889) passed both gates. At .93 they do not, nor
# "My flight leaves Monday." / "… Tuesday." (.928), while a copy with "Not urgent." added (.935) still
# joins its group. Another model: MiniLM's gate.
COSINE_GATES = {"bge-small-en-v1.5-int8": 0.93}


def cosine_gate(model: str) -> float:
    """The cosine at or above which two memories of ``model`` may be the same fact."""
    return COSINE_GATES.get(model, COSINE_MIN)
NEIGHBOURS = 20  # on-write grouping looks at this many nearest facts above the gate's cosine
JACCARD_MIN = 0.40
TIER_RANK = {"pinned": 0, "first_party": 1, "capture": 2, "import": 3}
_HEADER = re.compile(r"^\s*(?:#+\s|(?:source|title|url|page)\s*:)", re.IGNORECASE)
_TOKEN = re.compile(r"\w+", re.UNICODE)
_FIGURE = re.compile(r"\d+(?:[.,]\d+)*")
Progress = Callable[[int, int], None]
_blas: list[object] = []  # the BLAS thread-pool controller, made at first use (None without threadpoolctl)


def one_blas_thread() -> contextlib.AbstractContextManager[object]:
    """numpy's BLAS on one thread for the ``with`` block. On-write grouping runs beside the model:
    a second BLAS thread gains nothing there, and OpenBLAS's idle threads spin (they do not sleep
    when told to, as the model's OpenMP threads do), taking CPU from the embedding after each
    product; measured, ~1 ms of CPU per fact ingested."""
    if not _blas:
        try:
            from threadpoolctl import ThreadpoolController

            _blas.append(ThreadpoolController())
        except ImportError:  # pragma: no cover - installed with sentence-transformers
            _blas.append(None)
    controller = _blas[0]
    if controller is None:
        return contextlib.nullcontext()
    return controller.limit(limits=1, user_api="blas")  # type: ignore[attr-defined,no-any-return]


def strip_headers(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not _HEADER.match(line))


def tokens(text: str) -> set[str]:
    return {t.casefold() for t in _TOKEN.findall(strip_headers(text))}


def jaccard(a: str, b: str) -> float:
    ta, tb = tokens(a), tokens(b)
    return len(ta & tb) / len(ta | tb) if ta | tb else 0.0


def figures(text: str) -> set[str]:
    """The numbers ``text`` states, header lines stripped, thousands separators dropped ("£1,800" and
    "£1800" state the same figure; "5.3.0" is one figure, "5.3.1" another)."""
    return {m.replace(",", "") for m in _FIGURE.findall(strip_headers(text))}


def same_fact(cosine: float, a: str, b: str, gate: float = COSINE_MIN) -> bool:
    """Both gates, always, and the same figures (a fact with another number is another fact)."""
    return cosine >= gate and jaccard(a, b) >= JACCARD_MIN and figures(a) == figures(b)


def election_key(fact: Fact) -> tuple[int, str, int, int]:
    return (TIER_RANK.get(fact.tier, 9), fact.created_at, -len(fact.text), fact.id)


def elect(members: Sequence[Fact]) -> Fact:
    return min(members, key=election_key)


@dataclass
class DedupeReport:
    scanned: int = 0
    groups: list[list[int]] = field(default_factory=list)  # canonical first
    changed: int = 0
    skipped: int = 0  # groups left unchecked (``recheck_groups``)

    def as_json(self) -> dict[str, object]:
        return {"scanned": self.scanned, "groups": self.groups, "changed": self.changed}


class _Union:
    def __init__(self) -> None:
        self.parent: dict[int, int] = {}

    def find(self, x: int) -> int:
        self.parent.setdefault(x, x)
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def join(self, a: int, b: int) -> None:
        self.parent[self.find(a)] = self.find(b)


def _live_facts(vault: Vault, turns: bool = False, reader: Callable[..., list[Fact]] = q.facts_after) -> list[Fact]:
    """Every live memory (or every one ``reader`` pages through, as ``facts_after`` does); the person's
    messages kept whole (conversation memories) only with ``turns``: they are records of what was
    said, not claims, so they never join a fact group or supersede."""
    out: list[Fact] = []
    after = 0
    while True:
        page = vault.read(partial(reader, after_id=after, f=FactFilter(project=ALL_PROJECTS), limit=5000))
        if not page:
            return out
        out += page if turns else [f for f in page if f.kind != CONVERSATION]
        after = page[-1].id


def _vectors(vault: Vault, embedder: Embedder, facts: Sequence[Fact]) -> np.ndarray:
    """Every fact's vector of the current model (stored, or encoded now); width is the model's."""
    stored = dict(vault.read(partial(q.embeddings_for, ids=[f.id for f in facts], model=embedder.model_id)))
    dim = embedder.dim or len(next(iter(stored.values()), b"")) // 4
    stored = {i: b for i, b in stored.items() if len(b) == dim * 4}
    missing = [i for i, f in enumerate(facts) if f.id not in stored]
    mat = np.zeros((len(facts), dim), dtype=np.float32)
    for i, f in enumerate(facts):
        if f.id in stored:
            mat[i] = np.frombuffer(stored[f.id], dtype="<f4")
    if missing:
        mat[missing] = embedder.encode([facts[i].text for i in missing])
    return mat


def _edges(facts: Sequence[Fact], mat: np.ndarray, rows: Iterable[int], union: _Union,
           progress: Progress | None, cancel: threading.Event | None, gate: float = COSINE_MIN) -> None:
    todo = list(rows)
    for done, i in enumerate(todo, start=1):
        if cancel is not None and cancel.is_set():
            return
        sims = mat @ mat[i]
        for hit in np.nonzero(sims >= gate)[0]:
            j = int(hit)
            a, b = facts[i], facts[j]
            if j != i and a.project == b.project and same_fact(float(sims[j]), a.text, b.text, gate):
                union.join(a.id, b.id)
        if progress and (done % 200 == 0 or done == len(todo)):
            progress(done, len(todo))


def _assignments(facts: Sequence[Fact], union: _Union, only: set[int] | None
                 ) -> tuple[list[tuple[int, int | None, bool]], list[list[int]]]:
    """Group rows for every component (or only those holding an id in ``only``)."""
    members: dict[int, list[Fact]] = {}
    for f in facts:
        members.setdefault(union.find(f.id), []).append(f)
    rows: list[tuple[int, int | None, bool]] = []
    groups: list[list[int]] = []
    for group in members.values():
        if only is not None and not only & {f.id for f in group}:
            continue
        if len(group) == 1:
            rows.append((group[0].id, None, True))
            continue
        winner = elect(group)
        rows += [(f.id, min(f.id for f in group), f.id == winner.id) for f in group]
        groups.append([winner.id] + sorted(f.id for f in group if f.id != winner.id))
    return rows, groups


def dedupe_scan(vault: Vault, embedder: Embedder, *, dry_run: bool = False, progress: Progress | None = None,
                cancel: threading.Event | None = None) -> DedupeReport:
    """Full scan: rebuild every fact group from scratch (``vodou mem dedupe``)."""
    facts = _live_facts(vault)
    report = DedupeReport(scanned=len(facts))
    if not facts:
        return report
    mat = _vectors(vault, embedder, facts)
    union = _Union()
    _edges(facts, mat, range(len(facts)), union, progress, cancel, cosine_gate(embedder.model_id))
    if cancel is not None and cancel.is_set():
        return report
    rows, report.groups = _assignments(facts, union, None)
    if not dry_run:
        report.changed = vault.write(partial(g.set_groups, rows=rows))
    return report


def group_new(vault: Vault, embedder: Embedder, new_ids: Sequence[int]) -> DedupeReport:
    """On write: join new facts to existing groups (or form new ones) and re-elect canonicals."""
    if not embedder.ready or not new_ids:
        return DedupeReport()
    facts = _live_facts(vault)
    index = {f.id: i for i, f in enumerate(facts)}
    union = _Union()
    for f in facts:  # existing groups hold together: members share a token (the negated group id)
        if f.fact_group is not None:
            union.join(f.id, -f.fact_group)
    mat = _vectors(vault, embedder, facts)
    _edges(facts, mat, [index[i] for i in new_ids if i in index], union, None, None, cosine_gate(embedder.model_id))
    rows, groups = _assignments(facts, union, set(new_ids))
    report = DedupeReport(scanned=len(new_ids), groups=groups)
    report.changed = vault.write(partial(g.set_groups, rows=rows))
    return report


def group_via_index(vault: Vault, index: VectorIndex, new_ids: Sequence[int]) -> DedupeReport:
    """On write, at any vault size: each new (embedded) fact looks only at its near neighbours in the
    in-memory index (those above the gate's cosine: ``VectorIndex.near_many``, which skips most of the
    matrix for them), joins the group of any that pass both gates, and that group's canonical is
    re-elected. ``group_new`` does the same by loading every fact; this is what the app runs."""
    live = FactFilter(project=ALL_PROJECTS)
    report = DedupeReport(scanned=len(new_ids))
    vectors = dict(vault.read(partial(q.embeddings_for, ids=list(new_ids), model=index.model)))
    gate = cosine_gate(index.model)
    if not vectors:
        return report
    # one lookup for the whole batch, of near-duplicates only (rows above the gate's cosine: the index
    # skips most of the matrix for them), then one read of every fact it names
    with one_blas_thread():
        nearest = index.near_many(np.stack([np.frombuffer(b, dtype="<f4") for b in vectors.values()]),
                                  gate, NEIGHBOURS + 1)
    close = {new_id: [(i, s) for i, s in found if i != new_id][:NEIGHBOURS]
             for new_id, found in zip(vectors, nearest, strict=True)}
    wanted = sorted(set(close) | {i for near in close.values() for i, _ in near})
    facts = {f.id: f for f in vault.read(partial(q.facts_by_ids, ids=wanted, f=live)) if f.kind != CONVERSATION}
    touched: set[int] = set()  # facts whose group an earlier step of this batch changed: read again
    for new_id, near in close.items():
        ids = [new_id, *(i for i, _ in near)]
        if touched.intersection(ids):
            for i in ids:
                facts.pop(i, None)
            facts.update({f.id: f for f in vault.read(partial(q.facts_by_ids, ids=ids, f=live))
                          if f.kind != CONVERSATION})
        new = facts.get(new_id)
        if new is None:
            continue
        mates = [facts[i] for i, s in near if i in facts and facts[i].project == new.project
                 and same_fact(s, new.text, facts[i].text, gate)]
        if not mates:
            continue
        group = min([m.fact_group or m.id for m in mates] + [new.id])
        members = {new.id: new, **{m.id: m for m in mates}}
        for m in mates:
            if m.fact_group is not None:
                members.update({f.id: f for f in vault.read(partial(q.facts_in_group, group=m.fact_group, f=live))})
        winner = elect(list(members.values()))
        rows = [(f.id, group, f.id == winner.id) for f in members.values()]
        report.changed += vault.write(partial(g.set_groups, rows=rows))
        report.groups.append([winner.id] + sorted(i for i in members if i != winner.id))
        touched.update(members)
    return report


# The grouping rules a vault's groups were last checked under: "2" since a near-duplicate must state
# the same figures. A vault grouped before is checked again once (``recheck_groups_once``).
GROUPING_RULES = "2"
GROUPING_RULES_KEY = "grouping_rules"


def recheck_groups(vault: Vault, model: str) -> DedupeReport:
    """Every fact group checked again under today's gates (``same_fact``) with the vectors of ``model``
    already stored, so no model runs: a group whose members no longer all hold together is split, a
    member left alone is canonical again, and each part elects its canonical. It only splits (joining
    is on-write grouping's and ``dedupe_scan``'s work); a group with a member that has no stored vector
    of ``model`` is left as it is (counted in ``skipped``). ``groups``: the parts of the groups split."""
    grouped = _live_facts(vault, reader=q.grouped_facts_after)  # the grouped ones only: a few per cent
    report = DedupeReport(scanned=len(grouped))
    stored = dict(vault.read(partial(q.embeddings_for, ids=[f.id for f in grouped], model=model)))
    by_group: dict[int, list[Fact]] = {}
    for f in grouped:
        by_group.setdefault(f.fact_group, []).append(f)  # type: ignore[arg-type]
    gate = cosine_gate(model)
    rows: list[tuple[int, int | None, bool]] = []
    for members in by_group.values():
        if len(members) < 2:
            continue
        blobs = [stored.get(f.id) for f in members]
        if any(b is None or len(b) != len(blobs[0] or b"") for b in blobs):
            report.skipped += 1
            continue
        mat = np.stack([np.frombuffer(b, dtype="<f4") for b in blobs if b is not None])
        union = _Union()
        for f in members:
            union.find(f.id)
        with one_blas_thread():
            _edges(members, mat, range(len(members)), union, None, None, gate)
        if len({union.find(f.id) for f in members}) == 1:
            continue  # still one group: left exactly as it is
        part_rows, parts = _assignments(members, union, None)
        rows += part_rows
        report.groups += parts
    if rows:
        report.changed = vault.write(partial(g.set_groups, rows=rows))
    return report


def recheck_groups_once(vault: Vault, model: str) -> DedupeReport | None:
    """``recheck_groups`` if the vault's groups were formed under older rules; today's are recorded once
    no group was left unchecked (a member still waiting for its vector: the next start checks again).
    None when they are current."""
    if vault.read(lambda c: settings_store.get_setting(c, GROUPING_RULES_KEY)) == GROUPING_RULES:
        return None
    report = recheck_groups(vault, model)
    if not report.skipped:
        vault.write(lambda c, change: settings_store.set_setting(c, change, GROUPING_RULES_KEY, GROUPING_RULES))
    return report
