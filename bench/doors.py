"""``python -m bench.doors [--size 12012]``: what the checks at the vault's doors cost.

In one process, on one generated export (``data.sample_vault``: memories without global ids, so an
import that meets them again matches them by text, project and source, its slowest path):

- reading the file: ``json.loads`` of every line (the baseline: what the import did before it had a
  schema) against ``read_jsonl`` (the same, plus every record checked against its type and the
  whole file against itself);
- importing it into an empty vault, then the same file again into that vault (everything already
  there: nothing written), and the export of that vault (global ids) into a vault that holds other
  memories, then again;
- opening the vault (``Vault.open`` + a read + close), with the schema comparison and with it turned
  off, alternating, after the expected schema was derived once (its cost printed on its own).

Prints seconds, per-record microseconds and the ratios, with the load average (the machine is
shared: compare ratios, not absolutes). Never asserts timings.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vodou_desktop.data.export import ExportScope, import_records, read_jsonl, write_jsonl
from vodou_desktop.data.sample_vault import sample_records
from vodou_desktop.vault import Vault, schema_objects
from vodou_desktop.vault.migrations import applied_migrations

ROUNDS = 5
OPEN_ROUNDS = 30  # an open is ~10 ms: many rounds, alternating, for a median the load does not swing


def _timed(work: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    out = work()
    return time.perf_counter() - start, out


def _plain_read(path: Path) -> list[Any]:
    with path.open("rb") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=12_012)
    args = parser.parse_args()
    n = args.size
    with tempfile.TemporaryDirectory(prefix="vodou-bench-doors-") as tmp:
        folder = Path(tmp)
        os.environ["VODOU_HOME"] = str(folder / "home")
        dump = folder / "generated.jsonl"
        dump.write_text("\n".join(json.dumps(r) for r in sample_records(n)) + "\n")
        plain = [_timed(lambda: _plain_read(dump))[0] for _ in range(ROUNDS)]
        checked = [_timed(lambda: read_jsonl(dump))[0] for _ in range(ROUNDS)]
        file = read_jsonl(dump)
        print(f"{n} memories, load average {os.getloadavg()[0]:.1f}")
        print(f"read: json.loads {statistics.median(plain):.2f} s, checked {statistics.median(checked):.2f} s "
              f"({statistics.median(checked) / statistics.median(plain):.1f}x; "
              f"{(statistics.median(checked) - statistics.median(plain)) / n * 1e6:.0f} us per record for the checks)")

        first_path = folder / "first.sqlite"
        with Vault.open(first_path) as vault:
            first, report = _timed(lambda: import_records(vault, file))
            again, again_report = _timed(lambda: import_records(vault, file))
            out = io.StringIO()
            write_jsonl(vault, ExportScope(), out)
        assert report.counts["memory"] == n and again_report.counts["memory"] == 0
        print(f"import into an empty vault: {first:.2f} s ({first / n * 1e6:.0f} us per memory)")
        print(f"the same file again (all {n} already there, matched by text): {again:.2f} s "
              f"({again / first:.2f}x of the first)")
        with_ids = read_jsonl(_write(folder / "with-ids.jsonl", out.getvalue()))
        with Vault.open(folder / "other.sqlite") as other:
            import_records(other, read_jsonl(_write(folder / "own.jsonl", "\n".join(
                json.dumps(r) for r in sample_records(100)) + "\n")))
            merged, _ = _timed(lambda: import_records(other, with_ids))
            merged_again, _ = _timed(lambda: import_records(other, with_ids))
        print(f"an export with global ids into a vault with memories: {merged:.2f} s; again (all there, by "
              f"sync_id): {merged_again:.2f} s ({merged_again / merged:.2f}x)")

        derive, _ = _timed(lambda: schema_objects.expected_objects(_done(first_path)))
        print(f"expected schema derived once per process: {derive * 1000:.1f} ms (cached after)")
        real = schema_objects.differences
        on, off = [], []
        for _ in range(OPEN_ROUNDS):
            on.append(_timed(lambda: _open_read(first_path))[0])
            schema_objects.differences = lambda conn, done, migrations=None: []  # type: ignore[assignment,misc]
            try:
                off.append(_timed(lambda: _open_read(first_path))[0])
            finally:
                schema_objects.differences = real  # type: ignore[assignment]
        print(f"open + read + close: with the schema check {statistics.median(on) * 1000:.1f} ms, without "
              f"{statistics.median(off) * 1000:.1f} ms ({statistics.median(on) / statistics.median(off):.2f}x)")


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def _done(path: Path) -> list[str]:
    import apsw

    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return applied_migrations(conn)
    finally:
        conn.close()


def _open_read(path: Path) -> int:
    with Vault.open(path) as vault:
        return int(vault.read(lambda c: c.execute("SELECT count(*) FROM chunks").fetchone()[0]))


if __name__ == "__main__":
    main()
