"""``python -m bench.models``: what the default model (bge-small-en-v1.5 int8) costs against
all-MiniLM-L6-v2, in the same process, interleaved (the CPU is shared: a figure alone means little).

- load: a new ``Embedder`` of each, from start to ready (MiniLM's graph exported beforehand, as a
  second run of the app finds it), best of ``--loads``;
- one query: ``encode_one`` of each question (the query cache cleared), the two models in turn per
  question: p50 and p95;
- a batch: ``encode`` of the same memories, short ones (our set's and LoCoMo's turns) and long ones
  (BEAM's messages, when its folder is there), in rounds that alternate the models: texts a second.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Sequence
from typing import Any

from bench import quality
from vodou_desktop.search.embedder import Embedder, EmbedderState


def start(choice: str) -> tuple[Embedder, float]:
    t0 = time.perf_counter()
    model = Embedder(choice).start()
    if model.wait(900) is not EmbedderState.READY:
        raise SystemExit(f"{choice}: {model.error}")
    return model, time.perf_counter() - t0


def texts_of(name: str, n: int, rng: random.Random) -> list[str]:
    try:
        data = quality.load_set(name)
    except quality.MissingSet as exc:
        print(exc, file=sys.stderr)
        return []
    return [m["text"] for m in rng.sample(data["memories"], min(n, len(data["memories"])))]


def pct(values: Sequence[float], p: float) -> float:
    return quality.percentile(values, p) * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.models", description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--short", type=int, default=400, help="short memories per round")
    parser.add_argument("--long", type=int, default=40, help="long (BEAM) memories per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--loads", type=int, default=3)
    args = parser.parse_args(argv)
    rng = random.Random(11)
    start("minilm")  # its graph exported (once) before anything is timed
    choices = ("default", "minilm")
    loads: dict[str, list[float]] = {c: [] for c in choices}
    for _ in range(args.loads):
        for c in choices:
            loads[c].append(start(c)[1])
    models = {c: start(c)[0] for c in choices}
    questions = [x["question"] for x in rng.sample(quality.load_set("locomo")["questions"], args.queries)] \
        if args.queries else []
    query_s: dict[str, list[float]] = {c: [] for c in choices}
    for q in questions:
        for c in choices:
            models[c].clear_query_cache()
            t0 = time.perf_counter()
            models[c].encode_one(q)
            query_s[c].append(time.perf_counter() - t0)
    batches: dict[str, dict[str, Any]] = {}
    for kind, texts in (("short", texts_of("locomo", args.short, rng) + texts_of("ours", args.short // 2, rng)),
                        ("long (BEAM)", texts_of("beam", args.long, rng))):
        if not texts:
            continue
        rates: dict[str, list[float]] = {c: [] for c in choices}
        for _ in range(args.rounds):
            for c in choices:
                t0 = time.perf_counter()
                models[c].encode(texts, batch_size=32)
                rates[c].append(len(texts) / (time.perf_counter() - t0))
        batches[kind] = {"n": len(texts), **{c: statistics.median(r) for c, r in rates.items()}}
    names = {"default": "bge-small-en-v1.5 int8", "minilm": "all-MiniLM-L6-v2"}
    print(f"# bench.models: {names['default']} against {names['minilm']}, interleaved in one process")
    print(f"{'':<28}{names['default']:>26}{names['minilm']:>22}{'ratio':>8}")
    lo = {c: min(v) for c, v in loads.items()}
    a, b = lo["default"], lo["minilm"]
    print(f"{'load to ready, best':<28}{a:>24.2f} s{b:>20.2f} s{a / b:>8.2f}")
    if questions:
        for p in (50, 95):
            a, b = pct(query_s["default"], p), pct(query_s["minilm"], p)
            print(f"{f'one query, p{p}':<28}{a:>23.1f} ms{b:>19.1f} ms{a / b:>8.2f}")
    for kind, row in batches.items():
        a, b, label = row["default"], row["minilm"], f"batch, {kind} (n={row['n']})"
        print(f"{label:<28}{a:>20.1f} texts/s{b:>14.1f} texts/s{a / b:>8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
