"""What keeping a memory's id and journaling every action cost, against baselines in the same process.

    python -m bench.edits [--memories 20000] [--edits 300]

1. Import: ``import_records`` of a generated export (``data.sample_vault``) with the undo journal's
   hook (one entry, the imported memories as its items, revision chains settled) against the same
   import with the hook replaced by nothing. Each into a fresh vault, the same records.
2. Correct: a correction that keeps the memory's id (the old revision moves to a fresh row id, every
   reference following it, then the new revision takes the id; journaled) against the previous way
   (the new revision inserted under a new id and the old one superseded; not journaled), the same
   number of corrections of the same memories in two copies of one vault.
3. Bulk forget: 50 memories as one journaled operation against 50 single forgets.

Figures print as seconds and ratios; a person feels the correction (one at a time), the import
(minutes for big exports) and the bulk forget. The once-per-process integrity check before a vault's
first write is run before timing. Figures in bench/notes/edits.md.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vodou_desktop.data import export as data_export
from vodou_desktop.data.sample_vault import sample_records
from vodou_desktop.governance.forget import Forgetting
from vodou_desktop.ingest.remember import correct
from vodou_desktop.vault import Vault
from vodou_desktop.vault import journal_store as js
from vodou_desktop.vault.clock import now_iso
from vodou_desktop.vault.facts import insert_fact


def _timed(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def bench_import(folder: Path, records: list[dict[str, Any]]) -> tuple[float, float]:
    with Vault.open(folder / "journaled.sqlite") as vault:
        journaled = _timed(lambda: data_export.import_records(vault, records))
    real = js.record_import
    js.record_import = lambda conn, change, ids, what: None  # type: ignore[assignment]
    try:
        with Vault.open(folder / "plain.sqlite") as vault:
            plain = _timed(lambda: data_export.import_records(vault, records))
    finally:
        js.record_import = real
    return journaled, plain


def _old_correct(vault: Vault, fact_id: int, text: str) -> int:
    """The previous correction: a new revision under a new id, the old one superseded."""
    def job(conn: Any, change: Any) -> int:
        row = conn.execute("SELECT source_id, kind, project_id, revision FROM chunks WHERE id = ?",
                           (fact_id,)).fetchone()
        new = insert_fact(conn, change, text=text, source_id=row[0], kind=row[1], project=row[2],
                          predecessor_id=fact_id, revision=int(row[3]) + 1, infer_thread=False)
        conn.execute("UPDATE chunks SET superseded_by = ?, superseded_at = ? WHERE id = ?", (new, now_iso(), fact_id))
        return int(new)

    return int(vault.write(job))


def bench_correct(folder: Path, source: Path, edits: int) -> tuple[float, float]:
    shutil.copyfile(source, folder / "keep.sqlite")
    shutil.copyfile(source, folder / "old.sqlite")
    targets = list(range(1, edits * 50, 50))
    with Vault.open(folder / "keep.sqlite") as vault:
        vault.check_integrity()  # the once-per-process check before the first write, not timed
        kept = _timed(lambda: [correct(vault, i, f"corrected text {i}") for i in targets])
    with Vault.open(folder / "old.sqlite") as vault:
        vault.check_integrity()
        old = _timed(lambda: [_old_correct(vault, i, f"corrected text {i}") for i in targets])
    return kept, old


def bench_forget(folder: Path, source: Path) -> tuple[float, float]:
    shutil.copyfile(source, folder / "bulk.sqlite")
    shutil.copyfile(source, folder / "singles.sqlite")
    ids = list(range(100, 150))
    with Vault.open(folder / "bulk.sqlite") as vault:
        vault.check_integrity()
        bulk = _timed(lambda: Forgetting(vault, copies=False).forget_facts(ids))
    with Vault.open(folder / "singles.sqlite") as vault:
        vault.check_integrity()
        forgetting = Forgetting(vault, copies=False)
        singles = _timed(lambda: [forgetting.forget_fact(i) for i in ids])
    return bulk, singles


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=20_000)
    parser.add_argument("--edits", type=int, default=300)
    args = parser.parse_args(argv)
    records = sample_records(args.memories)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        journaled, plain = bench_import(folder, records)
        print(f"import of {args.memories:,} memories: {journaled:.2f} s journaled, {plain:.2f} s without the"
              f" journal ({journaled / plain:.3f}x)")
        source = folder / "journaled.sqlite"
        kept, old = bench_correct(folder, source, min(args.edits, args.memories // 50))
        n = min(args.edits, args.memories // 50)
        print(f"{n} corrections: {kept / n * 1000:.2f} ms each keeping the id (journaled), {old / n * 1000:.2f} ms"
              f" each with a new id ({kept / old:.2f}x)")
        bulk, singles = bench_forget(folder, source)
        print(f"forget 50: {bulk * 1000:.1f} ms as one operation, {singles * 1000:.1f} ms as 50 single forgets"
              f" ({bulk / singles:.2f}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
