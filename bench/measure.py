"""Timing queries: our keyword / vector / hybrid paths and the two plain baselines, same data.

Query embedding is measured on its own and excluded from the vector and hybrid figures: the
service is given an embedder that returns the real query vectors computed beforehand.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

import numpy as np

from bench.build import NO_MODEL_DIM
from vodou_desktop.search import keyword
from vodou_desktop.search.service import SearchService
from vodou_desktop.search.vectors import VectorIndex
from vodou_desktop.vault import FactFilter, Vault, dates

PLAIN_OR_SQL = ("SELECT rowid, bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ?"
                " ORDER BY rank LIMIT 10")


def meaning_vectors(model: Any, texts: Sequence[str]) -> dict[str, np.ndarray]:
    """Each question's vector as search embeds it (without the dates it names), under the question."""
    return dict(zip(texts, model.encode([dates.without_dates(t) for t in texts]), strict=True))


class PrecomputedEmbedder:
    """Hands the service vectors embedded in advance, so timings exclude query embedding."""

    ready = True

    def __init__(self, vectors: dict[str, np.ndarray], model_name: str) -> None:
        """``vectors``: each question's vector, embedded as search embeds it (``meaning_vectors``), under
        the question; search asks for it by the text it embeds."""
        self._vectors = {**vectors, **{dates.without_dates(t): v for t, v in vectors.items()}}
        self.model_name = self.model_id = model_name

    def encode_one(self, text: str) -> np.ndarray:
        return self._vectors[text]

    def submit_one(self, text: str) -> Future[np.ndarray]:
        done: Future[np.ndarray] = Future()
        done.set_result(self._vectors[text])
        return done

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self._vectors[t] for t in texts])


@dataclass(frozen=True)
class Latency:
    p50: float
    p95: float

    @classmethod
    def of(cls, seconds: Sequence[float]) -> Latency:
        ms = np.asarray(seconds) * 1000.0
        return cls(float(np.percentile(ms, 50)), float(np.percentile(ms, 95)))


def samples(fn: Callable[[Any], object], items: Sequence[Any], warmup: int = 3) -> list[float]:
    """Seconds per item, after a few warm-up calls."""
    for item in items[:warmup]:
        fn(item)
    seconds = []
    for item in items:
        t0 = time.perf_counter()
        fn(item)
        seconds.append(time.perf_counter() - t0)
    return seconds


def timed(fn: Callable[[Any], object], items: Sequence[Any], warmup: int = 3) -> Latency:
    return Latency.of(samples(fn, items, warmup))


def embed_queries(embedder: Any | None, texts: Sequence[str], rng: np.random.Generator,
                  ) -> tuple[dict[str, np.ndarray], Latency | None]:
    """Real query vectors (and the per-query embedding time) or random ones without a model."""
    if embedder is None:
        vecs = rng.standard_normal((len(texts), NO_MODEL_DIM)).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        return dict(zip(texts, vecs, strict=True)), None
    out: dict[str, np.ndarray] = {}
    latency = timed(lambda t: out.__setitem__(t, embedder.encode_one(dates.without_dates(t))),
                    list(dict.fromkeys(texts)))
    return out, latency


def ours(service: SearchService, keyword_only: SearchService, cases: Sequence[tuple[str, FactFilter]],
         shapes: Sequence[str], hybrid: Sequence[float]) -> tuple[dict[str, Latency], dict[str, Latency]]:
    """Our three paths, each with the case's project filter (hard predicates on); hybrid per shape.
    ``hybrid``: the hybrid's seconds per case, timed beside the baselines (``hybrid_and_baselines``)."""
    pool = 50
    per_shape = {shape: Latency.of([t for t, s in zip(hybrid, shapes, strict=True) if s == shape])
                 for shape in dict.fromkeys(shapes)}
    return {
        "keyword": timed(lambda c: keyword_only.search(c[0], c[1], k=10), cases),
        "vector": timed(lambda c: service._nearest(service.embedder.encode_one(c[0]), c[1], pool),  # type: ignore[union-attr]
                        cases),
        "hybrid": Latency.of(hybrid),
    }, per_shape


