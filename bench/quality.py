"""``python -m bench.quality``: how well does search find what was saved?

Builds a temp vault from ``bench/data/quality/`` through the real write path — conversation turns
one ``remember`` call each (``"Speaker: text"``, the session date as the memory's day, one project
per conversation), AI chats through the ChatGPT importer, notes through ``remember`` and page facts
through ``PageMemory.selection`` — embeds it with the real model (``backfill``), then runs every
question of the chosen split against:

- ours hybrid: ``SearchService(vault, model, VectorIndex(vault)).search(q, FactFilter(project=p), k=10)``
- ours keyword-only: the same with ``Embedder("none")``
- ours dense-only: the query embedding against ``VectorIndex.top``, filtered by the vault's
  ``allowed_ids`` under the same ``FactFilter``
- baseline: SQLite FTS5 bm25 with the ``porter unicode61 remove_diacritics 2`` tokenizer over the same
  texts in an in-memory table, the question's words OR-ed, the same project wall
- baseline blend: that bm25 and the dense ranking, each min-max scaled, equal weights

and prints hit@1/5/10, MRR@10 and nDCG@10 per question kind and overall, the ratios to the bm25
baseline with the issue's targets as PASS/FAIL lines, and hybrid latency end to end (the query
embedding included). A hit is any gold memory in the top k; multi-hop questions also report
all-gold@10 (every gold memory in the top 10).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import UTC, datetime
from datetime import time as dtime
from functools import partial
from pathlib import Path
from typing import Any

import apsw
import numpy as np

from vodou_desktop.governance.page_memory import PageMemory
from vodou_desktop.governance.sitemodes import SiteModes
from vodou_desktop.ingest.importer import import_export
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.search.backfill import backfill
from vodou_desktop.search.embedder import DEFAULT_MODEL, Embedder
from vodou_desktop.search.service import SearchService
from vodou_desktop.search.vectors import VectorIndex
from vodou_desktop.vault import ALL_PROJECTS, FactFilter, Vault, dates
from vodou_desktop.vault import query as q

DATA = Path(__file__).parent / "data" / "quality"
K = 10
KINDS = ("single", "multihop", "temporal", "paraphrase", "reply")
SYSTEMS = ("ours hybrid", "ours keyword-only", "ours dense-only", "bm25 porter", "bm25 porter + dense")
BASELINE = "bm25 porter"
TARGET_RATIO = 1.15
BLEND_POOL = 100
# How memories are stored (the storage protocol). Conversation turns and notes go in as ``vodou mem
# add`` stores typed text: source kind "cli" (the vault has no "conversation" source kind). AI chats ("chat"
# and "chat_turn" memories) go through the ChatGPT importer.
CONVERSATION_ORIGIN = Origin(kind="cli", tier="first_party", tool=None)
NOTE_ORIGIN = Origin(kind="cli", tier="first_party", tool="cli")
_WORD = re.compile(r"\w+", re.UNICODE)

Ranker = Callable[[dict[str, Any]], list[int]]


# -- data ---------------------------------------------------------------------------------------

def load(folder: Path = DATA) -> dict[str, Any]:
    def lines(name: str) -> list[dict[str, Any]]:
        with (folder / name).open(encoding="utf-8") as fh:
            return [json.loads(line) for line in fh if line.strip()]

    return {"memories": lines("memories.jsonl"), "questions": lines("questions.jsonl"),
            "chats": json.loads((folder / "chats.json").read_text(encoding="utf-8"))}


def select(questions: Sequence[dict[str, Any]], split: str) -> list[dict[str, Any]]:
    return [x for x in questions if split == "all" or x["split"] == split]


# -- the vault, through the real write path ----------------------------------------------------

@dataclass
class Built:
    vault: Vault
    key_of: dict[int, str]  # vault id → memory key
    texts: dict[int, str]  # vault id → stored text
    projects: dict[int, str | None]
    seconds: float


def build_vault(path: Path, data: dict[str, Any]) -> Built:
    """Store every memory the way its kind is stored in real use; map vault ids to keys."""
    started = time.perf_counter()
    vault = Vault.open(path)
    key_of: dict[int, str] = {}
    pages = PageMemory(vault, SearchService(vault, Embedder("none")), SiteModes(vault))
    try:
        for m in data["memories"]:
            if m["source"] == "conversation":
                fid = remember(vault, m["text"], CONVERSATION_ORIGIN, project=m["project"], valid_at=m["date"],
                               valid_precision="day")
            elif m["source"] == "note":
                fid = remember(vault, m["text"], NOTE_ORIGIN, project=m["project"])
            elif m["source"] == "page":
                fid = pages.selection(m["url"], m["title"], m["text"], project=m["project"]).id
            else:
                continue
            key_of[fid] = m["key"]
    finally:
        pages.close()
    key_of.update(_import_chats(vault, path.parent, data))
    facts = vault.read(lambda c: q.facts_by_ids(c, sorted(key_of), FactFilter(project=ALL_PROJECTS)))
    texts = {f.id: f.text for f in facts}
    projects = {f.id: f.project for f in facts}
    if len(texts) != len(key_of):
        raise RuntimeError(f"{len(key_of) - len(texts)} stored memories cannot be read back")
    return Built(vault, key_of, texts, projects, time.perf_counter() - started)


def chatgpt_export(chats: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The chats as a ChatGPT ``conversations.json``: one linear ``mapping`` per chat."""
    out = []
    for chat in chats:
        day = datetime.combine(datetime.fromisoformat(chat["date"]).date(), dtime(19, 0), UTC).timestamp()
        mapping: dict[str, Any] = {}
        parent = None
        for i, msg in enumerate(chat["messages"]):
            node = f"{chat['group']}-{i}"
            mapping[node] = {"id": node, "parent": parent, "children": [],
                             "message": {"id": node, "author": {"role": msg["role"]},
                                         "content": {"content_type": "text", "parts": [msg["text"]]},
                                         "create_time": day + 60 * i}}
            if parent:
                mapping[parent]["children"].append(node)
            parent = node
        out.append({"id": chat["group"], "title": chat["title"], "create_time": day, "mapping": mapping,
                    "current_node": parent})
    return out


