"""DATA-1..3 through crashes: ``vodou backup``, ``restore``, ``encrypt``, ``decrypt`` and ``export``
killed (SIGKILL, by ``strace -e inject``) just before each of their file renames and file copies.

After each kill: the vault opens with the right key and holds every memory it held before (a
restore gives the old vault or the backup, never a mix and never nothing); the command run again
succeeds; then no 0-byte and no half-written (``.partial``) file is left, and after ``encrypt`` no
file holds a memory's text in the clear. The killed command runs in a subprocess that registers
only its own subcommand (what ``vodou`` runs after parsing, without importing every other command),
so each run is quick; the checks run in this process. Each call is hit in turn (K = 1, 2, …) until
the command runs to its end without reaching a K-th call.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support import run_cli
from vodou_desktop import config
from vodou_desktop.data import rolling
from vodou_desktop.data.backup import backup_vault, verify_backup
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.vault import ALL_PROJECTS, FactFilter, Vault, cipher
from vodou_desktop.vault import query as q
from vodou_desktop.vault.keystore import VaultKeyStore

pytestmark = pytest.mark.skipif(shutil.which("strace") is None, reason="strace is not installed (.ci/system-deps.sh)")

CANARY = "zebracanary"
STEPS = ("rename", "sendfile")  # every rename, and every file copy (shutil.copyfile uses sendfile on Linux)
MAX_STEPS = 30  # a bound on the loop: more calls than this is itself a failure
DRIVER = textwrap.dedent("""
    import argparse, importlib, sys
    from vodou_desktop.errors import KnownError
    parser = argparse.ArgumentParser(prog="vodou")
    parser.add_argument("--vault")
    sub = parser.add_subparsers(dest="command")
    importlib.import_module("vodou_desktop.cli." + {"decrypt": "encrypt"}.get(sys.argv[1], sys.argv[1])).register(sub)
    args = parser.parse_args(sys.argv[2:])
    try:
        sys.exit(args.func(args) or 0)
    except KnownError as exc:
        print(f"vodou: error: {exc}", file=sys.stderr)
        sys.exit(2)
