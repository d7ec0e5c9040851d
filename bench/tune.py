"""``python -m bench.tune --split dev``: choose the fusion method and weights on bench.quality's set.

Builds the quality set's vault once (real write path, real model), gathers every question's
candidates once per context-column weight (``SearchService.gather``), then ranks them under every
configuration of the grid (``SearchService.rank``, no SQL), and prints hit@10 and MRR@10 per
configuration, best first. Tune on ``dev``; the chosen configuration goes in
``vodou_desktop/search/service.py`` (``FUSION``) and is reported on ``test`` by ``bench.quality``.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench.measure import PrecomputedEmbedder
from vodou_desktop.search.fusion import FusionParams
from vodou_desktop.search.service import MAX_K, Candidates, SearchService

Question = tuple[str, Any, set[int]]  # text, FactFilter, gold vault ids


def grid() -> list[FusionParams]:
    """Every configuration tried (the context weight is applied per gather, so it is outermost)."""
    out: list[FusionParams] = []
    for method, weights in (("zscore", (0.3, 0.4, 0.5, 0.6, 0.7)), ("minmax", (0.3, 0.4, 0.5, 0.6, 0.7)),
                            ("rrf", (0.3, 0.5, 0.7))):
        for w, adaptive, before, after in itertools.product(weights, (0.0, 10.0), (0.0, 0.25, 0.5),
                                                            (0.0, 0.15, 0.3)):
            if method == "rrf" and adaptive:
                continue
            out.append(FusionParams(method=method, keyword_weight=w, adaptive=adaptive, before_share=before,
                                    after_share=after))
    return out


CONTEXT_WEIGHTS = (0.0, 0.2, 0.5)


def fine_grid() -> list[FusionParams]:
    """Around the coarse grid's best (z-score, low keyword weight, a large share of the turn before)."""
    return [FusionParams(method="zscore", keyword_weight=w, adaptive=a, before_share=b, after_share=af)
            for w, a, b, af in itertools.product((0.2, 0.25, 0.3, 0.35), (0.0, 10.0, 20.0), (0.5, 0.7, 0.9),
                                                 (0.0, 0.1))]


FINE_CONTEXT_WEIGHTS = (0.0, 0.2)


def score(ranked: Sequence[int], relevant: set[int], k: int = 10) -> tuple[float, float]:
    """(hit@k, reciprocal rank within k)."""
    for rank, i in enumerate(ranked[:k], start=1):
        if i in relevant:
            return 1.0, 1.0 / rank
    return 0.0, 0.0


def tune(service: SearchService, questions: Iterable[tuple[str, Any, set[int]]],
         configs: Sequence[FusionParams], context_weights: Sequence[float] = CONTEXT_WEIGHTS,
         ) -> list[tuple[FusionParams, float, float]]:
    """``questions``: (text, filter, relevant vault ids). Returns (config, hit@10, MRR@10), best first."""
    qs = list(questions)
    results: list[tuple[FusionParams, float, float]] = []
    for cw in context_weights:
        gathered: list[tuple[Candidates, set[int]]] = []
        for text, filt, relevant in qs:
            gathered.append((service.gather(text, filt, FusionParams(context_weight=cw)), relevant))
        for params in configs:
            p = replace(params, context_weight=cw)
            hits = rrs = 0.0
            for cands, relevant in gathered:
                h, rr = score([r.fact.id for r in service.rank(cands, p, explain=False)[:MAX_K]], relevant)
                hits += h
                rrs += rr
            results.append((p, hits / max(1, len(gathered)), rrs / max(1, len(gathered))))
    results.sort(key=lambda r: (-r[2], -r[1]))
    return results


def describe(p: FusionParams) -> str:
    return (f"{p.method} w={p.keyword_weight} adaptive={p.adaptive} before={p.before_share} "
            f"after={p.after_share} context={p.context_weight}")


@contextmanager
def tuning_session(split: str, vector_cache: Path | None) -> Iterator[tuple[SearchService, list[Question]]]:
    """bench.quality's vault (built and embedded as ``python -m bench.quality`` builds it) and the
    split's questions as (text, filter, gold vault ids)."""
    from bench import quality
    from bench.search import load_model
    from vodou_desktop.search.backfill import backfill
    from vodou_desktop.search.vectors import VectorIndex
    from vodou_desktop.vault import FactFilter

    model = load_model()
    data = quality.load()
    with tempfile.TemporaryDirectory(prefix="vodou-tune-") as tmp:
        built = quality.build_vault(Path(tmp) / "quality.sqlite", data)
        cache = quality.CachedVectors(model, vector_cache) if vector_cache else None
        backfill(built.vault, cache or model)  # type: ignore[arg-type]
        if cache:
            cache.save()
        index = VectorIndex(built.vault)
        index.load()
        ids_of: dict[str, set[int]] = {}
        for vault_id, key in built.key_of.items():
            ids_of.setdefault(key, set()).add(vault_id)
        questions = [(x["question"], FactFilter(project=x["project"]),
                      {i for key in x["gold"] for i in ids_of.get(key, ())})
                     for x in quality.select(data["questions"], split)]
        texts = [text for text, _, _ in questions]
        embedded = PrecomputedEmbedder(dict(zip(texts, model.encode(texts), strict=True)), model.model_name)
        try:
            yield SearchService(built.vault, embedded, index), questions  # type: ignore[arg-type]
        finally:
            index.close()
            built.vault.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.tune", description=__doc__)
    parser.add_argument("--split", default="dev", choices=("dev", "test"))
    parser.add_argument("--top", type=int, default=25, help="configurations to print")
    parser.add_argument("--fine", action="store_true", help="the finer grid around the coarse grid's best")
    parser.add_argument("--vector-cache", metavar="DIR", type=Path, help="as bench.quality's (ingest only)")
    args = parser.parse_args(argv)
    started = time.time()
    with tuning_session(args.split, args.vector_cache) as (service, questions):
        rows = (tune(service, questions, fine_grid(), FINE_CONTEXT_WEIGHTS) if args.fine
                else tune(service, questions, grid()))
    print(f"# bench.tune --split {args.split}: {len(questions)} questions, {len(rows)} configurations,"
          f" {time.time() - started:.0f} s, load {os.getloadavg()[0]:.2f}")
    print("| configuration | hit@10 | MRR@10 |\n|---|---|---|")
    for p, hit, mrr in rows[: args.top]:
        print(f"| {describe(p)} | {hit:.3f} | {mrr:.3f} |")
    print("\nbest of each family:\n| family | configuration | hit@10 | MRR@10 |\n|---|---|---|---|")
    families: dict[str, Any] = {
        **{f"method {m}": (lambda p, m=m: p.method == m) for m in ("zscore", "minmax", "rrf")},
        "no neighbour share": lambda p: p.before_share == 0 and p.after_share == 0,
        "no adaptive weight": lambda p: p.adaptive == 0,
        **{f"context weight {c}": (lambda p, c=c: p.context_weight == c) for c in CONTEXT_WEIGHTS},
    }
    for name, keep in families.items():
        best = next(((p, h, m) for p, h, m in rows if keep(p)), None)
        if best:
            print(f"| {name} | {describe(best[0])} | {best[1]:.3f} | {best[2]:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