def _import_chats(vault: Vault, folder: Path, data: dict[str, Any]) -> dict[int, str]:
    """The chats through the ChatGPT importer: each user message kept whole (``chat_turn``) and what it
    distils (``chat``), matched to the data's keys in order."""
    if not data["chats"]:
        return {}
    export = folder / "conversations.json"
    export.write_text(json.dumps(chatgpt_export(data["chats"])), encoding="utf-8")
    report = import_export(vault, export, "chatgpt")
    everything = FactFilter(project=ALL_PROJECTS)
    facts = vault.read(lambda c: q.facts_by_ids(c, report.fact_ids, everything))
    got = {f.id: f.text for f in facts}
    # a decision kept from a reply the user accepted is a memory of the assistant's words: in the vault, not keyed
    roles = {i: role for i, (_, _, role) in vault.read(partial(q.message_entries, ids=report.fact_ids,
                                                               f=everything)).items()}
    distilled = [i for i in report.distilled_ids if roles.get(i) != "assistant"]
    turns = [i for i in report.fact_ids if i not in set(report.distilled_ids)]
    out: dict[int, str] = {}
    for source, ids in (("chat", distilled), ("chat_turn", turns)):
        expected = [m for m in data["memories"] if m["source"] == source]
        if [got[i] for i in ids] != [m["text"] for m in expected]:
            raise RuntimeError(f"the importer stored other {source} memories than bench.quality_data expected; "
                               "rebuild the data with python -m bench.quality_data")
        out.update((i, m["key"]) for i, m in zip(ids, expected, strict=True))
    return out


