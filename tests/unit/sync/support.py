"""Devices on one machine, each with its own copy of the sync folder, and a stand-in for the engine that
copies files between the copies in a random order, a few at a time (delays), as Syncthing would."""

from __future__ import annotations

import io
import json
import random
import shutil
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vodou_desktop.data.export import ExportScope, write_jsonl
from vodou_desktop.sync import sealing
from vodou_desktop.sync.engine import RunReport, SyncEngine
from vodou_desktop.vault import Vault

SECRET = bytes(range(32))


@dataclass
class Device:
    name: str
    vault: Vault
    folder: Path

    @property
    def engine(self) -> SyncEngine:
        return SyncEngine(self.vault)

    def run(self) -> RunReport:
        return self.engine.run()

    @property
    def device_id(self) -> str:
        cfg = self.engine.config()
        assert cfg is not None
        return cfg.device


def make_devices(tmp: Path, names: list[str]) -> list[Device]:
    devices = []
    for name in names:
        folder = tmp / f"folder-{name}"
        folder.mkdir()
        devices.append(Device(name, Vault.open(tmp / f"{name}.sqlite"), folder))
    return devices


def connect(devices: list[Device], rng: random.Random) -> None:
    """The first device sets up, the others join once its files reached them."""
    first, *rest = devices
    first.engine.setup(first.folder, first.name, SECRET, joining=False)
    first.engine.run(force_snapshot=True)
    for device in rest:
        shuttle(devices, rng, share=1.0)
        device.engine.setup(device.folder, device.name, SECRET, joining=True)
        device.run()


def _files(folder: Path) -> dict[str, bytes]:
    base = folder / "vodou"
    if not base.exists():
        return {}
    return {str(p.relative_to(folder)): p.read_bytes() for p in base.rglob("*") if p.is_file()
            and not p.name.startswith(".")}


