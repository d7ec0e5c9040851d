"""``vodou export`` as a command: the format follows the file's name, a full disk leaves nothing
behind and says so in one line, and an export of an encrypted vault says it is not encrypted."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

from tests.support import run_cli
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.vault import Vault

LIMIT = 48 * 1024  # bytes a file may grow to: above the vault's 32 KiB shared-memory file, below the export


def _seed(path: Path, n: int = 1) -> None:
    with Vault.open(path) as vault:
        for i in range(n):
            remember(vault, f"memory {i} about the heron by the river, padded to make the export long enough",
                     Origin(kind="cli"))


def test_a_markdown_name_gives_markdown_and_a_contradiction_is_refused(vault_path: Path, tmp_path: Path) -> None:
    _seed(vault_path)
    md = tmp_path / "memories.md"
    assert run_cli("--vault", str(vault_path), "export", str(md)).code == 0
    assert md.read_text().startswith("# Vodou memories") and "memory 0 about the heron" in md.read_text()
    jsonl = tmp_path / "memories.jsonl"
    assert run_cli("--vault", str(vault_path), "export", str(jsonl)).code == 0
    assert jsonl.read_text().startswith('{"format": "vodou-export"')
    refused = run_cli("--vault", str(vault_path), "export", "--format", "jsonl", str(tmp_path / "other.md"))
    assert refused.code == 2 and len(refused.err.strip().splitlines()) == 1 and "Markdown name" in refused.err
    assert not (tmp_path / "other.md").exists()


def test_a_full_disk_is_one_line_exit_2_and_no_partial_file(vault_path: Path, tmp_path: Path) -> None:
    _seed(vault_path, 120)
    out = tmp_path / "exports" / "all.jsonl"
    out.parent.mkdir()

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))

    proc = subprocess.run([sys.executable, "-m", "vodou_desktop", "--vault", str(vault_path), "export", str(out)],
                          capture_output=True, text=True, preexec_fn=small_files, env=os.environ, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [f"vodou: error: Could not write the export {out}: File too large; "
                                                "nothing was written"]
    assert list(out.parent.iterdir()) == []
    assert run_cli("--vault", str(vault_path), "export", str(out)).code == 0  # without the limit it fits
    assert out.stat().st_size > LIMIT