class CachedVectors:
    """Stands in for the model during ingest only (``backfill``): the vectors this model gave the same
    texts in an earlier run are read from ``folder``; the rest are embedded by the model and added.
    Queries always go to the real model, so no figure but the ingest time changes."""

    def __init__(self, model: Embedder, folder: Path) -> None:
        self.model = model
        self.model_name = model.model_name
        self.model_id = model.model_id  # what backfill records beside each vector
        self.path = folder / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', model.model_name)}.npz"
        self.vectors: dict[str, np.ndarray] = {}
        if self.path.exists():
            with np.load(self.path) as npz:
                self.vectors = dict(zip(npz["keys"].tolist(), npz["vectors"], strict=True))
        self.hits = 0

    @property
    def ready(self) -> bool:
        return self.model.ready

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        keys = [hashlib.sha256(t.encode()).hexdigest() for t in texts]
        missing = [t for t, k in zip(texts, keys, strict=True) if k not in self.vectors]
        if missing:
            for key, vec in zip([hashlib.sha256(t.encode()).hexdigest() for t in missing],
                                self.model.encode(missing, batch_size), strict=True):
                self.vectors[key] = vec
        self.hits += len(texts) - len(missing)
        return np.stack([self.vectors[k] for k in keys])

    def submit(self, texts: Sequence[str], batch_size: int = 64) -> Future[np.ndarray]:
        """``encode`` as the backfill hands batches over (done at once)."""
        done: Future[np.ndarray] = Future()
        done.set_result(self.encode(texts, batch_size))
        return done

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        keys = sorted(self.vectors)
        np.savez(self.path, keys=np.array(keys), vectors=np.stack([self.vectors[k] for k in keys]))


# -- rankers ------------------------------------------------------------------------------------

def service_ranker(service: SearchService) -> Ranker:
    def rank(question: dict[str, Any]) -> list[int]:
        results = service.search(question["question"], FactFilter(project=question["project"]), k=K)
        return [r.fact.id for r in results]

    return rank


def dense_scores(vault: Vault, index: VectorIndex, qvec: np.ndarray, project: str | None, n: int
                 ) -> list[tuple[int, float]]:
    """The ``n`` nearest memories the project filter lets through, best first (widening as needed)."""
    filt = FactFilter(project=project)
    want, total = n * 4, len(index)
    while True:
        cands = index.top(qvec, want)
        ok = vault.read(partial(q.allowed_ids, ids=[i for i, _ in cands], f=filt))
        found = [(i, s) for i, s in cands if i in ok]
        if len(found) >= n or want >= total:
            return found[:n]
        want *= 8


class Bm25Baseline:
    """Plain FTS5 bm25 with the porter tokenizer: the baseline the issue measured."""

    def __init__(self, texts: dict[int, str], projects: dict[int, str | None]) -> None:
        self.conn = apsw.Connection(":memory:")
        self.conn.execute("CREATE VIRTUAL TABLE m USING fts5(text, project UNINDEXED,"
                          " tokenize='porter unicode61 remove_diacritics 2')")
        with self.conn:
            self.conn.executemany("INSERT INTO m(rowid, text, project) VALUES (?, ?, ?)",
                                  [(i, t, projects[i] or "") for i, t in texts.items()])

    def scores(self, text: str, project: str | None, n: int = K) -> list[tuple[int, float]]:
        words = list(dict.fromkeys(w.casefold() for w in _WORD.findall(text)))
        if not words:
            return []
        match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        sql = ("SELECT rowid, bm25(m) AS s FROM m WHERE m MATCH ? AND (project = ? OR project = '')"
               " ORDER BY s LIMIT ?")
        return [(int(i), -float(s)) for i, s in self.conn.execute(sql, (match, project or "", n))]


def blend(a: Sequence[tuple[int, float]], b: Sequence[tuple[int, float]]) -> list[int]:
    """Equal-weight blend of two min-max scaled score lists (a missing score counts 0)."""
    def scaled(pairs: Sequence[tuple[int, float]]) -> dict[int, float]:
        if not pairs:
            return {}
        lo, hi = min(s for _, s in pairs), max(s for _, s in pairs)
        return {i: (s - lo) / (hi - lo) if hi > lo else 1.0 for i, s in pairs}

    sa, sb = scaled(a), scaled(b)
    fused = {i: 0.5 * sa.get(i, 0.0) + 0.5 * sb.get(i, 0.0) for i in set(sa) | set(sb)}
    return [i for i, _ in sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))][:K]


# -- metrics ------------------------------------------------------------------------------------