def hybrid_and_baselines(service: SearchService, vault: Vault, matrix: np.ndarray,
                         cases: Sequence[tuple[str, FactFilter]], vectors: dict[str, np.ndarray],
                         warmup: int = 3) -> tuple[list[float], dict[str, Latency]]:
    """Our hybrid search (query vector given) and the two plain baselines — a plain FTS5 ``OR`` top
    10 and a numpy full-scan top 10 — timed two ways over the same cases:

    - in turn (``hybrid``, ``fts_or``, ``numpy_scan``): for each case ours, then each baseline, the
      order rotated from one case to the next so that none always runs first. All three see the same
      load, and each runs after other work, as a person's searches do (caches not kept warm by the
      same step just before);
    - each in a block of its own (``..._block``): every case through one step, then the next step.
      A step repeated back to back keeps its data in the CPU caches (the numpy scan of 10k vectors
      runs about three times faster than in turn), and a change in the machine's load between blocks
      moves the ratio (3.0x against 4.7x for the same code, on this shared 2-core machine).

    Returns our seconds per case in turn, and the latencies (a case with no searchable word has no
    FTS5 figure: the baseline has nothing to run)."""
    def hybrid(case: tuple[str, FactFilter]) -> None:
        service.search(case[0], case[1], k=10)

    def fts(case: tuple[str, FactFilter]) -> None:
        expr = keyword.match_expression(case[0], "or")
        if expr:
            vault.read(lambda conn: conn.execute(PLAIN_OR_SQL, (expr,)).fetchall())

    def scan(case: tuple[str, FactFilter]) -> None:
        scores = matrix @ vectors[case[0]]
        top = np.argpartition(-scores, 9)[:10]
        top[np.argsort(-scores[top])]

    steps = (hybrid, fts, scan)
    for case in cases[:warmup]:
        for step in steps:
            step(case)
    in_turn: list[list[float]] = [[], [], []]
    for n, case in enumerate(cases):
        for j in range(3):
            which = (n + j) % 3
            t0 = time.perf_counter()
            steps[which](case)
            in_turn[which].append(time.perf_counter() - t0)
    blocks = [samples(step, cases) for step in steps]
    searchable = [keyword.match_expression(c[0], "or") is not None for c in cases]

    def fts_only(seconds: list[float]) -> Latency:
        return Latency.of([t for t, ok in zip(seconds, searchable, strict=True) if ok])

    return in_turn[0], {
        "hybrid": Latency.of(in_turn[0]), "fts_or": fts_only(in_turn[1]), "numpy_scan": Latency.of(in_turn[2]),
        "hybrid_block": Latency.of(blocks[0]), "fts_or_block": fts_only(blocks[1]),
        "numpy_scan_block": Latency.of(blocks[2])}


def load_matrix(vault: Vault) -> np.ndarray:
    """Baseline's own float32 copy of every stored embedding (read with plain SQL)."""
    def read(conn: Any) -> np.ndarray:
        blobs = [r[0] for r in conn.execute("SELECT embedding FROM chunks WHERE embedding IS NOT NULL ORDER BY id")]
        width = len(blobs[0]) // 4 if blobs else NO_MODEL_DIM
        return np.frombuffer(b"".join(blobs), dtype="<f4").reshape(-1, width)

    return vault.read(read)


def services(vault: Vault, vectors: dict[str, np.ndarray], model_name: str,
             ) -> tuple[SearchService, SearchService, VectorIndex, float]:
    """The hybrid and keyword-only services over one index; returns the index load time too."""
    index = VectorIndex(vault, model=model_name)
    t0 = time.perf_counter()
    index.load()
    load_s = time.perf_counter() - t0
    hybrid = SearchService(vault, PrecomputedEmbedder(vectors, model_name), index)  # type: ignore[arg-type]
    return hybrid, SearchService(vault, None, index), index, load_s


def cases_for(texts: Sequence[str], projects: Sequence[str]) -> list[tuple[str, FactFilter]]:
    return [(t, FactFilter(project=projects[i % len(projects)])) for i, t in enumerate(texts)]



