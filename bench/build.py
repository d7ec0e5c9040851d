"""Building a benchmark vault through the real write path (``Vault.write`` → ``stamp_source`` +
``insert_fact`` + ``set_embeddings``), in large transactions, timing each phase.

Only the first ``real`` chunks are embedded by the real model (it runs at a few hundred chunks/s:
1M chunks would take an hour). Every other chunk gets a synthetic unit vector derived from those
real ones (a real vector plus Gaussian noise, normalised), so the matrix keeps a realistic
structure: clusters around real sentences, realistic cosine spread against real query vectors.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bench.corpus import Chunk, chunks
from vodou_desktop.vault import Change, Vault
from vodou_desktop.vault.facts import insert_fact, set_embeddings
from vodou_desktop.vault.sources import stamp_source

BATCH = 5_000
CHUNKS_PER_SOURCE = 20
NO_MODEL_DIM = 384  # width of the random vectors of a --no-model run (no model to ask)
NOISE = 0.04  # per-dimension sigma: cosine to the real parent ≈ 0.79


@dataclass
class BuildStats:
    size: int
    real_embedded: int = 0
    embed_model: str = "synthetic (no model)"
    seconds_with_embedding: float = 0.0
    seconds_insert: float = 0.0
    seconds_vector_fill: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def rate_without_embedding(self) -> float:
        return (self.size - self.real_embedded) / self.seconds_insert if self.seconds_insert else 0.0

    @property
    def rate_with_embedding(self) -> float:
        return self.real_embedded / self.seconds_with_embedding if self.seconds_with_embedding else 0.0


def _insert_job(items: Sequence[Chunk]):  # type: ignore[no-untyped-def]
    """One write job: a source per ``CHUNKS_PER_SOURCE`` chunks, then the facts."""

    def job(conn: Any, change: Change) -> list[int]:
        ids: list[int] = []
        source_id = 0
        for i, chunk in enumerate(items):
            if i % CHUNKS_PER_SOURCE == 0:
                source_id = stamp_source(conn, change, kind="bench", tier=chunk.tier, tool="bench")
            ids.append(insert_fact(conn, change, text=chunk.text, source_id=source_id, kind=chunk.kind,
                                   project=chunk.project))
        return ids

    return job


def _embed_job(ids: Sequence[int], vectors: np.ndarray, model: str):  # type: ignore[no-untyped-def]
    def job(conn: Any, change: Change) -> int:
        return set_embeddings(conn, change, zip(ids, vectors, strict=True), model=model)

    return job


def _batches(items: list[Chunk], size: int) -> list[list[Chunk]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def build(vault: Vault, size: int, embedder: Any | None, real: int = 2_000, seed: int = 7) -> BuildStats:
    """Fill ``vault`` with ``size`` chunks; embed ``real`` of them with ``embedder`` (when given)."""
    stats = BuildStats(size)
    rng = np.random.default_rng(seed)
    stream = chunks(size, seed)
    head = [next(stream) for _ in range(min(real, size))]
    parents = _embed_head(vault, head, embedder, stats, rng)
    rest = list(stream)
    for batch in _batches(rest, BATCH):
        t0 = time.perf_counter()
        ids = vault.write(_insert_job(batch))
        stats.seconds_insert += time.perf_counter() - t0
        t0 = time.perf_counter()
        # Recorded as the real model's: the index loads one model's vectors, and these stand in for them.
        vault.write(_embed_job(ids, synthetic_vectors(parents, len(ids), rng), stats.embed_model))
        stats.seconds_vector_fill += time.perf_counter() - t0
    return stats


def _embed_head(vault: Vault, head: list[Chunk], embedder: Any | None, stats: BuildStats,
                rng: np.random.Generator) -> np.ndarray:
    """Ingest the first chunks with embedding (real model when given); returns their vectors."""
    t0 = time.perf_counter()
    if embedder is not None:
        vectors = embedder.encode([c.text for c in head])
        stats.embed_model = embedder.model_id
    else:
        vectors = _unit(rng.standard_normal((len(head), NO_MODEL_DIM)).astype(np.float32))
    for start in range(0, len(head), 500):
        part = head[start : start + 500]
        ids = vault.write(_insert_job(part))
        vault.write(_embed_job(ids, vectors[start : start + 500], stats.embed_model))
    stats.seconds_with_embedding = time.perf_counter() - t0
    stats.real_embedded = len(head)
    return vectors


def synthetic_vectors(parents: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` unit vectors, each a random real parent plus noise (see the module docstring)."""
    picks = parents[rng.integers(0, len(parents), n)]
    noise = rng.standard_normal(picks.shape, dtype=np.float32) * NOISE
    return _unit(picks + noise)


def _unit(mat: np.ndarray) -> np.ndarray:
    return (mat / np.linalg.norm(mat, axis=1, keepdims=True)).astype(np.float32)
