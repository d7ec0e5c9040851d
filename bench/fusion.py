"""``python -m bench.fusion``: which fusion ranks a conversational memory set best?

Loads ``bench/data/fusion_set.json`` (hand-written facts about one person and questions with the
ids of the facts that answer them: paraphrases sharing no word, keyword lookups, mixed questions)
into a temp vault through the real write path, embeds it with the real model, and runs every
question through the real ``SearchService`` with each configuration: min-max blend at several
alphas, reciprocal rank fusion (k=60), keyword only, vector only. Prints MRR@10 and recall@5,
overall and per query kind.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.measure import PrecomputedEmbedder, meaning_vectors
from vodou_desktop.search.fusion import RRF_K, FusionParams
from vodou_desktop.search.service import SearchService
from vodou_desktop.search.vectors import VectorIndex
from vodou_desktop.vault import Change, FactFilter, Vault
from vodou_desktop.vault.facts import insert_fact, set_embeddings
from vodou_desktop.vault.sources import stamp_source

DATA = Path(__file__).parent / "data" / "fusion_set.json"
ALPHAS = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7)


@dataclass(frozen=True)
class Config:
    name: str
    alpha: float | None  # None: keyword only (embedder off)
    fusion: str = "minmax"


CONFIGS = (
    [Config(f"minmax alpha={a}", a) for a in ALPHAS]
    + [Config(f"rrf k={RRF_K}", 0.5, "rrf"), Config("keyword only", None), Config("vector only", 0.0)]
)


def load_set(path: Path = DATA) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def fill(vault: Vault, facts: Sequence[dict[str, Any]], embedder: Any) -> dict[int, int]:
    """Write the facts (and their real embeddings); returns set id → vault id."""
    vectors = embedder.encode([f["text"] for f in facts])

    def job(conn: Any, change: Change) -> list[int]:
        source = stamp_source(conn, change, kind="bench", tier="first_party", tool="bench")
        ids = [insert_fact(conn, change, text=f["text"], source_id=source) for f in facts]
        set_embeddings(conn, change, zip(ids, vectors, strict=True), model=embedder.model_name)
        return ids

    ids = vault.write(job)
    return {vault_id: f["id"] for f, vault_id in zip(facts, ids, strict=True)}


def metrics(ranked: Sequence[int], relevant: Sequence[int]) -> tuple[float, float]:
    """(reciprocal rank of the first relevant hit in the top 10, recall at 5)."""
    rr = next((1.0 / r for r, i in enumerate(ranked[:10], start=1) if i in relevant), 0.0)
    return rr, len(set(ranked[:5]) & set(relevant)) / len(relevant)


def evaluate(service: SearchService, queries: Sequence[dict[str, Any]], to_set: dict[int, int],
             ) -> dict[str, dict[str, float]]:
    """MRR@10 and recall@5 per query kind and over all queries."""
    scores: dict[str, list[tuple[float, float]]] = {}
    for q in queries:
        ranked = [to_set[r.fact.id] for r in service.search(q["query"], FactFilter(), k=10)]
        m = metrics(ranked, q["relevant"])
        scores.setdefault(q["kind"], []).append(m)
        scores.setdefault("all", []).append(m)
    return {kind: {"mrr": sum(m[0] for m in ms) / len(ms), "recall@5": sum(m[1] for m in ms) / len(ms),
                   "n": len(ms)} for kind, ms in scores.items()}


def run(embedder: Any, data: dict[str, Any] | None = None) -> dict[str, dict[str, dict[str, float]]]:
    data = data or load_set()
    with tempfile.TemporaryDirectory(prefix="vodou-fusion-") as folder:
        vault = Vault.open(Path(folder) / "fusion.sqlite")
        index = VectorIndex(vault)
        try:
            to_set = fill(vault, data["facts"], embedder)
            index.load()
            texts = [q["query"] for q in data["queries"]]
            cached = PrecomputedEmbedder(meaning_vectors(embedder, texts), "cached")
            out = {}
            for c in CONFIGS:
                model = None if c.alpha is None else cached
                params = FusionParams(method=c.fusion, keyword_weight=c.alpha or 0.0)
                service = SearchService(vault, model, index, params)
                out[c.name] = evaluate(service, data["queries"], to_set)
            return out
        finally:
            index.close()
            vault.close()


def table(results: dict[str, dict[str, dict[str, float]]]) -> str:
    kinds = ["all"] + sorted(k for k in next(iter(results.values())) if k != "all")
    counts = next(iter(results.values()))
    head = "| configuration | " + " | ".join(f"{k} MRR | {k} R@5" for k in kinds) + " |"
    lines = ["queries: " + ", ".join(f"{k} {counts[k]['n']:.0f}" for k in kinds), "", head,
             "|" + "---|" * (1 + 2 * len(kinds))]
    for name, res in results.items():
        cells = " | ".join(f"{res[k]['mrr']:.3f} | {res[k]['recall@5']:.3f}" for k in kinds)
        lines.append(f"| {name} | {cells} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.fusion", description=__doc__.split("\n")[0])
    parser.add_argument("--json", action="store_true", help="print the results as JSON too")
    args = parser.parse_args(argv)
    from bench.search import load_model

    results = run(load_model())
    print(table(results))
    if args.json:
        print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
