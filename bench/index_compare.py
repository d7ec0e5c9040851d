"""``python -m bench.index_compare``: the vector index's coarse stage against HNSW and IVF libraries, on
real all-MiniLM-L6-v2 vectors.

Sentences: half from the benchmark corpus generator (conversational memory bullets), half real
prose — the docstrings of the Python installation on this machine (standard library and the
packages installed beside it), split into sentences — deduplicated. Every sentence is embedded by
the real model (nothing synthetic), in batches, appended to a cache file (``--cache``, raw float32;
the sentence list is kept beside it as ``FILE.texts.json``) so that an interrupted run resumes and
``--use-cached`` compares over the prefix already embedded (``--size`` smaller than the cache takes
its first rows); ``--workers 2`` embeds in two one-thread processes, each over its own half (into its
own part file, resumable the same way), joined into the cache once both are done. Queries are held-out
sentences plus the search benchmark's queries, embedded by the same model. The standard library gives
~150,000 sentences here: past twice that, the rest are corpus bullets.

Compared at the same size against an exact scan, for k = 10, 200, 400 (the hybrid's first ask: 4 x
its pool of 100) and 3,200 (its first widening, x 8, when the vault's filter rejects too many):
- ``exact``: the full float32 product (what ``VectorIndex`` does below its coarse threshold);
- ``projection``: the coarse pass ``VectorIndex`` had before (96-dimension projection, exact
  re-rank of 2,000), re-implemented here;
- ``cells``: ``VectorIndex``'s cells (spherical k-means, ~sqrt(n) cells, the best ``nprobe`` scored
  exactly), forced on at this size;
- ``usearch`` HNSW (cosine, f32; connectivity 16; expansion 64, 128, 256; a k above it widens it);
- ``faiss`` HNSWFlat (inner product; M 32; efSearch 64, 128, 256) and IVFFlat (as many cells as
  ours; nprobe 16-96), if faiss-cpu is installed.
Prints a markdown table: recall@k (share of the exact top k), p50/p95 latency of one query per k,
build time (and for HNSW the time to restore it from bytes), memory, load average. Never asserts.
"""

from __future__ import annotations

import argparse
import ast
import json
import math
import os
import re
import sys
import sysconfig
import time
from collections.abc import Callable, Iterator
from functools import partial
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


def embed_cached(embedder: Any, texts: list[str], cache: Path, batch: int = 2048) -> np.ndarray:
    """Vectors for ``texts``, resuming from ``cache``: raw little-endian float32 rows of the first texts
    already done, appended batch by batch (an interrupted run loses at most one batch)."""
    dim = embedder.dim or len(embedder.encode(["width"])[0])
    done = np.fromfile(cache, dtype="<f4") if cache.exists() else np.zeros(0, dtype="<f4")
    start = len(done) // dim
    if len(done) % dim:  # a batch cut short while being written
        done = done[: start * dim]
        with cache.open("r+b") as f:
            f.truncate(start * dim * 4)
    t0 = time.perf_counter()
    with cache.open("ab") as out:
        for i in range(start, len(texts), batch):
            vecs = embedder.encode(texts[i : i + batch], batch_size=64)
            out.write(np.ascontiguousarray(vecs, dtype="<f4").tobytes())
            out.flush()
            have = min(i + batch, len(texts))
            rate = (have - start) / (time.perf_counter() - t0)
            print(f"  embedded {have:,}/{len(texts):,} ({rate:.0f}/s, load {os.getloadavg()[0]:.1f},"
                  f" {time.strftime('%H:%M:%S', time.gmtime())})", file=sys.stderr, flush=True)
    return np.fromfile(cache, dtype="<f4").reshape(-1, dim)[: len(texts)]


def _slice(total: int, i: int, n: int) -> tuple[int, int]:
    return total * i // n, total * (i + 1) // n


def _part_file(cache: Path, i: int, n: int) -> Path:
    return cache.with_name(f"{cache.name}.part{i}of{n}")


