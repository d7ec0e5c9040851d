"""``python -m bench.cli_start``: what a new ``vodou mem search`` process costs with the model, against
the same command keyword-only (``VODOU_EMBEDDER=none``), on the same vault, in one run.

A temp home holds a vault of ``--size`` memories (the first ``--real`` embedded by the real model,
the rest with synthetic vectors, as bench.search builds it). The default model (bge-small-en-v1.5,
bundled) needs no export; ``--model minilm`` exports all-MiniLM-L6-v2's graph into the home's cache
first, as its first run does (the export's wall time is printed too). Then each round
runs the two commands in turn, alternating which goes first, each a new process timed from spawn to
exit (``--json``, a different query each round): the wall clock a person waits at the terminal. Every
model run must say ``"semantic": true`` (it embedded its query; never a keyword-only fallback).
Target (issue 32): the model's median wall <= 1.5x the keyword-only median. Prints; never asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.corpus import queries

ROOT = Path(__file__).resolve().parents[1]
TARGET = 1.5


def build_home(home: Path, size: int, real: int, choice: str = "default") -> tuple[Path, float]:
    """The vault (embedded by the model on ONNX Runtime, in this process) and, for MiniLM, the exported
    graph in ``home``'s cache; returns the vault's path and the model's wall seconds to ready."""
    os.environ["VODOU_HOME"] = str(home)
    from bench.build import build
    from vodou_desktop import paths
    from vodou_desktop.search.embedder import Embedder, EmbedderState
    from vodou_desktop.vault import Vault

    t0 = time.perf_counter()
    model = Embedder(choice, cache_dir=paths.cache_dir()).start()  # MiniLM: exports into the home's cache
    if model.wait(900) is not EmbedderState.READY:
        raise SystemExit(f"the model did not load: {model.error}")
    exported = time.perf_counter() - t0
    path = home / "vault.sqlite"
    with Vault.open(path) as vault:
        build(vault, size, model, real=min(real, size))
    return path, exported


def one_run(vault: Path, query: str, model: bool, wait: float | None = None,
            choice: str = "default") -> tuple[float, dict[str, Any]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if not model:
        env["VODOU_EMBEDDER"] = "none"
    else:
        env["VODOU_EMBEDDER"] = choice
        if wait is not None:
            env["VODOU_MODEL_WAIT"] = str(wait)
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "vodou_desktop", "--vault", str(vault), "mem", "search", query,
                           "--json"], env=env, capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"vodou mem search failed: {done.stderr.strip()}")
    return wall, json.loads(done.stdout)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.cli_start", description=__doc__.splitlines()[0])
    p.add_argument("--size", type=int, default=10_000, help="memories in the vault (default 10000)")
    p.add_argument("--real", type=int, default=1_000, help="of which embedded by the real model")
    p.add_argument("--rounds", type=int, default=10, help="runs of each command (alternating)")
    p.add_argument("--wait", type=float, help="VODOU_MODEL_WAIT for the model's runs (default: the CLI's ~1 s):"
                   " on a machine too busy to load the model within a second, what a search by meaning costs")
    p.add_argument("--model", choices=("default", "minilm"), default="default")
    args = p.parse_args(argv)
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    print(f"# new `vodou mem search` process, model vs keyword-only, {stamp}", flush=True)
    load = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory(prefix="vodou-bench-cli-") as folder:
        vault, exported = build_home(Path(folder), args.size, args.real, args.model)
        print(f"first run: the model ({args.model}) ready in {exported:.1f} s"
              f"{' (its graph exported and checked)' if args.model == 'minilm' else ' (no export)'};"
              f" vault of {args.size:,} memories built", flush=True)
        texts = queries(args.rounds + 1, seed=29)
        one_run(vault, texts[-1], True, args.wait, args.model)  # the page cache warm for both commands alike
        one_run(vault, texts[-1], False)
        walls: dict[bool, list[float]] = {True: [], False: []}
        fallbacks = 0
        for i in range(args.rounds):
            for model in ((True, False) if i % 2 == 0 else (False, True)):
                wall, out = one_run(vault, texts[i], model, args.wait, args.model)
                walls[model].append(wall)
                if model and not out["semantic"]:
                    fallbacks += 1
        load.append(os.getloadavg()[0])
    with_model, keyword = statistics.median(walls[True]), statistics.median(walls[False])
    ratio = with_model / keyword
    for label, key in (("with the model (ONNX Runtime)", True), ("keyword-only (VODOU_EMBEDDER=none)", False)):
        w = sorted(walls[key])
        print(f"{label:<36}: median {statistics.median(w):6.2f} s  min {w[0]:6.2f} s  max {w[-1]:6.2f} s"
              f"  ({len(w)} runs)")
    waited = f"VODOU_MODEL_WAIT={args.wait:g}" if args.wait is not None else "the CLI's default"
    print(f"model runs that fell back to keywords: {fallbacks} of {args.rounds} (the model's wait: {waited})")
    print(f"load average (1 min): {load[0]:.2f} at start, {load[1]:.2f} at end (2 cores, shared)")
    verdict = "PASS" if ratio <= TARGET and fallbacks == 0 else "FAIL"
    print(f"{verdict}  with the model / keyword-only, median wall {ratio:.2f}x <= {TARGET:g}x"
          f" (and every model run used meaning)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
