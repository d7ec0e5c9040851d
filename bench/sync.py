"""``python -m bench.sync [--size 10000] [--changes 200]``: what sync costs a person.

1. First join of a vault of ``--size`` memories (built through the real write path, synthetic vectors):
   the first device's `sync setup` and first run (its change file and snapshot), then the joining
   device's `sync join` and first run (bootstrap from the snapshot), against a plain `vodou backup` of
   the same vault and its restore into a new file, in the same run.
2. Arrival to searchable: the joined device runs sync in the background (watchdog on the folder, as the
   tray app and `vodou serve` do); the first device writes ``--changes`` memories one at a time, each
   followed by its run (the file renamed into the folder); the delay from that moment to the memory
   being found by a keyword search on the other device, p50 and p95.

One shared folder stands in for the sync engine (no copying delay is measured: the engine's own is not
ours). Prints JSON with the load average; never asserts timings.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.build import build
from vodou_desktop.data.backup import backup_vault, restore_vault
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.search.embedder import Embedder
from vodou_desktop.search.service import SearchService
from vodou_desktop.search.vectors import VectorIndex
from vodou_desktop.sync import sealing
from vodou_desktop.sync.background import BackgroundSync
from vodou_desktop.sync.engine import SyncEngine
from vodou_desktop.vault import Vault


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def first_join(work: Path, size: int) -> tuple[dict[str, Any], Vault, Vault, Path]:
    folder = work / "folder"
    folder.mkdir()
    first = Vault.open(work / "first.sqlite")
    build(first, size, None, real=min(200, size))
    secret = sealing.new_secret()
    t0 = time.perf_counter()
    SyncEngine(first).setup(folder, "first", secret, joining=False)
    SyncEngine(first).run(force_snapshot=True)
    setup_s = time.perf_counter() - t0
    joiner = Vault.open(work / "joiner.sqlite")
    t0 = time.perf_counter()
    SyncEngine(joiner).setup(folder, "joiner", secret, joining=True)
    report = SyncEngine(joiner).run()
    join_s = time.perf_counter() - t0
    assert report.bootstrapped_from == "first", report.lines()
    joined = joiner.read(lambda c: c.execute("SELECT count(*) FROM chunks").fetchone()[0])
    t0 = time.perf_counter()
    backup_vault(first.path, work / "backup.sqlite")
    backup_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    restore_vault(work / "backup.sqlite", work / "restored.sqlite")
    restore_s = time.perf_counter() - t0
    files = sorted((folder / "vodou").rglob("*"))
    return ({"memories": size, "joined_memories": joined, "setup_and_first_run_s": round(setup_s, 3),
             "join_s": round(join_s, 3), "backup_s": round(backup_s, 3), "restore_s": round(restore_s, 3),
             "join/(backup+restore)": round(join_s / (backup_s + restore_s), 2),
             "folder_bytes": sum(p.stat().st_size for p in files if p.is_file()),
             "backup_bytes": (work / "backup.sqlite").stat().st_size}, first, joiner, folder)


def arrival_to_searchable(first: Vault, joiner: Vault, changes: int) -> dict[str, Any]:
    index = VectorIndex(joiner)
    search = SearchService(joiner, Embedder("none"), index)
    background = BackgroundSync(joiner, poll_s=3600)
    background.start()
    delays: list[float] = []
    try:
        for n in range(changes):
            token = f"zqx{n:05d}marker"
            remember(first, f"memory {token} written on the first device", Origin(kind="cli"))
            SyncEngine(first).run()
            arrived = time.perf_counter()
            deadline = arrived + 30
            while time.perf_counter() < deadline:
                if any(token in r.fact.text for r in search.search(token, k=3)):
                    delays.append(time.perf_counter() - arrived)
                    break
                time.sleep(0.002)
    finally:
        background.stop()
        index.close()
    ms = [d * 1000 for d in delays]
    return {"changes": changes, "found": len(delays),
            "arrival_to_searchable_p50_ms": round(statistics.median(ms), 1) if ms else None,
            "arrival_to_searchable_p95_ms": round(_pct(ms, 0.95), 1) if ms else None}


def run(size: int, changes: int, work: Path) -> dict[str, Any]:
    join, first, joiner, _folder = first_join(work, size)
    try:
        arrival = arrival_to_searchable(first, joiner, changes)
    finally:
        first.close()
        joiner.close()
    return {"first_join": join, "arrival": arrival, "load_average_1min": list(os.getloadavg()[:1])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--changes", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        print(json.dumps(run(args.size, args.changes, Path(tmp)), indent=2))


if __name__ == "__main__":
    main()