def embed_in_parts(args: argparse.Namespace, dim: int, total: int) -> np.ndarray:
    """The sentences' vectors embedded by ``args.workers`` child processes (one torch thread each), each
    over its own contiguous slice into its own part file (resumable like ``embed_cached``), then joined
    in order into ``args.cache``. A cache that already holds every row is used as it is."""
    import subprocess

    have = args.cache.stat().st_size // (4 * dim) if args.cache.exists() else 0
    if have < total:
        n = args.workers
        cmd = [sys.executable, "-m", "bench.index_compare", "--size", str(args.size), "--queries",
               str(args.queries), "--cache", str(args.cache), "--threads", "1"]
        children = [subprocess.Popen([*cmd, "--part", f"{i}/{n}"]) for i in range(n)]
        if any(child.wait() != 0 for child in children):
            raise SystemExit("an embedding worker failed; run again to resume")
        with args.cache.open("wb") as out:
            for i in range(n):
                part = _part_file(args.cache, i, n)
                lo, hi = _slice(total, i, n)
                if part.stat().st_size != (hi - lo) * 4 * dim:
                    raise SystemExit(f"{part} is incomplete; run again to resume")
                out.write(part.read_bytes())
        for i in range(n):
            _part_file(args.cache, i, n).unlink()
    return np.fromfile(args.cache, dtype="<f4").reshape(-1, dim)[:total]


def cached_texts(n: int, cache: Path) -> list[str]:
    """The sentences, fixed at the first run beside the cache (the rows of the cache follow their order,
    so a resumed run must not see a different list if the installed packages changed)."""
    listing = cache.with_name(cache.name + ".texts.json")
    if listing.exists():
        texts: list[str] = json.loads(listing.read_text(encoding="utf-8"))
        if len(texts) >= n:
            return texts[:n]
    texts = sentences(n)
    listing.write_text(json.dumps(texts), encoding="utf-8")
    return texts


def exact_top(mat: np.ndarray, q: np.ndarray, k: int) -> np.ndarray:
    scores = mat @ q
    top = np.argpartition(-scores, k - 1)[:k]
    return top[np.argsort(-scores[top])]


KS = (10, 200, 400, 3200)  # top 10; the hybrid's pool asks (4 x 100 = 400) and its first widening (x 8)


def measure(search: Callable[[np.ndarray, int], np.ndarray], qvecs: np.ndarray,
            truth: dict[int, list[set[int]]]) -> dict[int, tuple[float, float, float]]:
    """Per k: (recall@k against the exact top k, p50 ms, p95 ms) of one query."""
    for qv in qvecs[:5]:
        search(qv, 10)
    out = {}
    for k in KS:
        times, recall = [], []
        for qv, exact in zip(qvecs, truth[k], strict=True):
            t0 = time.perf_counter()
            got = search(qv, k)
            times.append(time.perf_counter() - t0)
            recall.append(len(exact & {int(i) for i in got}) / k)
        ms = np.asarray(times) * 1000
        out[k] = (float(np.mean(recall)), float(np.percentile(ms, 50)), float(np.percentile(ms, 95)))
    return out


class _NoVault:
    """What ``VectorIndex`` needs of a vault when it is filled directly (no change events)."""

    def subscribe(self, listener: object) -> Callable[[], None]:
        return lambda: None


def cells_index(mat: np.ndarray) -> Any:
    """``VectorIndex`` filled directly and grouped in cells (forced at this size)."""
    from vodou_desktop.search import vectors

    vectors.COARSE_MIN_ROWS = min(vectors.COARSE_MIN_ROWS, len(mat))
    index = vectors.VectorIndex(_NoVault(), dim=mat.shape[1])  # type: ignore[arg-type]
    index.sync = lambda: None  # type: ignore[method-assign]
    with index._lock:
        index._append([(i, mat[i].astype("<f4").tobytes()) for i in range(len(mat))])
    index.fit_if_due()
    assert index.coarse
    return index


class ProjectionPass:
    """The coarse pass ``VectorIndex`` had before the cells (kept here to compare): every row
    projected on the top 96 principal directions of a 20,000-row sample; the best 2,000 rows of the
    projected product are re-scored with the full vectors."""

    def __init__(self, mat: np.ndarray, dim: int = 96, sample: int = 20_000, rerank: int = 2_000) -> None:
        rng = np.random.default_rng(0)
        _, _, vt = np.linalg.svd(mat[rng.choice(len(mat), min(len(mat), sample), replace=False)],
                                 full_matrices=False)
        self.basis = np.ascontiguousarray(vt[:dim].T, dtype=np.float32)
        self.low = np.ascontiguousarray(mat @ self.basis)
        self.mat, self.rerank = mat, rerank

    def search(self, q: np.ndarray, k: int) -> np.ndarray:
        if k >= self.rerank:  # as before: a large request scanned exactly
            return exact_top(self.mat, q, k)
        rows = np.argpartition(-(self.low @ (q @ self.basis)), self.rerank - 1)[: self.rerank]
        scores = self.mat[rows] @ q
        best = np.argpartition(-scores, k - 1)[:k]
        return rows[best[np.argsort(-scores[best])]]


