"""``python -m bench.encryption [--size 100000]``: what encryption at rest costs search.

Builds one synthetic vault (the same builder as ``bench.search``, random vectors: the model is not
what is measured), then an encrypted copy of it (SQLite3 Multiple Ciphers, ChaCha20-Poly1305, the
copy and rekey that ``vodou encrypt`` does), and times keyword and hybrid search (project filter
on), the vector index load and a connection open on each (a generated key, as ``vodou encrypt``
stores, and a passphrase, which pays for its key stretching), alternating plain and encrypted
rounds in the same process. Prints each figure and the encrypted/plain ratio, with the load average.
Never asserts timings.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench import measure
from bench.build import build
from bench.corpus import PROJECTS, queries
from vodou_desktop.data.encryption import rekey_file
from vodou_desktop.vault import Vault, cipher
from vodou_desktop.vault.connection import open_connection
from vodou_desktop.vault.keystore import new_key

KEY = new_key()  # what `vodou encrypt` stores: 256 random bits, no key stretching
ROUNDS = 2


def measure_vault(path: Path, texts: list[str], rng: np.random.Generator) -> dict[str, float]:
    vault = Vault.open(path)
    try:
        qvecs, _ = measure.embed_queries(None, texts, rng)
        hybrid, keyword_only, index, load_s = measure.services(vault, qvecs, "synthetic")
        cases = measure.cases_for(texts, PROJECTS[:6])
        keyword = measure.timed(lambda c: keyword_only.search(c[0], c[1], k=10), cases)
        both = measure.timed(lambda c: hybrid.search(c[0], c[1], k=10), cases)
        index.close()
    finally:
        vault.close()
    return {"keyword_p50_ms": keyword.p50, "keyword_p95_ms": keyword.p95, "hybrid_p50_ms": both.p50,
            "hybrid_p95_ms": both.p95, "index_load_s": load_s, "open_ms": open_ms(path)}


def open_ms(path: Path) -> float:
    opens = []
    for _ in range(5):
        t0 = time.perf_counter()
        open_connection(path, create=False).close()
        opens.append(time.perf_counter() - t0)
    return statistics.median(opens) * 1000


def run(size: int, folder: Path, n_queries: int) -> dict[str, Any]:
    plain = folder / f"plain-{size}.sqlite"
    with Vault.open(plain) as vault:
        build(vault, size, None, real=min(2_000, size))
        vault.checkpoint()
    encrypted = folder / f"encrypted-{size}.sqlite"
    shutil.copyfile(plain, encrypted)
    t0 = time.perf_counter()
    rekey_file(encrypted, None, KEY)
    encrypt_s = time.perf_counter() - t0
    cipher.remember_key(encrypted, KEY)
    texts = queries(n_queries)
    load = [round(os.getloadavg()[0], 2)]
    rounds: dict[str, list[dict[str, float]]] = {"plain": [], "encrypted": []}
    for _ in range(ROUNDS):  # alternate, so a change of machine load hits both alike
        for name, path in (("plain", plain), ("encrypted", encrypted)):
            rounds[name].append(measure_vault(path, texts, np.random.default_rng(size)))
    load.append(round(os.getloadavg()[0], 2))
    passphrase = folder / "passphrase.sqlite"
    shutil.copyfile(plain, passphrase)
    rekey_file(passphrase, None, "a passphrase of the person's own")
    cipher.remember_key(passphrase, "a passphrase of the person's own")
    passphrase_open_ms = open_ms(passphrase)
    best = {name: {k: min(r[k] for r in runs) for k in runs[0]} for name, runs in rounds.items()}
    ratio = {k: round(best["encrypted"][k] / best["plain"][k], 3) for k in best["plain"]}
    return {"size": size, "queries": n_queries, "plain": best["plain"], "encrypted": best["encrypted"],
            "ratio_encrypted_over_plain": ratio, "passphrase_open_ms": round(passphrase_open_ms, 1),
            "encrypt_seconds": round(encrypt_s, 2),
            "file_mb": round(plain.stat().st_size / 1_048_576, 1), "load_average_1min": load}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.encryption", description=__doc__.split("\n")[0])
    p.add_argument("--size", type=int, default=100_000, help="chunks in the vault (default 100000)")
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="vodou-bench-enc-") as tmp:
        result = run(args.size, Path(tmp), args.queries)
    if args.json:
        print(json.dumps(result, indent=2))
    print(f"encryption at rest, {result['size']} chunks ({result['file_mb']} MB), {result['queries']} queries,"
          f" load average {result['load_average_1min'][0]} → {result['load_average_1min'][1]}")
    print(f"encrypting the file (copy + rekey): {result['encrypt_seconds']} s")
    print(f"{'':18}{'plain':>10}{'encrypted':>11}{'ratio':>8}")
    for key in result["plain"]:
        print(f"{key:18}{result['plain'][key]:10.2f}{result['encrypted'][key]:11.2f}"
              f"{result['ratio_encrypted_over_plain'][key]:8.2f}")
    print(f"open with a passphrase (PBKDF2, 64,007 rounds): {result['passphrase_open_ms']} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