def shuttle(devices: list[Device], rng: random.Random, share: float = 0.5) -> int:
    """Copy a random ``share`` of the differences from each device's own files to every other copy, in a
    random order (a deletion is a difference too). Returns how many differences are left."""
    moves: list[tuple[Path, str, bytes | None]] = []
    for owner in devices:
        cfg = owner.engine.config()
        if cfg is None:
            continue
        mine = set(cfg.own)  # its own files, and its earlier identities' (before a restore) that it rewrites
        own = {k: v for k, v in _files(owner.folder).items() if k.split("/")[1] in mine}
        for other in devices:
            if other is owner:
                continue
            theirs = {k: v for k, v in _files(other.folder).items() if k.split("/")[1] in mine}
            moves += [(other.folder, k, v) for k, v in own.items() if theirs.get(k) != v]
            moves += [(other.folder, k, None) for k in theirs if k not in own]
    rng.shuffle(moves)
    chosen = moves[:max(1, int(len(moves) * share))] if moves else []
    for folder, rel, data in chosen:
        target = folder / rel
        if data is None:
            target.unlink(missing_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(".syncthing." + target.name + ".tmp")
        tmp.write_bytes(data)
        tmp.replace(target)
    return len(moves) - len(chosen)


def settle(devices: list[Device], rng: random.Random, rounds: int = 40, *, refusals: bool = False) -> None:
    """Copy and run in random orders until nothing is left to copy and a full round changes nothing. Between
    devices of one vault nothing is ever refused (a rewritten file takes its next generation, a restored
    vault a new identity): a refusal fails the test unless ``refusals`` says it is expected."""
    quiet = 0
    for _ in range(rounds):
        left = shuttle(devices, rng, share=rng.choice((0.3, 0.6, 1.0)))
        order = devices[:]
        rng.shuffle(order)
        busy = False
        for device in order:
            report = device.run()
            assert refusals or not report.refused, (device.name, report.refused)
            busy |= bool(report.sent or report.applied or report.rewritten or report.waiting)
        if left == 0 and not busy:
            quiet += 1
            if quiet == 2:
                return
        else:
            quiet = 0
    raise AssertionError("the devices did not settle")


def normalized_export(vault: Vault) -> list[dict[str, Any]]:
    """``vodou export --format jsonl`` without what is device-local: row ids and export numbering (refs and
    the memory an operation names become the memory's own words and times; a source is compared by its
    fields), conversation threads,
    fact groups, canonical flags, entities' row ids and links, capture input labels (source events),
    operator memory's last use. Everything sync carries is still compared."""
    out = io.StringIO()
    write_jsonl(vault, ExportScope(include_forgotten=True), out)
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    memories = {r["ref"]: r for r in records if r["type"] == "memory"}

    def key(ref: int | None) -> str | None:
        if ref is None:
            return None
        m = memories[ref]
        return f"{m['created_at']}|{m['revision']}|{m['text']}"

    by_id = {str(m["id"]): key(m["ref"]) for m in memories.values()}

    result = []
    for r in records:
        r = dict(r)
        if r["type"] == "operation" and r["kind"] in ("forget_fact", "correct_fact"):  # a memory's row id
            r["target"] = by_id.get(str(r["target"]), r["target"])
            detail = json.loads(r["detail"] or "{}")
            if "replaces" in detail:
                detail["replaces"] = by_id.get(str(detail["replaces"]), detail["replaces"])
            r["detail"] = detail
        if r["type"] == "memory":
            r["predecessor"], r["superseded_by"] = key(r["predecessor"]), key(r["superseded_by"])
            r["ref"] = key(r["ref"])
            for local in ("id", "thread_id", "thread_seq", "group", "canonical", "entities"):
                r.pop(local)
            for src in ("source", "pinned_from"):
                if r[src] is not None:
                    r[src] = {k: v for k, v in r[src].items() if k != "id"}
        if r["type"] == "entity":
            r.pop("id")
        if r["type"] == "source_event":
            continue
        if r["type"] == "operator_memory":
            r.pop("last_used_at")
        result.append(r)
    return sorted(result, key=lambda r: json.dumps(r, sort_keys=True))


def plaintexts(folder: Path) -> list[bytes]:
    """Every sync file of a folder copy, opened with the test key (what a key holder could read)."""
    keys = sealing.FolderKeys.from_secret(SECRET)
    out = []
    for path in (folder / "vodou").rglob("*"):
        if not path.is_file():
            continue
        data = path.read_bytes()
        nonce = data[4:16]
        from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

        device = path.parent.name
        kind = {"vsc": "c", "vsd": "d", "vss": "s"}[path.suffix[1:]]
        seq = int(path.stem) if kind == "c" else 0
        plain = ChaCha20Poly1305(keys.aead).decrypt(nonce, data[16:], sealing._aad(kind, device, seq))
        out.append(zlib.decompress(plain))
    return out


def vault_bytes(vault: Vault) -> bytes:
    vault.checkpoint()
    return b"".join(p.read_bytes() for p in vault.path.parent.glob(vault.path.name + "*") if p.is_file())


def copy_folder(src: Path, dst: Path) -> None:
    shutil.copytree(src, dst, dirs_exist_ok=True)


def fact_id(vault: Vault, text: str) -> int:
    """The visible memory with this text (its latest revision)."""
    row = vault.read(lambda c: c.execute("SELECT id FROM chunks WHERE text = ? AND superseded_by IS NULL"
                                         " ORDER BY id DESC", (text,)).fetchone())
    assert row is not None, f"{text!r} is not in {vault.path.name}"
    return int(row[0])


def texts(vault: Vault) -> set[str]:
    """Every memory's text in the vault, hidden or not."""
    return set(vault.read(lambda c: [r[0] for r in c.execute("SELECT text FROM chunks WHERE document_id IS NULL")]))


def visible(vault: Vault) -> set[str]:
    return set(vault.read(lambda c: [r[0] for r in c.execute(
        "SELECT text FROM chunks WHERE document_id IS NULL AND invalid_at IS NULL AND superseded_by IS NULL")]))


def restore(device: Device, backup: Path) -> None:
    """``vodou restore BACKUP`` on this device: the vault closed, replaced, opened again."""
    from vodou_desktop.data.backup import restore_vault

    device.vault.close()
    restore_vault(backup, device.vault.path)
    device.vault = Vault.open(device.vault.path)