def score_one(ranked: Sequence[str | None], gold: Sequence[str]) -> dict[str, float]:
    """hit@1/5/10, reciprocal rank in the top 10, binary nDCG@10 and all-gold@10 for one question."""
    gold_set = set(gold)
    top = list(ranked[:K])
    first = next((r for r, key in enumerate(top, start=1) if key in gold_set), None)
    dcg = sum(1.0 / math.log2(r + 1) for r, key in enumerate(top, start=1) if key in gold_set)
    ideal = sum(1.0 / math.log2(r + 1) for r in range(1, min(len(gold_set), K) + 1))
    return {"hit@1": float(first == 1), "hit@5": float(first is not None and first <= 5),
            "hit@10": float(first is not None), "mrr@10": 1.0 / first if first else 0.0,
            "ndcg@10": dcg / ideal if ideal else 0.0, "allgold@10": float(gold_set <= set(top))}


METRICS = ("hit@1", "hit@5", "hit@10", "mrr@10", "ndcg@10")


def aggregate(rows: Sequence[tuple[str, dict[str, float]]]) -> dict[str, dict[str, float]]:
    """Mean of each metric per kind and over all questions (``n`` is the question count)."""
    out: dict[str, dict[str, float]] = {}
    for group in ("all", *dict.fromkeys(kind for kind, _ in rows)):
        picked = [m for kind, m in rows if group in ("all", kind)]
        if not picked:
            continue
        out[group] = {name: sum(m[name] for m in picked) / len(picked) for name in (*METRICS, "allgold@10")}
        out[group]["n"] = len(picked)
    return out


def percentile(values: Sequence[float], pct: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, max(0, math.ceil(pct / 100 * len(ordered)) - 1))]


# -- the run ------------------------------------------------------------------------------------

def run(data: dict[str, Any], split: str, model: Embedder | None, folder: Path,
        log: Callable[[str], None] = print, vector_cache: Path | None = None) -> dict[str, Any]:
    """Build the vault, rank every question with every system, return the figures."""
    questions = select(data["questions"], split)
    built = build_vault(folder / "quality.sqlite", data)
    vault = built.vault
    log(f"stored {len(built.key_of)} memories in {built.seconds:.1f} s")
    index = VectorIndex(vault, model=model.model_id if model is not None else DEFAULT_MODEL)
    ranked: dict[str, list[list[int]]] = {}
    latency: dict[str, list[float]] = {}
    embed_s = 0.0
    try:
        if model is not None:
            t0 = time.perf_counter()
            cache = CachedVectors(model, vector_cache) if vector_cache else None
            backfill(vault, cache or model)  # type: ignore[arg-type]  # duck-typed: ready, encode, model_name
            embed_s = time.perf_counter() - t0
            index.load()
            log(f"embedded them in {embed_s:.1f} s" + (f" ({cache.hits} from the vector cache)" if cache else ""))
            if cache:
                cache.save()
            # Hybrid first, so no earlier call has embedded (or cached) a question.
            ranked["ours hybrid"], latency["ours hybrid"] = _timed(service_ranker(SearchService(vault, model, index)),
                                                                   questions)
        ranked["ours keyword-only"], latency["ours keyword-only"] = _timed(
            service_ranker(SearchService(vault, Embedder("none"), index)), questions)
        baseline = Bm25Baseline(built.texts, built.projects)
        bm25 = [baseline.scores(x["question"], x["project"], BLEND_POOL) for x in questions]
        ranked[BASELINE] = [[i for i, _ in s[:K]] for s in bm25]
        if model is not None:
            qvecs = model.encode([dates.without_dates(x["question"]) for x in questions])  # as search embeds it
            dense = [dense_scores(vault, index, v, x["project"], BLEND_POOL) for v, x in zip(qvecs, questions,
                                                                                            strict=True)]
            ranked["ours dense-only"] = [[i for i, _ in d[:K]] for d in dense]
            ranked["bm25 porter + dense"] = [blend(b, d) for b, d in zip(bm25, dense, strict=True)]
    finally:
        index.close()
        vault.close()
    results, per_question = {}, {}
    for name in SYSTEMS:
        if name in ranked:
            scored = [(x, score_one([built.key_of.get(i) for i in r], x["gold"]))
                      for x, r in zip(questions, ranked[name], strict=True)]
            results[name] = aggregate([(x["kind"], m) for x, m in scored])
            per_question[name] = {x["id"]: m for x, m in scored}
    return {"split": split, "questions": len(questions), "memories": len(built.key_of),
            "results": results, "per_question": per_question,
            "store_s": round(built.seconds, 2), "embed_s": round(embed_s, 2),
            "latency_ms": {name: {"p50": round(percentile(v, 50), 2), "p95": round(percentile(v, 95), 2)}
                           for name, v in latency.items()}}