Variant = tuple[str, Callable[[np.ndarray, int], np.ndarray], dict[str, Any]]


def variants(mat: np.ndarray, only: set[str]) -> Iterator[Variant]:
    mb = mat.nbytes / 2**20
    if "exact" in only:
        yield "exact (numpy full scan)", lambda q, k: exact_top(mat, q, k), {"build_s": 0.0, "memory_mb": round(mb)}

    if "projection" in only:
        t0 = time.perf_counter()
        proj = ProjectionPass(mat)
        info = {"build_s": round(time.perf_counter() - t0, 1), "memory_mb": round(mb * 1.25)}
        yield "projection pass (before: 96-d, re-rank 2,000)", proj.search, info
        del proj

    if "cells" in only:
        from vodou_desktop.search import vectors

        t0 = time.perf_counter()
        index = cells_index(mat)
        cells = index._cells
        info = {"build_s": round(time.perf_counter() - t0, 1), "memory_mb": round(mb + cells.centroids.nbytes / 2**20),
                "cells": len(cells.centroids)}
        base = vectors.NPROBE
        def crun(q: np.ndarray, k: int, probe: int) -> np.ndarray:
            vectors.NPROBE = probe
            return np.asarray([i for i, _ in index.top(q, k)])

        for probe in (16, 32, 48, 96):
            yield f"cells (VectorIndex, nprobe {probe}{' = default' if probe == base else ''})", \
                partial(crun, probe=probe), info
        # as many rows per query as the default scans at 1M (latency only: more cells than at 1M)
        at_1m = round(base * math.sqrt(1_000_000 / len(mat)))
        if at_1m < len(index._cells.centroids):
            yield f"cells (nprobe {at_1m}: the rows nprobe {base} scans at 1M)", partial(crun, probe=at_1m), info
        vectors.NPROBE = base
        del index
        # half as many cells, twice as large: the same rows scanned at half the nprobe
        vectors.CELLS_PER_SQRT_N /= 2
        t0 = time.perf_counter()
        index = cells_index(mat)
        info = {**info, "build_s": round(time.perf_counter() - t0, 1), "cells": len(index._cells.centroids)}
        for probe in (8, 16, 24, 48):
            yield f"cells, half as many (nprobe {probe})", partial(crun, probe=probe), info
        vectors.CELLS_PER_SQRT_N *= 2
        vectors.NPROBE = base
        del index

    if "usearch" in only:
        try:
            from usearch.index import Index
        except ImportError:
            print("usearch is not installed: skipped", file=sys.stderr)
        else:
            t0 = time.perf_counter()
            uindex = Index(ndim=mat.shape[1], metric="cos", dtype="f32", connectivity=16, expansion_add=128)
            uindex.add(np.arange(len(mat)), mat, threads=2)
            info = {"build_s": round(time.perf_counter() - t0, 1), "memory_mb": round(uindex.memory_usage / 2**20)}
            blob = uindex.save()
            t0 = time.perf_counter()
            Index.restore(blob)
            info["restore_s"] = round(time.perf_counter() - t0, 2)
            del blob
            for ef in (64, 128, 256):
                def urun(q: np.ndarray, k: int, ef: int = ef) -> np.ndarray:
                    uindex.expansion_search = max(ef, k)
                    return np.asarray(uindex.search(q, k, threads=1).keys)
                yield f"usearch HNSW f32 (M 16, ef {ef})", urun, info
            del uindex

    try:
        import faiss
    except ImportError:
        print("faiss-cpu is not installed: skipped", file=sys.stderr)
        return
    if "faiss-hnsw" in only:
        faiss.omp_set_num_threads(2)
        t0 = time.perf_counter()
        hnsw = faiss.IndexHNSWFlat(mat.shape[1], 32, faiss.METRIC_INNER_PRODUCT)
        hnsw.hnsw.efConstruction = 128
        hnsw.add(mat)
        info = {"build_s": round(time.perf_counter() - t0, 1)}
        blob = faiss.serialize_index(hnsw)
        info["memory_mb"] = round(blob.nbytes / 2**20)
        t0 = time.perf_counter()
        faiss.deserialize_index(blob)
        info["restore_s"] = round(time.perf_counter() - t0, 2)
        del blob
        faiss.omp_set_num_threads(1)
        for ef in (64, 128, 256):
            def hrun(q: np.ndarray, k: int, ef: int = ef) -> np.ndarray:
                hnsw.hnsw.efSearch = max(ef, k)
                return hnsw.search(q.reshape(1, -1), k)[1][0]
            yield f"faiss HNSWFlat (M 32, efSearch {ef})", hrun, info
        del hnsw
    if "faiss-ivf" in only:
        from vodou_desktop.search.vectors import cell_count

        faiss.omp_set_num_threads(2)
        nlist = cell_count(len(mat))
        t0 = time.perf_counter()
        quant = faiss.IndexFlatIP(mat.shape[1])
        ivf = faiss.IndexIVFFlat(quant, mat.shape[1], nlist, faiss.METRIC_INNER_PRODUCT)
        rng = np.random.default_rng(0)
        ivf.train(mat[rng.choice(len(mat), min(len(mat), 40 * nlist), replace=False)])
        ivf.add(mat)
        info = {"build_s": round(time.perf_counter() - t0, 1), "memory_mb": round(mb), "cells": nlist}
        faiss.omp_set_num_threads(1)
        for probe in (16, 32, 48, 96):
            def irun(q: np.ndarray, k: int, probe: int = probe) -> np.ndarray:
                ivf.nprobe = probe
                return ivf.search(q.reshape(1, -1), k)[1][0]
            yield f"faiss IVFFlat (nprobe {probe})", irun, info
        del ivf


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.index_compare", description=__doc__.split("\n")[0])
    p.add_argument("--size", type=int, default=100_000, help="sentences in the index")
    p.add_argument("--queries", type=int, default=300)
    p.add_argument("--cache", type=Path, default=Path("index-compare-vectors.f32"),
                   help="where embedded vectors are kept between runs")
    p.add_argument("--embed-only", action="store_true", help="embed (and cache) the sentences, then stop")
    p.add_argument("--threads", type=int, default=0, help="torch threads while embedding (default: torch's)")
    p.add_argument("--workers", type=int, default=1,
                   help="embed in this many processes of one torch thread each (two on 2 cores embed"
                        " ~1.2 x faster than one process on both), each into its own part file, joined"
                        " into --cache at the end")
    p.add_argument("--part", default="", help=argparse.SUPPRESS)
    p.add_argument("--use-cached", action="store_true",
                   help="compare over the vectors already in --cache (an embedding run cut short)")
    p.add_argument("--only", default="exact,projection,cells,usearch,faiss-hnsw,faiss-ivf",
                   help="comma-separated variants to run")
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
    texts = cached_texts(args.size + 2 * held_out, args.cache)
    query_texts = texts[-2 * held_out:] + queries(args.queries - 2 * held_out, seed=23)
    base = texts[: len(texts) - 2 * held_out]
    if args.part:
        i, n = (int(x) for x in args.part.split("/"))
        lo, hi = _slice(len(base), i, n)
        embed_cached(model, base[lo:hi], _part_file(args.cache, i, n))
        return 0
    if args.use_cached:
        mat = np.fromfile(args.cache, dtype="<f4").reshape(-1, model.dim or 384)[: len(base)]
        base = base[: len(mat)]
    elif args.workers > 1:
        mat = embed_in_parts(args, model.dim or 384, len(base))
    else:
        mat = embed_cached(model, base, args.cache)
    if args.embed_only:
        return 0
    qvecs = model.encode(query_texts)
    print(f"index: {len(mat):,} real MiniLM vectors ({len(base):,} sentences: standard-library docstring"
          f" sentences and corpus bullets interleaved, corpus bullets alone past the standard library's"
          f" ~150,000); {len(qvecs)} queries; load average"
          f" {os.getloadavg()[0]:.2f} (2 cores, shared)", flush=True)
    truth = {k: [set(exact_top(mat, qv, k).tolist()) for qv in qvecs] for k in KS}
    print("| index | " + " | ".join(f"recall@{k}" for k in KS) + " | " +
          " | ".join(f"top {k} p50 / p95 ms" for k in KS) + " | build s | memory MB | other | load |", flush=True)
    print("|---" * (3 + 2 * len(KS) + 2) + "|", flush=True)
    for name, search, info in variants(mat, set(args.only.split(","))):
        r = measure(search, qvecs, truth)
        extra = ", ".join(f"{k} {v}" for k, v in info.items() if k not in ("build_s", "memory_mb"))
        print(f"| {name} | " + " | ".join(f"{r[k][0]:.3f}" for k in KS) + " | " +
              " | ".join(f"{r[k][1]:.2f} / {r[k][2]:.2f}" for k in KS) +
              f" | {info.get('build_s', '')} | {info.get('memory_mb', '')} | {extra} |"
              f" {' '.join(f'{x:.1f}' for x in os.getloadavg())} |", flush=True)
    print(f"load average at end {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
