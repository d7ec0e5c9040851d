"""``python -m bench.invariance --ref main``: the search service of a git ref against the working tree's,
same vault, same query vectors — every result must be the same.

A change meant to make search faster must not change what it finds. This builds (once, then reuses
with ``--vault``) the 10k-chunk bench vault of ``bench.search`` with real query vectors, then runs the
same searches with the code of ``--ref`` and with the working tree's code, each in its own process,
and compares: ids, scores (exactly), texts, neighbours and every explain factor; also ``rank`` with and
without explain. Cases: every query under a project filter and under
another filter (global only, another project, a tier or kind filter, forgotten facts included, a
scope), k = 10 and k = 200, hybrid and keyword-only; the hybrid ones once more with the query vector
arriving late on another thread (so the reads done while waiting for it are taken).
Prints the number of cases and of differences; exits 1 on any difference. ``--tolerance T`` also
accepts a case whose every id, text, neighbour and order is the same and whose numbers (scores and
explain factors) are each within T of the reference's (a change in how a cosine is computed moves
its last float digits), and says how many were accepted that way.
"""

from __future__ import annotations

import argparse
import pickle
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import numpy as np

LATE_S = 0.003  # the late vector arrives this long after it was asked for


def _build(path: Path, size: int, n_queries: int) -> None:
    """The bench vault and its query vectors (real model)."""
    from bench.build import build
    from bench.corpus import queries
    from bench.search import load_model
    from vodou_desktop.vault import Vault

    embedder = load_model()
    vault = Vault.open(path)
    try:
        stats = build(vault, size, embedder, real=min(1_000, size))
    finally:
        vault.close()
    texts = list(dict.fromkeys(queries(n_queries) + queries(n_queries, seed=23)))
    vecs = embedder.encode(texts)
    with open(str(path) + ".queries.pkl", "wb") as fh:
        pickle.dump({"texts": texts, "vectors": np.asarray(vecs, dtype=np.float32),
                     "model": stats.embed_model}, fh)


def _build_quality(path: Path) -> None:
    """bench.quality's vault (conversations with neighbours, dates, imports, pages), embedded, and its
    questions' vectors."""
    from bench import quality
    from bench.search import load_model
    from vodou_desktop.search.backfill import backfill

    embedder = load_model()
    data = quality.load()
    built = quality.build_vault(path, data)
    try:
        backfill(built.vault, embedder)
    finally:
        built.vault.close()
    questions = data["questions"]
    texts = [x["question"] for x in questions]
    with open(str(path) + ".queries.pkl", "wb") as fh:
        pickle.dump({"texts": texts, "vectors": np.asarray(embedder.encode(texts), dtype=np.float32),
                     "model": embedder.model_id, "projects": [x["project"] for x in questions]}, fh)


def _filters(i: int, projects: list[str | None] | None) -> list[tuple[dict[str, Any], str | None]]:
    """Two (filter keywords, scope) per query: a project, then something else in turn."""
    from bench.corpus import PROJECTS

    if projects is not None:  # bench.quality: the question's project, then the others in turn
        mine = projects[i]
        others = sorted({p for p in projects if p})
        return [({"project": mine}, None),
                [({}, None), ({"project": others[i % len(others)]}, None),
                 ({"project": mine, "include_forgotten": True}, "user")][i % 3]]
    first = ({"project": PROJECTS[i % 6]}, None)
    other = [({}, None), ({"project": PROJECTS[(i + 7) % 24]}, None),
             ({"project": PROJECTS[i % 6], "tiers": ("first_party", "pinned")}, None),
             ({"project": PROJECTS[i % 6], "kinds": ("preference", "decision")}, None),
             ({"project": PROJECTS[(i + 3) % 6], "include_forgotten": True}, "user"),
             ({"project": PROJECTS[i % 6]}, "user")][i % 6]
    return [first, other]


