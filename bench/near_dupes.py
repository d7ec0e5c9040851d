"""``python -m bench.near_dupes --cache FILE``: does on-write grouping's near-duplicate lookup
(``VectorIndex.near_many``) find every stored fact that passes the ``same_fact`` gate?

The store: real all-MiniLM-L6-v2 vectors of real sentences (the ``bench.index_compare`` cache: half
conversational memory bullets of the corpus generator, half docstring sentences), ``--size`` of them.
The queries, two kinds, each a fact as grouping sees it:
- ``stored``: sentences of the store itself (their near-duplicates are whatever the store holds);
- ``edited``: copies of stored sentences with the edits a second copy of a fact gets (case,
  punctuation, a lead-in, a dropped, swapped or replaced word), embedded by the real model.
Truth: an exact scan of every stored vector, every pair passing the gate (cosine >= 0.88 and token
Jaccard >= 0.40). Each lookup is scored by its recall of those pairs (and of all pairs with a cosine
>= 0.88, gate or not), by the queries that have such a pair but find none of them (a fact that would
not join its group), and timed per fact in batches of 32 like grouping: the sketch (no cells), the
cells at several ``nprobe``, and ``top_many`` (what grouping called before). Prints; never asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from bench.index_compare import _NoVault
from vodou_desktop.ingest.dedupe import COSINE_MIN, NEIGHBOURS, jaccard
from vodou_desktop.search import vectors

UNCAPPED = 100_000  # near_many is asked for every row above the cosine (grouping keeps the best 21)
BATCH = 32  # new facts per grouping call (the backfill hands over up to 128; top_many passes 32 at once)
LEADS = ("Note: ", "Remember that ", "FYI ", "Also, ")
SWAPS = {"meeting": "call", "Tuesday": "Wednesday", "is": "was", "the": "a", "will": "should",
         "prefer": "like", "use": "used", "every": "each", "before": "by"}


def edited(text: str, rng: np.random.Generator) -> str:
    """One plausible second copy of ``text``."""
    words = text.split()
    kind = int(rng.integers(7))
    if kind == 0:
        return text.lower()
    if kind == 1:
        return text.rstrip(".!?") + ("!" if text.endswith(".") else ".")
    if kind == 2:
        return LEADS[int(rng.integers(len(LEADS)))] + text[:1].lower() + text[1:]
    if kind == 3 and len(words) > 4:
        del words[int(rng.integers(1, len(words) - 1))]
    elif kind == 4 and len(words) > 3:
        i = int(rng.integers(len(words) - 1))
        words[i], words[i + 1] = words[i + 1], words[i]
    elif kind == 5:
        words = [SWAPS.get(w, w) for w in words]
    else:
        words.append("again" if len(words) % 2 else "too")
    return " ".join(words)


def index_of(mat: np.ndarray, cells: bool) -> Any:
    """``VectorIndex`` filled directly: with cells (forced at this size) or without (sketch)."""
    saved = vectors.COARSE_MIN_ROWS
    vectors.COARSE_MIN_ROWS = min(saved, len(mat)) if cells else max(saved, len(mat) + 1)
    index = vectors.VectorIndex(_NoVault(), dim=mat.shape[1])  # type: ignore[arg-type]
    index.sync = lambda: None  # type: ignore[method-assign]
    with index._lock:
        index._append([(i, mat[i].astype("<f4").tobytes()) for i in range(len(mat))])
    index.fit_if_due()
    vectors.COARSE_MIN_ROWS = max(saved, len(mat) + 1)  # near_many reads it: the plain index stays exact
    assert index.coarse == cells
    return index


def truth(mat: np.ndarray, texts: list[str], qvecs: np.ndarray, qtexts: list[str], skip: list[int]
          ) -> tuple[list[set[int]], list[set[int]]]:
    """Per query: the stored rows passing the gate, and those with a cosine >= COSINE_MIN (exact scan)."""
    gate, close = [], []
    for start in range(0, len(qvecs), 256):
        scores = mat @ qvecs[start : start + 256].T
        for j in range(scores.shape[1]):
            i = start + j
            near = {int(r) for r in np.flatnonzero(scores[:, j] >= COSINE_MIN)} - {skip[i]}
            close.append(near)
            gate.append({r for r in near if jaccard(qtexts[i], texts[r]) >= 0.40})
    return gate, close


def measure(lookup: Callable[[np.ndarray], list[list[tuple[int, float]]]], qvecs: np.ndarray,
            gate: list[set[int]], close: list[set[int]], skip: list[int]) -> dict[str, float]:
    lookup(qvecs[:BATCH])  # warm (the sketch is built at the first call)
    found: list[set[int]] = []
    times = []
    for start in range(0, len(qvecs), BATCH):
        t0 = time.perf_counter()
        got = lookup(qvecs[start : start + BATCH])
        times.append((time.perf_counter() - t0) / len(got))
        found += [{i for i, s in hits if s >= COSINE_MIN} for hits in got]
    found = [f - {s} for f, s in zip(found, skip, strict=True)]
    pairs = sum(len(g) for g in gate)
    hit = sum(len(g & f) for g, f in zip(gate, found, strict=True))
    cpairs = sum(len(c) for c in close)
    chit = sum(len(c & f) for c, f in zip(close, found, strict=True))
    ms = np.asarray(times) * 1000
    with_pair = [j for j, g in enumerate(gate) if g]
    alone = sum(1 for j in with_pair if not gate[j] & found[j])  # would not join any group it belongs to
    return {"with_pair": len(with_pair), "alone": alone,
            "gate_pairs": pairs, "gate_recall": hit / max(pairs, 1), "missed": pairs - hit,
            "cos_pairs": cpairs, "cos_recall": chit / max(cpairs, 1),
            "ms_per_fact_p50": float(np.percentile(ms, 50)), "ms_per_fact_mean": float(ms.mean())}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.near_dupes", description=__doc__.split("\n")[0])
    p.add_argument("--cache", type=Path, required=True,
                   help="bench.index_compare's vector cache (FILE.texts.json beside it)")
    p.add_argument("--size", type=int, default=100_000)
    p.add_argument("--stored-queries", type=int, default=3_000)
    p.add_argument("--edited-queries", type=int, default=2_000)
    p.add_argument("--probes", default="1,2,4,8")
    args = p.parse_args(argv)
    from vodou_desktop.ingest.dedupe import one_blas_thread

    texts: list[str] = json.loads(args.cache.with_name(args.cache.name + ".texts.json").read_text("utf-8"))
    mat = np.fromfile(args.cache, dtype="<f4").reshape(-1, 384)[: args.size]
    texts = texts[: len(mat)]
    rng = np.random.default_rng(1)
    stored = rng.choice(len(mat), args.stored_queries, replace=False).tolist()
    base = rng.choice(len(mat), args.edited_queries, replace=False).tolist()
    copies = [edited(texts[i], rng) for i in base]
    from bench.search import load_model

    t0 = time.perf_counter()
    cvecs = np.asarray(load_model().encode(copies), dtype=np.float32)
    print(f"# near-duplicate lookup, {len(mat):,} real vectors, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())};"
          f" {len(copies)} copies embedded in {time.perf_counter() - t0:.0f} s", flush=True)
    kinds = {"stored": (mat[stored], [texts[i] for i in stored], stored),
             "edited": (cvecs, copies, [-1] * len(copies))}
    truths = {k: truth(mat, texts, qv, qt, sk) for k, (qv, qt, sk) in kinds.items()}
    plain, cells = index_of(mat, cells=False), index_of(mat, cells=True)
    print(f"cells: {len(cells._cells.centroids)}; sketch {vectors.SKETCH_DIM}-d; batches of {BATCH}")
    lookups: dict[str, Callable[[np.ndarray], list[list[tuple[int, float]]]]] = {
        "top_many 21 (capped), exact scan (before, < 150k)": partial(plain.top_many, n=NEIGHBOURS + 1),
        f"top_many 21 (capped), cells nprobe {vectors.NPROBE}+ (before, >= 150k)":
            partial(cells.top_many, n=NEIGHBOURS + 1),
        "near_many, sketch (no cells)": partial(plain.near_many, min_score=COSINE_MIN, limit=UNCAPPED),
    }
    for n in (int(x) for x in args.probes.split(",")):
        lookups[f"near_many, cells nprobe {n}"] = partial(cells.near_many, min_score=COSINE_MIN, limit=UNCAPPED,
                                                          nprobe=n)
    print("| lookup | queries | pairs passing the gate | gate recall | missed | queries with such a pair: none found"
          " | pairs cos >= 0.88 | their recall | ms per fact p50 / mean | load |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    with one_blas_thread():
        for name, lookup in lookups.items():
            for kind, (qv, _, sk) in kinds.items():
                r = measure(lookup, qv, *truths[kind], sk)
                print(f"| {name} | {kind} {len(qv):,} | {r['gate_pairs']:,} | {r['gate_recall']:.4f} | {r['missed']}"
                      f" | {r['alone']} of {r['with_pair']:,}"
                      f" | {r['cos_pairs']:,} | {r['cos_recall']:.4f} | {r['ms_per_fact_p50']:.3f} /"
                      f" {r['ms_per_fact_mean']:.3f} | {os.getloadavg()[0]:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