""")


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != cipher.PASSPHRASE_ENV}
    root = str(Path(__file__).resolve().parents[3])
    env.update(VODOU_HOME=str(home), VODOU_EMBEDDER="none", PYTHONDONTWRITEBYTECODE="1",
               PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring",
               PYTHONPATH=os.pathsep.join([root, env.get("PYTHONPATH", "")]))
    return env


def _run(home: Path, vault: Path, module: str, args: list[str], syscall: str | None = None,
         when: int = 0) -> subprocess.CompletedProcess[str]:
    """``vodou --vault VAULT <args>``; with ``syscall``, killed just before its ``when``-th call."""
    cmd = [sys.executable, "-c", DRIVER, module, "--vault", str(vault), module, *args]
    if syscall:
        cmd = ["strace", "-f", "-qq", "-o", os.devnull, "-e", f"trace={syscall}",
               "-e", f"inject={syscall}:signal=KILL:when={when}", *cmd]
    return subprocess.run(cmd, env=_env(home), capture_output=True, text=True, timeout=120)


def _texts(vault: Path) -> set[str]:
    cipher.forget_keys()
    with Vault.open(vault) as v:  # the next start: finishes or rolls back what the kill left
        return {f.text for f in v.read(lambda c: q.list_facts(c, FactFilter(project=ALL_PROJECTS), limit=10**6))}


def _files(*folders: Path) -> list[Path]:
    return [p for folder in folders if folder.is_dir() for p in folder.rglob("*") if p.is_file()]


def _no_leftovers(*folders: Path) -> None:
    files = _files(*folders)
    assert [p for p in files if p.stat().st_size == 0] == []
    assert [p for p in files if p.name.endswith((".partial", ".restoring", ".encrypting", ".decrypting",
                                                 ".operation"))] == []


def _clear_hits(*folders: Path) -> list[str]:
    return [p.name for p in _files(*folders) if CANARY.encode() in p.read_bytes()]


class Scene:
    """A fresh vault (three memories), its backups folder, and what the command is checked against."""

    def __init__(self, root: Path) -> None:
        self.root, self.home = root, root / "home"
        self.folder = root / "vaults"
        self.folder.mkdir(parents=True)
        self.vault = self.folder / "v.sqlite"
        self.backups = self.home / "data" / "backups"
        os.environ["VODOU_HOME"] = str(self.home)  # this process's checks see the same profile
        config.save(config.Settings(backups_folder=str(self.backups), backups_keep=3))
        with Vault.open(self.vault) as v:
            for i in range(3):
                remember(v, f"the {CANARY} number {i} grazes", Origin(kind="cli"))
        self.texts = _texts(self.vault)


def _restore_scene(root: Path) -> Scene:
    scene = Scene(root)
    backup_vault(scene.vault, root / "own.sqlite")
    with Vault.open(scene.vault) as v:
        remember(v, f"the {CANARY} written after the backup", Origin(kind="cli"))
    scene.texts = _texts(scene.vault)
    return scene


def _encrypt_scene(root: Path) -> Scene:
    scene = _restore_scene(root)
    assert run_cli("--vault", str(scene.vault), "restore", str(root / "own.sqlite")).code == 0  # a before-restore copy
    (root / "own.sqlite").unlink()
    Path(str(root / "own.sqlite") + ".manifest").unlink()
    assert rolling.run_if_due(scene.vault) is not None  # a plain rolling backup
    stale = scene.backups / f"{scene.vault.name}.backup-20260101-000000.partial"  # a killed backup's leftover
    stale.write_bytes(scene.vault.read_bytes())
    scene.texts = _texts(scene.vault)
    return scene


def _decrypt_scene(root: Path) -> Scene:
    scene = Scene(root)
    assert run_cli("--vault", str(scene.vault), "encrypt").code == 0
    return scene


def _backup_scene(root: Path) -> Scene:
    return Scene(root)


# command -> (scene, its arguments, the rerun's accepted exit codes)
COMMANDS: dict[str, tuple[Callable[[Path], Scene], Callable[[Scene], list[str]], set[int]]] = {
    "backup": (_backup_scene, lambda s: [], {0}),
    "restore": (_restore_scene, lambda s: [str(s.root / "own.sqlite")], {0}),
    "encrypt": (_encrypt_scene, lambda s: [], {0}),
    "decrypt": (_decrypt_scene, lambda s: [], {0, 2}),  # 2: the kill came after the switch, nothing left to do
    "export": (_backup_scene, lambda s: [str(s.root / "out.jsonl")], {0}),
}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_killed_at_every_rename_and_copy(command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make, arguments, rerun_codes = COMMANDS[command]
    monkeypatch.setenv("VODOU_EMBEDDER", "none")
    killed_at = []
    for syscall in STEPS:
        for k in range(1, MAX_STEPS + 1):  # every call in turn, until the command runs to its end
            scene = make(tmp_path / f"{syscall}-{k}")
            run = _run(scene.home, scene.vault, command, arguments(scene), syscall, k)
            if run.returncode == 0:
                break
            assert run.returncode in (-9, 128 + 9), f"{command} at {syscall} #{k}: {run.stderr}"
            killed_at.append((syscall, k))
            _check_after_kill(command, scene, arguments, rerun_codes, f"{syscall} #{k}")
        else:
            pytest.fail(f"vodou {command} made more than {MAX_STEPS} {syscall} calls")
    assert killed_at, f"vodou {command} renamed and copied nothing"


def _check_after_kill(command: str, scene: Scene, arguments: Callable[[Scene], list[str]], rerun_codes: set[int],
                      where: str) -> None:
    after = _texts(scene.vault)  # opens with the key in the keystore, whichever state the kill left
    expected = [scene.texts]
    if command == "restore":  # the old vault, or the backup it was restoring: never a mix, never nothing
        expected.append({t for t in scene.texts if "after the backup" not in t})
    assert after in expected, f"{command} killed at {where}: {sorted(after)}"
    if command == "export" and (scene.root / "out.jsonl").exists():
        lines = (scene.root / "out.jsonl").read_text(encoding="utf-8").splitlines()
        assert sum(CANARY in line for line in lines) == 3  # whole, or not there at all
        (scene.root / "out.jsonl").unlink()
    rerun = run_cli("--vault", str(scene.vault), command, *arguments(scene))
    assert rerun.code in rerun_codes, f"{command} rerun after a kill at {where}: {rerun.err}"
    assert rerun.err.count("\n") <= 2, rerun.err
    assert _texts(scene.vault) == (expected[-1] if command == "restore" else scene.texts)
    _no_leftovers(scene.folder, scene.backups)
    if command in ("encrypt", "decrypt"):
        assert cipher.is_encrypted(scene.vault) == (command == "encrypt")
    if command == "encrypt":
        assert cipher.key_opens(scene.vault, str(VaultKeyStore().get()))
        assert _clear_hits(scene.folder, scene.backups) == [], f"plaintext after encrypt (kill at {where})"
    for made in scene.backups.glob("*.manifest"):  # every backup Vodou keeps still proves itself
        verify_backup(made.with_name(made.name.removesuffix(".manifest")))


def test_a_restore_into_a_new_place_killed_at_its_rename_is_finished_at_the_next_start(tmp_path: Path) -> None:
    scene = _restore_scene(tmp_path)
    fresh = scene.folder / "fresh.sqlite"  # no vault there yet
    killed = _run(scene.home, fresh, "restore", [str(tmp_path / "own.sqlite")], "rename", 1)
    assert killed.returncode in (-9, 128 + 9), killed.stderr
    assert not fresh.exists() and fresh.with_name("fresh.sqlite.operation").exists()
    assert _texts(fresh) == {t for t in scene.texts if "after the backup" not in t}
    _no_leftovers(scene.folder)