def _record(vault_path: Path, code: str, out: Path, late: bool) -> None:
    """Run every case with the ``vodou_desktop`` found first on ``code`` and pickle the answers."""
    sys.path.insert(0, code)
    from vodou_desktop.search.fusion import FusionParams
    from vodou_desktop.search.service import SearchService
    from vodou_desktop.search.vectors import VectorIndex
    from vodou_desktop.vault import FactFilter, Vault

    loaded = Path(sys.modules["vodou_desktop"].__file__ or "").resolve()
    print(f"recording with {loaded.parent}", file=sys.stderr)
    with open(str(vault_path) + ".queries.pkl", "rb") as fh:
        data = pickle.load(fh)
    vectors = dict(zip(data["texts"], data["vectors"], strict=True))

    class Given:
        """The real query vectors, at once or ``LATE_S`` later from another thread."""

        ready = True
        model_name = model_id = data["model"]

        def encode_one(self, text: str) -> np.ndarray:
            return vectors[text]

        def submit_one(self, text: str) -> Future[np.ndarray]:
            fut: Future[np.ndarray] = Future()
            if late:
                threading.Timer(LATE_S, fut.set_result, (vectors[text],)).start()
            else:
                fut.set_result(vectors[text])
            return fut

    vault = Vault.open(vault_path)
    index = VectorIndex(vault, model=data["model"])
    index.load()
    hybrid = SearchService(vault, Given(), index)  # type: ignore[arg-type]
    keyword_only = SearchService(vault, None, index)
    answers: list[Any] = []

    def shown(results: list[Any]) -> list[Any]:
        return [(r.fact.as_json(), r.score, r.factors,
                 None if r.before is None else r.before.as_json(),
                 None if r.after is None else r.after.as_json()) for r in results]

    for i, text in enumerate(data["texts"]):
        for kw, scope in _filters(i, data.get("projects")):
            filt = FactFilter(**kw)
            services = (("hybrid", hybrid),) if late else (("hybrid", hybrid), ("keyword", keyword_only))
            for name, service in services:
                for k in (10, 200):
                    answers.append(((i, kw, scope, name, k), shown(service.search(text, filt, scope=scope, k=k))))
                if not late and i % 4 == 0:  # rank()
                    cands = service.gather(text, filt)
                    for explain in (True, False):
                        for limit in (10, None):
                            ranked = service.rank(cands, FusionParams(), scope, explain=explain, limit=limit)
                            answers.append(((i, kw, scope, name, "rank", explain, limit),
                                            [(r.fact.as_json(), r.score, r.factors) for r in ranked]))
    index.close()
    vault.close()
    with open(out, "wb") as fh:
        pickle.dump(answers, fh)


def _export(ref: str, folder: Path) -> str:
    """``vodou_desktop`` as it is at ``ref``, in ``folder``."""
    folder.mkdir()
    archive = subprocess.run(["git", "archive", ref, "vodou_desktop"], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return str(folder)


def _run(vault: Path, code: str, out: Path, late: bool) -> list[Any]:
    cmd = [sys.executable, "-m", "bench.invariance", "--record", str(out), "--vault", str(vault), "--code", code]
    subprocess.run(cmd + ["--late"] * late, check=True)
    with open(out, "rb") as fh:
        return pickle.load(fh)  # type: ignore[no-any-return]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.invariance", description=__doc__.split("\n")[0])
    p.add_argument("--ref", default="main", help="git ref whose search is the reference")
    p.add_argument("--new", default="", help="git ref to compare with it (default: the working tree)")
    p.add_argument("--vault", default="", help="the bench vault to use (built there when missing)")
    p.add_argument("--size", type=int, default=10_000)
    p.add_argument("--quality", action="store_true",
                   help="bench.quality's vault and questions instead of the synthetic bench vault")
    p.add_argument("--queries", type=int, default=200, help="per seed (two seeds)")
    p.add_argument("--tolerance", type=float, default=0.0,
                   help="accept numbers within this of the reference's (ids, texts and order still exact)")
    p.add_argument("--record", default="", help=argparse.SUPPRESS)
    p.add_argument("--code", default="", help=argparse.SUPPRESS)
    p.add_argument("--late", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.record:
        _record(Path(args.vault), args.code, Path(args.record), args.late)
        return 0
    work = Path(tempfile.mkdtemp(prefix="vodou-invariance-"))
    vault = Path(args.vault) if args.vault else work / "bench.sqlite"
    if not vault.exists():
        if args.quality:
            _build_quality(vault)
        else:
            _build(vault, args.size, args.queries)
    old = _export(args.ref, work / "old")
    new = _export(args.new, work / "new") if args.new else str(Path(__file__).resolve().parent.parent)
    differences = cases = close = 0
    for late in (False, True):
        a = _run(vault, str(old), work / f"old-{late}.pkl", late)
        b = _run(vault, new, work / f"new-{late}.pkl", late)
        cases += len(a)
        if len(a) != len(b):
            print(f"case counts differ: {len(a)} against {len(b)}")
            return 1
        for (case_a, got_a), (case_b, got_b) in zip(a, b, strict=True):
            if case_a == case_b and got_a != got_b and args.tolerance and _close(got_a, got_b, args.tolerance):
                close += 1
            elif case_a != case_b or got_a != got_b:
                differences += 1
                if differences <= 5:
                    print(f"DIFFERENT: {case_a}\n  {args.ref}: {got_a[:2]}\n  now: {got_b[:2]}")
        print(f"{'late vector' if late else 'vector at once'}: {len(a)} cases compared")
    within = f"; {close} with every number within {args.tolerance:g} and all else the same" if args.tolerance else ""
    print(f"{cases} cases ({args.ref} against {args.new or 'the working tree'}), {differences} different{within}")
    return 1 if differences else 0


def _close(a: Any, b: Any, tolerance: float) -> bool:
    """The same structure, strings, ids and flags; floats within ``tolerance``."""
    if isinstance(a, float) and isinstance(b, float):
        return abs(a - b) <= tolerance
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k], tolerance) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_close(x, y, tolerance) for x, y in zip(a, b, strict=True))
    return bool(a == b)


if __name__ == "__main__":
    sys.exit(main())
