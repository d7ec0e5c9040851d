"""Helpers shared by tests: byte scans of vault files, file hashes, running the CLI in-process."""

from __future__ import annotations

import contextlib
import hashlib
import io
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

VAULT_SUFFIXES = ("", "-wal", "-shm", "-journal")


def vault_files(path: Path) -> list[Path]:
    return [Path(str(path) + s) for s in VAULT_SUFFIXES if Path(str(path) + s).exists()]


def bytes_hits(path: Path, needle: str) -> dict[str, int]:
    """How often ``needle`` (UTF-8) occurs in each vault file: db, -wal, -shm."""
    raw = needle.encode()
    return {p.name: p.read_bytes().count(raw) for p in vault_files(path)}


def total_hits(path: Path, needle: str) -> int:
    return sum(bytes_hits(path, needle).values())


def file_hashes(path: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in vault_files(path)}


@dataclass
class CliResult:
    code: int
    out: str
    err: str


def run_cli(*args: str) -> CliResult:
    """Run ``vodou ARGS`` in this process (fast: the session's model is reused)."""
    from vodou_desktop.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse usage errors
            code = int(exc.code or 0)
    return CliResult(code, out.getvalue(), err.getvalue())


OPM_START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


class DateClock:
    """A wall clock the test moves by hand (operator-memory expiry and recency)."""

    def __init__(self, start: datetime = OPM_START) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> datetime:
        self.now += timedelta(**delta)
        return self.now
