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

3. Applying changes (``--apply``, default 10,000): the first device makes them (eight in ten new memories,
   one pin, one forget of a single memory), running sync after every ``--per-run`` of them as the
   background sync would; the other device then applies all of them in one run. Time to apply, and the
   files and sealed bytes per change; the same for changes sent one per file.
4. Memory of a junk file (``--junk-mib``, default 256): a file of random bytes after the sealed files'
   magic (no key is needed to write one) in the place of the next change file, of a device record and of
   a snapshot; the peak RSS of a ``sync now`` in a fresh process against the same run without the file.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.build import build
from vodou_desktop.data.backup import backup_vault, restore_vault
from vodou_desktop.governance.forget import Forgetting
from vodou_desktop.ingest.remember import Origin, pin, remember
from vodou_desktop.search.embedder import Embedder
from vodou_desktop.search.service import SearchService
from vodou_desktop.search.vectors import VectorIndex
from vodou_desktop.sync import sealing
from vodou_desktop.sync.background import BackgroundSync
from vodou_desktop.sync.engine import SyncEngine
from vodou_desktop.sync.folder import SyncFolder
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


def _pair(work: Path) -> tuple[Vault, Vault, Path, bytes]:
    folder = work / "folder"
    folder.mkdir()
    first, other = Vault.open(work / "first.sqlite"), Vault.open(work / "other.sqlite")
    secret = sealing.new_secret()
    SyncEngine(first).setup(folder, "first", secret, joining=False)
    SyncEngine(first).run(force_snapshot=True)
    SyncEngine(other).setup(folder, "other", secret, joining=True)
    SyncEngine(other).run()
    return first, other, folder, secret


def _make_changes(vault: Vault, n: int, per_run: int) -> None:
    cli, forgetting, ids = Origin(kind="cli"), Forgetting(vault), []
    for i in range(n):
        if i % 10 == 8 and ids:
            pin(vault, ids[i % len(ids)])
        elif i % 10 == 9 and ids:
            forgetting.forget_fact(ids.pop(0))
        else:
            ids.append(remember(vault, f"change {i} about the heron, the lake and the garden {i * 7919 % 10007}",
                                cli, project=("garden", "work", None)[i % 3]))
        if (i + 1) % per_run == 0:
            SyncEngine(vault).run()
    SyncEngine(vault).run()


def _own_files(folder: Path, vault: Vault) -> list[Path]:
    cfg = SyncEngine(vault).require()
    return list(SyncFolder(folder).change_files(cfg.device).values())


def apply_changes(work: Path, changes: int, per_run: int, single: int) -> dict[str, Any]:
    """Time for the other device to apply ``changes`` changes in one run; files and bytes per change."""
    out: dict[str, Any] = {"changes": changes, "per_run": per_run}
    work.mkdir()
    first, other, folder, _ = _pair(work)
    try:
        before = {p.name for p in _own_files(folder, first)}
        _make_changes(first, changes, per_run)
        files = [p for p in _own_files(folder, first) if p.name not in before]
        t0 = time.perf_counter()
        report = SyncEngine(other).run()
        out["apply_s"] = round(time.perf_counter() - t0, 3)
        out["applied_files"] = sum(report.applied.values())
        out["files"] = len(files)
        out["files_per_change"] = round(len(files) / changes, 4)
        out["bytes_per_change"] = round(sum(p.stat().st_size for p in files) / changes, 1)
        before = {p.name for p in _own_files(folder, first)}
        _make_changes(first, single, 1)
        files = [p for p in _own_files(folder, first) if p.name not in before]
        out["one_per_file"] = {"changes": single, "files": len(files),
                               "bytes_per_change": round(sum(p.stat().st_size for p in files) / single, 1)}
    finally:
        first.close()
        other.close()
    return out


_RSS = ("import resource, sys; from vodou_desktop.vault import Vault; from vodou_desktop.sync.engine import "
        "SyncEngine\nwith Vault.open(sys.argv[1]) as v:\n    r = SyncEngine(v).run()\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024, len(r.refused))")


def _peak_rss_mib(vault: Path) -> tuple[int, int]:
    done = subprocess.run([sys.executable, "-c", _RSS, str(vault)], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "VODOU_EMBEDDER": "none"})
    if done.returncode != 0:
        return -1, -1  # the run failed outright (a traceback): counted as not bounded
    mib, refused = done.stdout.split()
    return int(mib), int(refused)


def junk_file_memory(work: Path, mib: int) -> dict[str, Any]:
    """Peak RSS of ``sync now`` with a junk file of ``mib`` MiB in three places, against none."""
    work.mkdir()
    first, other, folder, secret = _pair(work)
    remember(first, "one memory", Origin(kind="cli"))
    SyncEngine(first).run()
    device, joiner_path = SyncEngine(first).require().device, work / "joiner.sqlite"
    first.close()
    other.close()
    with Vault.open(joiner_path) as joiner:  # a device about to join: it reads the snapshots
        SyncEngine(joiner).setup(folder, "joiner", secret, joining=True)
    baseline, _ = _peak_rss_mib(work / "other.sqlite")
    junk = work / "junk.bin"
    with junk.open("wb") as fh:
        fh.write(sealing.MAGIC)  # what a sealed file starts with: the worst case for the reader
        for _ in range(mib):
            fh.write(os.urandom(1 << 20))
    places = {"next change file": (SyncFolder(folder).change_path(device, max(SyncFolder(folder).change_files(
        device)) + 1), work / "other.sqlite"), "device record": (SyncFolder(folder).device_file(device),
                                                                 work / "other.sqlite"),
        "snapshot (joining)": (SyncFolder(folder).snapshot_file(device), joiner_path)}
    out: dict[str, Any] = {"junk_mib": mib, "baseline_peak_rss_mib": baseline}
    for name, (path, vault) in places.items():
        kept = path.with_name(path.name + ".kept")
        if path.exists():
            path.rename(kept)
        shutil.copyfile(junk, path)
        peak, refused = _peak_rss_mib(vault)
        path.unlink()
        if kept.exists():
            kept.rename(path)
        out[name] = {"peak_rss_mib": peak, "over_baseline_mib": peak - baseline if peak >= 0 else None,
                     "refused_lines": refused}
    return out


def run(size: int, changes: int, work: Path, apply: int, per_run: int, junk_mib: int,
        only: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if only in (None, "join"):
        join, first, joiner, _folder = first_join(work, size)
        try:
            out["arrival"] = arrival_to_searchable(first, joiner, changes)
        finally:
            first.close()
            joiner.close()
        out["first_join"] = join
    if only in (None, "apply"):
        out["apply"] = apply_changes(work / "apply", apply, per_run, single=min(200, apply))
    if only in (None, "junk"):
        out["junk"] = junk_file_memory(work / "junk", junk_mib)
    return {**out, "load_average_1min": list(os.getloadavg()[:1])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--changes", type=int, default=200)
    parser.add_argument("--apply", type=int, default=10_000, help="changes the other device applies in one run")
    parser.add_argument("--per-run", type=int, default=100, help="changes between two runs of the first device")
    parser.add_argument("--junk-mib", type=int, default=256)
    parser.add_argument("--only", choices=("join", "apply", "junk"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        print(json.dumps(run(args.size, args.changes, Path(tmp), args.apply, args.per_run, args.junk_mib,
                             args.only), indent=2))


if __name__ == "__main__":
    main()