def stages(service: SearchService, cases: Sequence[tuple[str, FactFilter]], vectors: dict[str, np.ndarray],
           ) -> dict[str, Latency]:
    """Where a hybrid query's time goes: each step of ``SearchService.search`` timed on its own."""
    from vodou_desktop.vault import query as q

    pool = 50
    vault, index = service.vault, service.index

    def fts(mode: str) -> Callable[[tuple[str, FactFilter]], object]:
        def run(case: tuple[str, FactFilter]) -> object:
            expr = keyword.match_expression(case[0], mode)
            return vault.read(lambda conn: q.keyword_search(conn, expr, case[1], pool)) if expr else None
        return run

    tops = {t: index.top(vectors[t], pool * 4) for t, _ in cases}
    hits = {t: [r.fact.id for r in service.search(t, f, k=pool)] for t, f in cases}
    return {
        "fts_and (filtered, top 50)": timed(fts("and"), cases),
        "fts_or (filtered, top 50)": timed(fts("or"), cases),
        "matrix top 200": timed(lambda c: index.top(vectors[c[0]], pool * 4), cases),
        "filter 200 candidate ids": timed(
            lambda c: vault.read(lambda conn: q.allowed_ids(conn, [i for i, _ in tops[c[0]]], c[1])), cases),
        "hydrate the fused ids": timed(
            lambda c: vault.read(lambda conn: q.facts_by_ids(conn, hits[c[0]], c[1])), cases),
    }



def vector_recall(index: VectorIndex, qvecs: Sequence[np.ndarray], k: int = 10) -> float:
    """Mean share of the exact top ``k`` (a full scan of the index's own matrix) that ``index.top``
    returns: 1.0 below the coarse-pass threshold, the coarse pass's recall above it."""
    n = len(index)
    mat, ids = index._mat[:n], index._ids[:n]
    shares = []
    for qv in qvecs:
        scores = mat @ qv
        exact = set(ids[np.argpartition(-scores, k - 1)[:k]].tolist())
        shares.append(len(exact & {i for i, _ in index.top(qv, k)}) / k)
    return float(np.mean(shares)) if shares else 1.0


RAW_BATCH_SIZES = (32, 64, 128)  # the raw embedder is tried at each; its best (least CPU) is the baseline


