"""``python -m bench.index_compare``: the vector index's coarse pass against HNSW libraries, on real
all-MiniLM-L6-v2 vectors.

Sentences: half from the benchmark corpus generator (conversational memory bullets), half real
prose — the docstrings of the Python standard library installed on this machine, split into
sentences — deduplicated. Every sentence is embedded by the real model (nothing synthetic), in
batches, with a cache file (``--cache``) so an interrupted run resumes. Queries are held-out
sentences of both kinds plus the search benchmark's queries, embedded by the same model.

Compared at the same size, top 10 and top 200 (the hybrid search asks the index for 200
candidates before the vault's query builder filters them), against an exact scan:
- ``exact``: the full float32 product (what ``VectorIndex`` does below its coarse threshold);
- ``coarse``: ``VectorIndex``'s coarse pass (96-dimension projection, exact re-rank of 2,000),
  forced on at this size;
- ``usearch`` HNSW (cosine, f32; connectivity 16; expansion 64 and 128);
- ``faiss`` HNSWFlat (inner product; M 32; efSearch 64 and 128), if faiss-cpu is installed.
Prints recall@10 (share of the exact top 10), recall@200, p50/p95 latency of one query, build
time and memory. Never asserts.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import sys
import sysconfig
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from bench.corpus import chunks, queries

SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


def stdlib_sentences(limit: int) -> list[str]:
    """Real English prose: sentences of the standard library's docstrings (20-300 characters)."""
    root = Path(sysconfig.get_paths()["stdlib"])
    out: list[str] = []
    seen: set[str] = set()
    for path in sorted(root.rglob("*.py")):
        if "test" in path.parts or "idlelib" in path.parts:
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8", errors="ignore"))
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            doc = ast.get_docstring(node)
            if not doc:
                continue
            for para in re.split(r"\n\s*\n", doc):
                text = " ".join(para.split())
                for sentence in SENTENCE.split(text):
                    if 20 <= len(sentence) <= 300 and sentence[0].isalpha() and sentence not in seen:
                        seen.add(sentence)
                        out.append(sentence)
                        if len(out) >= limit:
                            return out
    return out


def corpus_sentences(limit: int, seed: int) -> list[str]:
    seen: dict[str, None] = {}
    for chunk in chunks(limit * 2, seed=seed):
        seen.setdefault(chunk.text)
        if len(seen) >= limit:
            break
    return list(seen)


