"""``python -m bench.app_swap [--size 10000]``: what encrypting or restoring from the running app
costs over doing it with the app quit.

Builds one synthetic vault (``bench.build``, random vectors), then alternates, in the same process:
``encrypt_vault`` on a closed vault (what ``vodou encrypt`` does), and the same inside
``Vault.suspended()`` on an open vault with a reader thread querying it (what the app does: let go
of the file, convert, reopen), timing how long the app's reads wait. Then a restore of a backup
the same two ways. Prints wall and CPU seconds and the in-app/closed ratios, with the load average.
Never asserts timings.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.build import build
from vodou_desktop import config
from vodou_desktop.data.backup import backup_vault, restore_vault
from vodou_desktop.data.encryption import encrypt_vault
from vodou_desktop.vault import Vault, cipher
from vodou_desktop.vault.keystore import new_key

ROUNDS = 3


def _timed(work: Callable[[], Any]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    work()
    return time.perf_counter() - wall, time.process_time() - cpu


def _in_app(path: Path, work: Callable[[], Any]) -> tuple[float, float, float]:
    """``work`` while an open vault lets go of its file; also the longest wait of a read meanwhile."""
    vault = Vault.open(path)
    waits: list[float] = []
    stop = threading.Event()

    def reads() -> None:
        while not stop.is_set():
            t0 = time.perf_counter()
            vault.read(lambda c: c.execute("SELECT count(*) FROM chunks").fetchall())
            waits.append(time.perf_counter() - t0)
            time.sleep(0.01)

    reader = threading.Thread(target=reads)
    reader.start()
    time.sleep(0.1)

    def suspended() -> None:
        with vault.suspended():
            work()

    try:
        wall, cpu = _timed(suspended)
        time.sleep(0.1)
    finally:
        stop.set()
        reader.join()
        vault.close()
    return wall, cpu, max(waits)


def run(size: int, folder: Path) -> dict[str, Any]:
    source = folder / "source.sqlite"
    with Vault.open(source) as vault:
        build(vault, size, None)
    settings = config.Settings(backups_folder=str(folder / "backups"), backups_enabled=False)
    backup = folder / "backup.sqlite"
    backup_vault(source, backup)
    key = new_key()
    rows: dict[str, list[float]] = {k: [] for k in ("encrypt_closed_s", "encrypt_closed_cpu_s", "encrypt_app_s",
                                                    "encrypt_app_cpu_s", "encrypt_read_wait_s", "restore_closed_s",
                                                    "restore_app_s", "restore_read_wait_s")}
    load = [round(os.getloadavg()[0], 2)]
    for n in range(ROUNDS):
        for name in ("closed", "app"):
            work = folder / f"{name}-{n}.sqlite"
            shutil.copyfile(source, work)
            cipher.forget_keys()
            if name == "closed":
                wall, cpu = _timed(lambda w=work: encrypt_vault(w, key, settings=settings))  # type: ignore[misc]
            else:
                wall, cpu, wait = _in_app(work, lambda w=work: encrypt_vault(w, key, settings=settings))  # type: ignore[misc]
                rows["encrypt_read_wait_s"].append(wait)
            rows[f"encrypt_{name}_s"].append(wall)
            rows[f"encrypt_{name}_cpu_s"].append(cpu)
            target = folder / f"restore-{name}-{n}.sqlite"
            shutil.copyfile(source, target)
            cipher.forget_keys()
            if name == "closed":
                wall, _cpu = _timed(lambda t=target: restore_vault(backup, t))  # type: ignore[misc]
            else:
                wall, _cpu, wait = _in_app(target, lambda t=target: restore_vault(backup, t))  # type: ignore[misc]
                rows["restore_read_wait_s"].append(wait)
            rows[f"restore_{name}_s"].append(wall)
    load.append(round(os.getloadavg()[0], 2))
    out: dict[str, Any] = {k: round(statistics.median(v), 3) for k, v in rows.items()}
    out["encrypt_ratio_app_over_closed"] = round(out["encrypt_app_s"] / out["encrypt_closed_s"], 2)
    out["restore_ratio_app_over_closed"] = round(out["restore_app_s"] / out["restore_closed_s"], 2)
    out.update(size=size, vault_mb=round(source.stat().st_size / 1_048_576, 1), rounds=ROUNDS,
               load_average_1min=load)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.app_swap", description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000, help="chunks in the synthetic vault")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        print(json.dumps(run(args.size, Path(tmp)), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