def _timed(rank: Ranker, questions: Sequence[dict[str, Any]]) -> tuple[list[list[int]], list[float]]:
    out, times = [], []
    for x in questions:
        t0 = time.perf_counter()
        out.append(rank(x))
        times.append((time.perf_counter() - t0) * 1000)
    return out, times


# -- report -------------------------------------------------------------------------------------

def targets(results: dict[str, dict[str, dict[str, float]]]) -> list[tuple[str, bool]]:
    """The issue's targets on the figures at hand: (line, passed)."""
    ours = results.get("ours hybrid")
    if ours is None:
        return []
    lines = []
    for metric in ("hit@10", "mrr@10"):
        base = results[BASELINE]["all"][metric]
        ratio = ours["all"][metric] / base if base else float("inf")
        lines.append((f"hybrid {metric} {ours['all'][metric]:.3f} >= {TARGET_RATIO}x bm25 porter "
                      f"{base:.3f} (ratio {ratio:.3f})", ratio >= TARGET_RATIO))
        for other in ("ours keyword-only", "ours dense-only"):
            if other in results:
                theirs = results[other]["all"][metric]
                lines.append((f"hybrid {metric} {ours['all'][metric]:.3f} >= {other.removeprefix('ours ')} "
                              f"{theirs:.3f}", ours["all"][metric] >= theirs - 1e-12))
    return lines


def report(figures: dict[str, Any]) -> str:
    results = figures["results"]
    out = [f"# bench.quality, split {figures['split']}: {figures['questions']} questions over "
           f"{figures['memories']} memories"]
    first = next(iter(results.values()))
    for group in first:
        extra = "  all-gold@10" if group == "multihop" else ""
        out += ["", f"== {group} (n={first[group]['n']:.0f})",
                f"{'system':<22}" + "".join(f"{m:>9}" for m in METRICS) + extra]
        for name, res in results.items():
            row = res[group]
            cells = "".join(f"{row[m]:>9.3f}" for m in METRICS)
            if group == "multihop":
                cells += f"{row['allgold@10']:>13.3f}"
            out.append(f"{name:<22}{cells}")
    out.append("")
    base = results[BASELINE]["all"]
    for name, res in results.items():
        if name != BASELINE:
            ratios = "  ".join(f"{m} {res['all'][m] / base[m]:.3f}x" if base[m] else f"{m} n/a"
                               for m in ("hit@10", "mrr@10"))
            out.append(f"ratio {name} / bm25 porter: {ratios}")
    for line, ok in targets(results):
        out.append(f"{'PASS' if ok else 'FAIL'}  {line}")
    for name, lat in figures["latency_ms"].items():
        out.append(f"latency {name} (end to end{', query embedding included' if 'hybrid' in name else ''}):"
                   f" p50 {lat['p50']:.1f} ms  p95 {lat['p95']:.1f} ms")
    out.append(f"store {figures['store_s']:.1f} s, embed {figures['embed_s']:.1f} s, total {figures['total_s']:.1f} s,"
               f" load average {figures['load_average']}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.quality", description=__doc__.split("\n")[0])
    parser.add_argument("--split", choices=("dev", "test", "all"), default="test",
                        help="which of our set's questions to run (tune on dev, report test)")
    parser.add_argument("--set", dest="set_name", choices=SETS, default="ours",
                        help="our own labelled set (bench/data/quality), LoCoMo-10 (two friends) or BEAM 100K (a "
                             "person and an AI assistant), the last two read from the shared data folder beside the "
                             "checkout (or VODOU_LOCOMO, VODOU_BEAM) and never copied")
    parser.add_argument("--model", choices=("default", "minilm"), default="default",
                        help="the embedding model: the default (bge-small-en-v1.5) or all-MiniLM-L6-v2")
    parser.add_argument("--cv", action="store_true",
                        help="cross-validate: choose the knobs on every set's other folds of conversations and "
                             "report the held-out figures of every set (bench/cv.py)")
    parser.add_argument("--keyword-only", action="store_true", help="no model: keyword paths and bm25 only")
    parser.add_argument("--no-grouping", action="store_true",
                        help="--cv: leave out on-write near-duplicate grouping (to measure what it costs)")
    parser.add_argument("--json", metavar="OUT", type=Path, help="also write the figures to this file")
    parser.add_argument("--vector-cache", metavar="DIR", type=Path,
                        help="reuse memory vectors from an earlier run (same model, same text) to shorten "
                             "ingest while tuning; query embeddings are never cached")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    load_before = os.getloadavg()[0]
    if args.cv:
        return _main_cv(args, started, load_before)
    if args.set_name != "ours":
        try:
            data = load_set(args.set_name)
        except MissingSet as exc:
            print(exc, file=sys.stderr)
            return 0
        args.split = "all"
    else:
        data = load()
    model = None
    if not args.keyword_only:
        from bench.search import load_model

        model = load_model(args.model)
    with tempfile.TemporaryDirectory(prefix="vodou-quality-") as tmp:
        figures = run(data, args.split, model, Path(tmp), log=lambda s: print(s, file=sys.stderr),
                      vector_cache=args.vector_cache)
    figures["total_s"] = round(time.perf_counter() - started, 1)
    figures["load_average"] = [round(load_before, 2), round(os.getloadavg()[0], 2)]
    figures["date"] = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    print(report(figures))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")
    return 0


