"""Shared by the packaging tests: a clean copy of the tracked files, and running the shipped tools."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def clean_copy(dest: Path) -> Path:
    """The files git tracks, as they are in the working tree, copied to ``dest`` (no build output,
    no venv, no untracked files): what a fresh clone would build from."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: cannot tell which files are tracked")
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True).stdout
    for name in listed.decode().split("\0"):
        if not name:
            continue
        src = ROOT / name
        if not src.is_file():  # deleted in the working tree, not yet committed
            continue
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target)
    return dest


def run(cmd: list[str], *, timeout: float = 900, **kwargs: object) -> subprocess.CompletedProcess[str]:
    """Run ``cmd``; on a non-zero exit fail with its output (not a bare CalledProcessError)."""
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kwargs)  # type: ignore[call-overload]
    if proc.returncode != 0:
        pytest.fail(f"{' '.join(map(str, cmd))} exited {proc.returncode}\nstdout:\n{proc.stdout[-4000:]}\n"
                    f"stderr:\n{proc.stderr[-4000:]}")
    return proc


def require_tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not installed: run `make system-deps` (.ci/system-deps.sh installs it)")
    return path


PYTHON = sys.executable