def sentences(n: int) -> list[str]:
    """Real and generated sentences interleaved, so that any prefix (a cut-short run) holds both."""
    real = stdlib_sentences(n // 2)
    made = corpus_sentences(n - len(real), seed=101)
    mixed: list[str] = []
    for i in range(max(len(real), len(made))):
        mixed += [t for t in (real[i] if i < len(real) else None, made[i] if i < len(made) else None) if t]
    return list(dict.fromkeys(mixed))[:n]


def embed_cached(embedder: Any, texts: list[str], cache: Path, batch: int = 512) -> np.ndarray:
    """Vectors for ``texts``, resuming from ``cache`` (a .npy of the first rows already done)."""
    done = np.load(cache) if cache.exists() else np.zeros((0, 0), dtype=np.float32)
    parts = [done] if len(done) else []
    start = len(done)
    t0 = time.perf_counter()
    for i in range(start, len(texts), batch):
        parts.append(embedder.encode(texts[i : i + batch], batch_size=64))
        have = np.concatenate(parts)
        if (i // batch) % 4 == 0 or i + batch >= len(texts):
            np.save(cache, have)
            rate = (len(have) - start) / (time.perf_counter() - t0)
            print(f"  embedded {len(have):,}/{len(texts):,} ({rate:.0f}/s, load {os.getloadavg()[0]:.1f})",
                  file=sys.stderr, flush=True)
        parts = [have]
    return np.concatenate(parts)[: len(texts)] if parts else done


def exact_top(mat: np.ndarray, q: np.ndarray, k: int) -> np.ndarray:
    scores = mat @ q
    top = np.argpartition(-scores, k - 1)[:k]
    return top[np.argsort(-scores[top])]


def measure(name: str, search: Callable[[np.ndarray, int], np.ndarray], qvecs: np.ndarray,
            truth10: list[set[int]], truth200: list[set[int]]) -> dict[str, Any]:
    for qv in qvecs[:5]:
        search(qv, 10)
    times, r10, r200 = [], [], []
    for qv, t10 in zip(qvecs, truth10, strict=True):
        t0 = time.perf_counter()
        got = search(qv, 10)
        times.append(time.perf_counter() - t0)
        r10.append(len(t10 & {int(i) for i in got}) / 10)
    times200 = []
    for qv, t200 in zip(qvecs, truth200, strict=True):
        t0 = time.perf_counter()
        got = search(qv, 200)
        times200.append(time.perf_counter() - t0)
        r200.append(len(t200 & {int(i) for i in got}) / 200)
    ms, ms200 = np.asarray(times) * 1000, np.asarray(times200) * 1000
    return {"name": name, "recall@10": round(float(np.mean(r10)), 4), "recall@200": round(float(np.mean(r200)), 4),
            "p50_ms": round(float(np.percentile(ms, 50)), 3), "p95_ms": round(float(np.percentile(ms, 95)), 3),
            "top200_p50_ms": round(float(np.percentile(ms200, 50)), 3),
            "top200_p95_ms": round(float(np.percentile(ms200, 95)), 3)}


class _NoVault:
    """What ``VectorIndex`` needs of a vault when it is filled directly (no change events)."""

    def subscribe(self, listener: object) -> Callable[[], None]:
        return lambda: None


def coarse_index(mat: np.ndarray) -> Any:
    from vodou_desktop.search import vectors

    vectors.COARSE_MIN_ROWS = min(vectors.COARSE_MIN_ROWS, len(mat))  # force the coarse pass at this size
    index = vectors.VectorIndex(_NoVault(), dim=mat.shape[1])  # type: ignore[arg-type]
    index._vault = None  # type: ignore[assignment]
    index.sync = lambda: None  # type: ignore[method-assign]
    with index._lock:
        index._append([(i, mat[i].astype("<f4").tobytes()) for i in range(len(mat))], fit=True)
    return index


def variants(mat: np.ndarray) -> Iterator[tuple[str, Callable[[np.ndarray, int], np.ndarray], dict[str, Any]]]:
    yield "exact (numpy full scan)", lambda q, k: exact_top(mat, q, k), {"build_s": 0.0}

    t0 = time.perf_counter()
    coarse = coarse_index(mat)
    info = {"build_s": round(time.perf_counter() - t0, 2)}
    yield "coarse pass (VectorIndex, 96-d projection + re-rank 2,000)", \
        lambda q, k: np.asarray([i for i, _ in coarse.top(q, k)]), info

    try:
        from usearch.index import Index
    except ImportError:
        print("usearch is not installed: skipped", file=sys.stderr)
    else:
        t0 = time.perf_counter()
        index = Index(ndim=mat.shape[1], metric="cos", dtype="f32", connectivity=16, expansion_add=128)
        index.add(np.arange(len(mat)), mat, threads=2)
        info = {"build_s": round(time.perf_counter() - t0, 2), "memory_mb": round(index.memory_usage / 2**20, 1)}
        for ef in (64, 128, 256):
            def run(q: np.ndarray, k: int, ef: int = ef) -> np.ndarray:
                index.expansion_search = max(ef, k)
                return np.asarray(index.search(q, k, threads=1).keys)
            yield f"usearch HNSW f32 (M 16, ef {ef})", run, info

    try:
        import faiss
    except ImportError:
        print("faiss-cpu is not installed: skipped", file=sys.stderr)
    else:
        faiss.omp_set_num_threads(2)
        t0 = time.perf_counter()
        hnsw = faiss.IndexHNSWFlat(mat.shape[1], 32, faiss.METRIC_INNER_PRODUCT)
        hnsw.hnsw.efConstruction = 128
        hnsw.add(mat)
        info = {"build_s": round(time.perf_counter() - t0, 2)}
        faiss.omp_set_num_threads(1)
        for ef in (64, 128, 256):
            def frun(q: np.ndarray, k: int, ef: int = ef) -> np.ndarray:
                hnsw.hnsw.efSearch = max(ef, k)
                return hnsw.search(q.reshape(1, -1), k)[1][0]
            yield f"faiss HNSWFlat (M 32, efSearch {ef})", frun, info


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.index_compare", description=__doc__.split("\n")[0])
    p.add_argument("--size", type=int, default=100_000, help="sentences in the index")
    p.add_argument("--queries", type=int, default=300)
    p.add_argument("--cache", type=Path, default=Path("index-compare-vectors.npy"),
                   help="where embedded vectors are kept between runs")
    p.add_argument("--embed-only", action="store_true", help="embed (and cache) the sentences, then stop")
    p.add_argument("--threads", type=int, default=0, help="torch threads while embedding (default: torch's)")
    p.add_argument("--use-cached", action="store_true",
                   help="compare over the vectors already in --cache (an embedding run cut short)")
    args = p.parse_args(argv)

    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    from vodou_desktop.search.embedder import Embedder, EmbedderState

    print(f"# vector index comparison, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}", flush=True)
    model = Embedder("default").start()
    if model.wait(600) is not EmbedderState.READY:
        raise SystemExit(f"the model did not load: {model.error}")
    held_out = args.queries // 3
    texts = sentences(args.size + 2 * held_out)
    query_texts = texts[-2 * held_out:] + queries(args.queries - 2 * held_out, seed=23)
    base = texts[: len(texts) - 2 * held_out]
    if args.use_cached:
        mat = np.load(args.cache)
        base = base[: len(mat)]
    else:
        mat = embed_cached(model, base, args.cache)
    if args.embed_only:
        return 0
    qvecs = model.encode(query_texts)
    print(f"index: {len(mat):,} real MiniLM vectors ({len(base):,} sentences: ~half standard-library"
          f" docstring sentences, half corpus bullets); {len(qvecs)} queries; load average"
          f" {os.getloadavg()[0]:.2f} (2 cores, shared)", flush=True)
    truth10 = [set(exact_top(mat, qv, 10).tolist()) for qv in qvecs]
    truth200 = [set(exact_top(mat, qv, 200).tolist()) for qv in qvecs]
    for name, search, info in variants(mat):
        r = measure(name, search, qvecs, truth10, truth200)
        extra = ", ".join(f"{k} {v}" for k, v in info.items())
        print(f"{name:<60} recall@10 {r['recall@10']:.3f}  recall@200 {r['recall@200']:.3f}  "
              f"top10 p50 {r['p50_ms']:7.2f} ms p95 {r['p95_ms']:7.2f} ms  top200 p50 {r['top200_p50_ms']:7.2f} ms"
              f" p95 {r['top200_p95_ms']:7.2f} ms  ({extra})", flush=True)
    print(f"load average at end {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
