"""Helpers shared by tests: byte scans of vault files, file hashes, running the CLI in-process."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

VAULT_SUFFIXES = ("", "-wal", "-shm", "-journal")


def vault_files(path: Path) -> list[Path]:
    return [Path(str(path) + s) for s in VAULT_SUFFIXES if Path(str(path) + s).exists()]


def _vault_bytes(path: Path) -> dict[str, bytes]:
    """Each vault file's bytes by name, leaving out one that went away between the listing and the read.

    A rollback journal lives only for the length of a write: one made by a background
    connection can vanish while a test scans the vault's files.
    """
    found: dict[str, bytes] = {}
    for p in vault_files(path):
        with contextlib.suppress(FileNotFoundError):
            found[p.name] = p.read_bytes()
    return found


def bytes_hits(path: Path, needle: str) -> dict[str, int]:
    """How often ``needle`` (UTF-8) occurs in each vault file: db, -wal, -shm, -journal."""
    raw = needle.encode()
    return {name: data.count(raw) for name, data in _vault_bytes(path).items()}


def total_hits(path: Path, needle: str) -> int:
    return sum(bytes_hits(path, needle).values())


def file_hashes(path: Path) -> dict[str, str]:
    return {name: hashlib.sha256(data).hexdigest() for name, data in _vault_bytes(path).items()}


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


def unit_rows(mat: Any) -> Any:
    """``mat``'s rows scaled to length 1, as float32 (what the vector index stores)."""
    import numpy as np

    return (mat / np.linalg.norm(mat, axis=1, keepdims=True)).astype(np.float32)


def structured_vectors(n: int, seed: int = 3) -> Any:
    """Unit vectors with the low-rank structure of sentence embeddings (topics + noise)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    topics = rng.normal(size=(40, 384))
    return unit_rows(rng.dirichlet(np.full(40, 0.3), size=n) @ topics + rng.normal(scale=0.2, size=(n, 384)))


def fill_vectors(vault: Any, mat: Any, model: str = "test") -> list[int]:
    """One fact per row of ``mat`` (texts ``fact i``), each with that row as its vector of ``model``."""
    from vodou_desktop.vault.facts import insert_fact, set_embeddings
    from vodou_desktop.vault.sources import stamp_source

    def job(conn: Any, change: Any) -> list[int]:
        source = stamp_source(conn, change, kind="bench", tier="first_party")
        ids = [insert_fact(conn, change, text=f"fact {i}", source_id=source) for i in range(len(mat))]
        set_embeddings(conn, change, zip(ids, mat, strict=True), model=model)
        return ids

    return list(vault.write(job))


def delete_rows(vault: Any, chunk_ids: list[int]) -> None:
    """Delete chunks outright (as an erase does), telling listeners which rows went."""
    def job(conn: Any, change: Any) -> None:
        conn.executemany("DELETE FROM chunks WHERE id = ?", [(i,) for i in chunk_ids])
        change.touch("chunks", chunk_ids=chunk_ids)

    vault.write(job)


def free_port() -> int:
    """A port nobody listens on right now, for a server a test starts itself."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def closed_port() -> Iterator[int]:
    """A port the test owns and keeps closed: bound (so nothing else can take it) but never listening,
    so every connection to it is refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield int(sock.getsockname()[1])


def own_bridge_port(config_file: Path, **settings: Any) -> int:
    """Write the app's settings with a bridge port of the test's own (never the default port, where a
    developer's own Vodou may be running), plus ``settings``; returns the port."""
    port = free_port()
    config_file.parent.mkdir(parents=True, exist_ok=True)
    config_file.write_text(json.dumps({"bridge_port": port, **settings}))
    return port


def break_not_null(path: Path) -> None:
    """Damage a vault the way only ``PRAGMA quick_check`` sees: a NULL where the schema now says NOT
    NULL, in a table of its own. Every read and write of the vault's own tables still works."""
    import apsw

    conn = apsw.Connection(str(path))
    try:
        conn.execute("CREATE TABLE damage(a); INSERT INTO damage VALUES (NULL)")
        conn.execute("PRAGMA writable_schema=ON")
        conn.execute("UPDATE sqlite_schema SET sql = 'CREATE TABLE damage(a NOT NULL)' WHERE name = 'damage'")
    finally:
        conn.close()


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def share_model_graph(model: Any, home: Path) -> Path:
    """The session model's exported ONNX graph, table and record placed in ``home``'s cache folder
    (hard links, else copies keeping the files' times), so a ``vodou`` process with
    ``VODOU_HOME=home`` finds the model ready instead of exporting it again; returns that folder."""
    import os
    import shutil

    source = model._cache_dir / "models"
    target = home / "cache" / "models"
    target.mkdir(parents=True, exist_ok=True)
    for path in source.iterdir() if source.is_dir() else ():  # the bundled default model has no export
        if path.suffix in (".onnx", ".npy", ".json") and not (target / path.name).exists():
            try:
                os.link(path, target / path.name)
            except OSError:
                shutil.copy2(path, target / path.name)
    return target