SETS = ("ours", "locomo", "beam")


class MissingSet(RuntimeError):
    """A shared data set is not where the benchmark looks for it."""


def load_set(name: str) -> dict[str, Any]:
    """One set in this module's shape (``load`` for ours); MissingSet when a shared one is absent."""
    if name == "ours":
        return load()
    from bench import beam, locomo

    module = {"locomo": locomo, "beam": beam}[name]
    try:
        return module.load()  # type: ignore[no-any-return]
    except module.Missing as exc:
        raise MissingSet(str(exc)) from exc


def kinds_of(name: str) -> Sequence[str]:
    from bench import beam, locomo

    return {"ours": KINDS, "locomo": locomo.KINDS, "beam": beam.KINDS}[name]


def _main_cv(args: argparse.Namespace, started: float, load_before: float) -> int:
    """``--cv``: every set built and ranked under every configuration; the held-out figures of each."""
    from bench import cv
    from bench.search import load_model

    sets: dict[str, tuple[dict[str, Any], Sequence[str]]] = {}
    for name in SETS:
        try:
            sets[name] = (load_set(name), kinds_of(name))
        except MissingSet as exc:
            print(exc, file=sys.stderr)
    if args.set_name not in sets:
        return 0
    model = load_model(args.model)
    log = partial(print, file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="vodou-cv-") as tmp:
        runs = [cv.build(name, data, model, Path(tmp) / name, log, args.vector_cache, grouping=not args.no_grouping)
                for name, (data, _) in sets.items()]
        try:
            evaluation = cv.Evaluation(runs, log)
            scores = evaluation.hybrid(cv.grid(), log)
            result = cv.cross_validate(runs, scores, evaluation)
            # the chosen set first, then the others of the same run (one run ranks them all)
            order = [args.set_name, *(name for name in sets if name != args.set_name)]
            text = "\n\n".join([cv.summary(runs, result),
                                 *(cv.report(runs, result, name, sets[name][1])[0] for name in order),
                                 cv.ablation(runs, result, scores, evaluation)])
        finally:
            for r in runs:
                r.close()
    print(text)
    print(f"total {time.perf_counter() - started:.0f} s, load average {load_before:.2f} -> {os.getloadavg()[0]:.2f},"
          f" {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}")
    if args.json:
        args.json.write_text(json.dumps({"set": args.set_name, "report": text,
                                         "final": cv.describe(result["final"])}, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