def _thread_cpu() -> dict[str, float]:
    """CPU seconds of each live thread of this process by thread name (Linux; {} elsewhere); threads
    that Python did not start (the model's worker threads) are summed as ``model workers``."""
    import os
    import threading

    names = {t.native_id: t.name for t in threading.enumerate()}
    out: dict[str, float] = {}
    try:
        tids = os.listdir("/proc/self/task")
        tick = os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, AttributeError):
        return out
    for tid in tids:
        try:
            with open(f"/proc/self/task/{tid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        name = names.get(int(tid), "model workers")
        out[name] = out.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / tick
    return out


def _cpu_split(before: dict[str, float], after: dict[str, float], n: int) -> dict[str, float]:
    """CPU ms per fact by thread between two ``_thread_cpu`` readings."""
    return {k: round((after.get(k, 0.0) - before.get(k, 0.0)) / n * 1000, 2)
            for k in sorted(after) if after.get(k, 0.0) - before.get(k, 0.0) > 0}


def _raw(embedder: Any, texts: Sequence[str], batch_size: int) -> tuple[float, float]:
    """Wall and CPU seconds of ``embedder.encode`` alone over ``texts`` (one call: it orders them by
    length and pads each batch to its longest, so this is the embedder at its best for them)."""
    t0, c0 = time.perf_counter(), time.process_time()
    embedder.encode(list(texts), batch_size=batch_size)
    return time.perf_counter() - t0, time.process_time() - c0


def _wait_embedded(vault: Vault, filler: Any) -> None:
    """Until no chunk lacks its vector and the backfill thread has finished (grouping included).
    Polls every 50 ms (a count over a partial index): its own CPU is far below 1 % of the figure."""
    from vodou_desktop.vault import query as q

    while vault.read(q.count_unembedded):
        time.sleep(0.05)
    filler.idle.wait(120)


def ingest_rates(vault: Vault, embedder: Any, texts: Sequence[str],
                 import_texts: Sequence[str] = ()) -> dict[str, Any]:
    """Ingest with embedding through the app's own paths, against the raw embedder on the same texts.

    The app's paths, into ``vault`` as it is (its size sets the cost of on-write grouping), with the
    ``Backfiller`` thread embedding what arrives and grouping near-duplicates through the vector
    index (``Runtime`` wires it the same way):
    - ``remember``: one ``remember`` per fact, each its own transaction (the bridge, the CLI, MCP);
    - ``import`` (when ``import_texts`` are given): a Claude export of those messages, ten per
      conversation, through ``import_export`` (one transaction per conversation; each message kept whole,
      and the sentences the extraction judges durable beside it).
    A rate is facts per second from the first write until the last fact has its vector and its group.
    The raw rate is ``embedder.encode`` alone over the same texts (the facts stored, for the import)
    in one call, at each of ``RAW_BATCH_SIZES``; the batch size with the least CPU is the baseline,
    measured before and after the app path (the mean of both; twice after, for the import). The app
    path uses the embedder's own default batch size. Every figure is given in wall-clock and in CPU
    seconds of this process (all threads): on a shared machine wall-clock swings with other work,
    while CPU per fact says what the pipeline adds to the embedding itself.
    """
    from vodou_desktop.ingest.dedupe import group_via_index
    from vodou_desktop.ingest.remember import Origin, remember
    from vodou_desktop.search.backfill import Backfiller

    n = len(texts)
    tried = {b: _raw(embedder, texts, b) for b in RAW_BATCH_SIZES}
    best = min(tried, key=lambda b: tried[b][1])
    index = VectorIndex(vault, model=embedder.model_id)
    index.load()

    def group(ids: list[int]) -> None:
        group_via_index(vault, index, ids)

    filler = Backfiller(vault, embedder, embedded=group).start()
    try:
        filler.idle.wait(60)
        threads0, t0, c0 = _thread_cpu(), time.perf_counter(), time.process_time()
        for text in texts:
            remember(vault, text, Origin(kind="bench", tool="bench"))
        written = time.perf_counter() - t0
        _wait_embedded(vault, filler)
        wall, cpu, threads = time.perf_counter() - t0, time.process_time() - c0, _thread_cpu()
        imported = _import_path(vault, filler, import_texts) if import_texts else None
    finally:
        filler.stop()
        index.close()
    raw_after = _raw(embedder, texts, best)
    raw_wall, raw_cpu = (tried[best][0] + raw_after[0]) / 2, (tried[best][1] + raw_after[1]) / 2
    out: dict[str, Any] = {
        "facts": n, "raw_batch_size": best, "raw_embedder_per_s": round(n / raw_wall, 1),
        "raw_before_per_s": round(n / tried[best][0], 1), "raw_after_per_s": round(n / raw_after[0], 1),
        "raw_cpu_ms_by_batch_size": {b: round(c / n * 1000, 2) for b, (_, c) in tried.items()},
        "ingest_with_embedding_per_s": round(n / wall, 1), "write_only_per_s": round(n / written, 1),
        "ratio": round(raw_wall / wall, 3), "raw_cpu_ms_per_fact": round(raw_cpu / n * 1000, 2),
        "ingest_cpu_ms_per_fact": round(cpu / n * 1000, 2), "cpu_ratio": round(raw_cpu / cpu, 3),
        "ingest_cpu_ms_by_thread": _cpu_split(threads0, threads, n)}
    if imported is not None:
        stored, i_wall, i_cpu, i_threads, i_written = imported
        m = len(stored)
        first, second = _raw(embedder, stored, best), _raw(embedder, stored, best)
        raw_i = ((first[0] + second[0]) / 2, (first[1] + second[1]) / 2)
        out["import"] = {
            "messages": len(import_texts), "facts": m, "ingest_with_embedding_per_s": round(m / i_wall, 1),
            "raw_embedder_per_s": round(m / raw_i[0], 1), "ratio": round(raw_i[0] / i_wall, 3),
            "raw_cpu_ms_per_fact": round(raw_i[1] / m * 1000, 2), "ingest_cpu_ms_per_fact": round(i_cpu / m * 1000, 2),
            "cpu_ratio": round(raw_i[1] / i_cpu, 3), "ingest_cpu_ms_by_thread": i_threads,
            "write_only_per_s": round(m / i_written, 1)}
    return out


def _import_path(vault: Vault, filler: Any, messages: Sequence[str]
                 ) -> tuple[list[str], float, float, dict[str, float], float]:
    """A Claude export of ``messages`` (ten per conversation) imported with the backfill thread
    running: (the facts' texts, wall seconds, CPU seconds, CPU ms per fact by thread, wall seconds
    of the import's writes alone)."""
    import json
    import tempfile
    from functools import partial
    from pathlib import Path

    from vodou_desktop.ingest.importer import import_export
    from vodou_desktop.vault import ALL_PROJECTS
    from vodou_desktop.vault import query as q

    convs = [{"uuid": f"bench-{i}", "name": f"bench conversation {i}", "created_at": "2024-05-01T10:00:00Z",
              "chat_messages": [m for j, text in enumerate(messages[i : i + 10]) for m in (
                  {"uuid": f"bench-{i}-{j}", "sender": "human", "text": text,
                   "created_at": f"2024-05-01T10:{j:02d}:00Z"},
                  {"uuid": f"bench-{i}-{j}-r", "sender": "assistant", "text": "Noted.",
                   "created_at": f"2024-05-01T10:{j:02d}:30Z"})]}
             for i in range(0, len(messages), 10)]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "conversations.json"
        path.write_text(json.dumps(convs))
        threads0, t0, c0 = _thread_cpu(), time.perf_counter(), time.process_time()
        report = import_export(vault, path, "claude")
        written = time.perf_counter() - t0
        _wait_embedded(vault, filler)
        wall, cpu, threads = time.perf_counter() - t0, time.process_time() - c0, _thread_cpu()
    facts = vault.read(partial(q.facts_by_ids, ids=report.fact_ids, f=FactFilter(project=ALL_PROJECTS)))
    return [f.text for f in facts], wall, cpu, _cpu_split(threads0, threads, max(1, len(facts))), written


def end_to_end(vault: Vault, embedder: Any, index: VectorIndex, cases: Sequence[tuple[str, FactFilter]],
               matrix: np.ndarray) -> dict[str, Latency]:
    """Search as a person gets it: the query embedded by the real model inside the timed call.

    ``cold``: our hybrid search, every query new to the query-vector cache (cleared first);
    ``cached``: the same queries again (a repeated search, or a probe of the same page);
    ``baseline_cold``: the same work done plainly for the same queries, one step after the other —
    the query embedded by the same model (cache cleared first), a plain FTS5 ``OR`` bm25 top 10
    and a numpy full-matrix top 10 — so the ratio of the two compares like with like."""
    service = SearchService(vault, embedder, index)
    distinct = list({text: filt for text, filt in reversed(cases)}.items())[::-1]  # each text once, first filter

    def ours(case: tuple[str, FactFilter]) -> object:
        return service.search(case[0], case[1], k=10)

    def baseline(case: tuple[str, FactFilter]) -> object:
        qvec = embedder.encode_one(case[0])
        expr = keyword.match_expression(case[0], "or")
        if expr:
            vault.read(lambda conn: conn.execute(PLAIN_OR_SQL, (expr,)).fetchall())
        scores = matrix @ qvec
        top = np.argpartition(-scores, 9)[:10]
        return top[np.argsort(-scores[top])]

    out = {}
    for name, fn in (("cold", ours), ("baseline_cold", baseline)):
        embedder.clear_query_cache()
        for text, filt in cases[:3]:  # warm-up on queries outside the measured set
            fn((text + " warm", filt))
        out[name] = Latency.of(samples(fn, distinct, warmup=0))
    out["cached"] = timed(ours, cases)
    return out
