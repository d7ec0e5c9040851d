"""One device's side of sync (docs/sync.md): send this vault's changes, apply the other devices'.

A run, under a lock next to the vault (one run at a time per vault, whichever process):

1. send: the journal becomes change records with clock stamps, committed into the outbox together with
   the next sequence number; then each outbox entry is sealed and renamed into the folder, and dropped;
2. read the devices' sealed ``device.vsd`` files (an unknown or unreadable device folder is refused in
   one line and skipped);
3. a device that has just joined bootstraps from the best snapshot in the folder;
4. apply each device's files in sequence order, one transaction per file (records, what follows from
   them, and the file's number and digest land together: a kill at any moment loses nothing and the
   next run resumes at the first file not recorded); a refused file stops that device only;
5. after any erase (here or applied), rewrite this device's own files and snapshot without the erased
   rows, so their text leaves the folder; then flush the vault's WAL;
6. write this device's ``device.vsd`` (what it has applied: others compact by it), a snapshot when due,
   and delete its own change files every device has applied and its snapshot covers.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import apsw

from vodou_desktop.errors import Conflict, InvalidInput, KnownError
from vodou_desktop.sync import sealing
from vodou_desktop.sync.folder import SyncFolder, new_device_id, read_bytes, write_atomic
from vodou_desktop.sync.sealing import FolderKeys, Refused
from vodou_desktop.vault import Change, Vault
from vodou_desktop.vault import sync_store as st
from vodou_desktop.vault.clock import now_iso
from vodou_desktop.vault.connection import scalar
from vodou_desktop.vault.hlc import Clock, ms_of
from vodou_desktop.vault.settings_store import get_setting, set_setting
from vodou_desktop.words import plural

log = logging.getLogger(__name__)
SNAPSHOT_EVERY = 32  # own change files between two snapshots
S = {k: f"sync_{k}" for k in ("device_id", "device_name", "folder", "key", "hlc", "next_seq", "problems",
                              "paused", "last_run", "snapshot_seq", "bootstrap", "rewrite", "created_at")}
_run_locks: dict[str, threading.Lock] = {}
_run_locks_guard = threading.Lock()


def opm_ceilings() -> dict[str, int]:
    from vodou_desktop.governance.opm import CATEGORIES

    return {name: cat.ceiling for name, cat in CATEGORIES.items()}


@dataclass(frozen=True)
class SyncConfig:
    device: str
    name: str
    folder: Path
    secret: bytes

    @property
    def keys(self) -> FolderKeys:
        return FolderKeys.from_secret(self.secret)


@dataclass
class RunReport:
    sent: list[int] = field(default_factory=list)
    applied: dict[str, int] = field(default_factory=dict)  # device -> files applied this run
    refused: list[str] = field(default_factory=list)
    waiting: dict[str, int] = field(default_factory=dict)  # device -> files waiting for an earlier one
    erased: int = 0
    rewritten: int = 0
    compacted: int = 0
    snapshot: bool = False
    bootstrapped_from: str | None = None
    warnings: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = []
        if self.bootstrapped_from:
            out.append(f"joined from the snapshot of device {self.bootstrapped_from}")
        out.append(f"sent {plural(len(self.sent), 'change file')}; applied {sum(self.applied.values())} from "
                   f"{plural(len(self.applied), 'device')}")
        if self.erased:
            out.append(f"erased {plural(self.erased, 'row')} here; rewrote {self.rewritten} of this device's files "
                       "without them")
        out += [f"waiting: {plural(n, 'file')} of device {d}, until an earlier one arrives"
                for d, n in self.waiting.items()]
        return out + self.warnings


class NotSetUp(KnownError):
    pass


class SyncEngine:
    def __init__(self, vault: Vault) -> None:
        self.vault = vault
        self.ceilings = opm_ceilings()

    # -- configuration ------------------------------------------------------------------------------
    def config(self) -> SyncConfig | None:
        def read(conn: apsw.Connection) -> SyncConfig | None:
            device, key, folder = (get_setting(conn, S[k]) for k in ("device_id", "key", "folder"))
            if not (device and key and folder):
                return None
            return SyncConfig(device, get_setting(conn, S["device_name"]) or device, Path(folder), bytes.fromhex(key))

        return self.vault.read(read)

    def require(self) -> SyncConfig:
        cfg = self.config()
        if cfg is None:
            raise NotSetUp("Sync is not set up for this vault: run `vodou sync setup FOLDER` on the first computer "
                           "and `vodou sync join FOLDER` on the others.")
        return cfg

    def setup(self, folder: Path, name: str, secret: bytes, *, joining: bool) -> SyncConfig:
        folder = folder.expanduser().resolve()
        if not folder.is_dir():
            raise InvalidInput(f"The sync folder {folder} does not exist; create it (or let the sync engine "
                               "create it) first.")
        if self.config() is not None:
            raise Conflict("This vault already syncs; run `vodou sync leave` first to change folder.")
        others = [d for d in SyncFolder(folder).entries()]
        if not joining and others:
            raise Conflict(f"{folder} already holds a synced vault ({plural(len(others), 'device')}): join it with "
                           "`vodou sync join` and its key instead.")
        keys = FolderKeys.from_secret(secret)
        if joining:
            self._check_key_opens(SyncFolder(folder), keys)
        name = _clean_name(name)
        device = new_device_id()

        def job(conn: apsw.Connection, change: Change) -> None:
            for k, value in (("device_id", device), ("device_name", name), ("folder", str(folder)),
                             ("key", secret.hex()), ("next_seq", "1"), ("created_at", now_iso()),
                             ("bootstrap", "1" if joining else "0")):
                set_setting(conn, change, S[k], value)
            st.journal_everything(conn)
            st.set_capture(conn, change, True)

        self.vault.write(job)
        SyncFolder(folder).device_dir(device).mkdir(parents=True, exist_ok=True)
        return self.require()

    def _check_key_opens(self, folder: SyncFolder, keys: FolderKeys) -> None:
        devices = folder.entries()
        if not devices:
            raise InvalidInput(f"{folder.root} holds no synced vault yet: run `vodou sync setup` on the first "
                               "computer, and wait for its files to arrive here.")
        for device in devices:
            data = read_bytes(folder.device_file(device))
            if data is None:
                continue
            with contextlib.suppress(Refused):
                sealing.unseal(keys, "d", device, 0, data)
                return
        raise InvalidInput("This key does not open the synced vault in that folder (wrong key, or the folder "
                           "belongs to another vault); nothing was changed.")

    def leave(self) -> SyncConfig:
        cfg = self.require()
        with self._locked():
            self._write_device_file(cfg, left=True)

            def job(conn: apsw.Connection, change: Change) -> None:
                st.set_capture(conn, change, False)
                conn.execute("DELETE FROM settings WHERE key LIKE 'sync\\_%' ESCAPE '\\' AND key != ?",
                             (st.SYNC_CAPTURE_SETTING,))
                conn.execute("DELETE FROM sync_journal")
                conn.execute("DELETE FROM sync_peers")
                conn.execute("DELETE FROM sync_applied")
                conn.execute("DELETE FROM sync_parked")
                conn.execute("DELETE FROM sync_outbox")
                conn.execute("DELETE FROM sync_clock")

            self.vault.write(job)
        return cfg

    def set_paused(self, paused: bool) -> None:
        self.require()
        self.vault.write(lambda conn, change: set_setting(conn, change, S["paused"], "1" if paused else "0"))

    # -- a run -----------------------------------------------------------------------------------------
    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """One run at a time for this vault: a lock in this process and one on a file beside the vault."""
        name = str(self.vault.path.resolve())
        with _run_locks_guard:
            lock = _run_locks.setdefault(name, threading.Lock())
        with lock:
            path = self.vault.path.with_name(self.vault.path.name + ".sync-lock")
            with path.open("a") as fh:
                fcntl.flock(fh, fcntl.LOCK_EX)
                try:
                    yield
                finally:
                    fcntl.flock(fh, fcntl.LOCK_UN)

    def run(self, *, force_snapshot: bool = False) -> RunReport:
        cfg = self.require()
        report = RunReport()
        with self._locked():
            folder = SyncFolder(cfg.folder)
            if not cfg.folder.is_dir():
                raise KnownError(f"The sync folder {cfg.folder} is not there (unmounted drive, or moved?); "
                                 "nothing was synced.")
            for versions in folder.versioning_folders():
                report.warnings.append(
                    f"warning: {versions} keeps old copies of files: turn off file versioning for this folder in "
                    "the sync engine, or erased memories stay readable there (sealed) until it expires them")
            self._send(cfg, folder, report)
            devices = self._read_devices(cfg, folder, report)
            if self.vault.read(lambda c: get_setting(c, S["bootstrap"])) == "1":
                self._from_snapshot(cfg, folder, devices, report, None)
            gaps = self._compacted_away(folder, devices)
            if gaps:  # files this device still needs were compacted before it was known: a snapshot has them
                self._from_snapshot(cfg, folder, devices, report, gaps)
            for device, meta in sorted(devices.items()):
                self._receive(cfg, folder, device, meta, report)
            if self.vault.read(lambda c: get_setting(c, S["rewrite"])) == "1":
                self._rewrite_own(cfg, folder, report)
            self._write_device_file(cfg)
            self._maybe_snapshot(cfg, folder, report, force=force_snapshot)
            self._compact(cfg, folder, devices, report)
            self._save_outcome(report)
        return report

    # -- sending ---------------------------------------------------------------------------------------
    def _send(self, cfg: SyncConfig, folder: SyncFolder, report: RunReport) -> None:
        def job(conn: apsw.Connection, change: Change) -> None:
            clock = Clock.load(cfg.device, get_setting(conn, S["hlc"]))
            records, last = st.take_journal(conn, lambda at: clock.tick(ms_of(at)))
            if records:
                seq = int(get_setting(conn, S["next_seq"]) or "1")
                for rec in records:
                    if rec["f"] not in ("create", "erase"):
                        st.set_clock(conn, rec["e"], rec["k"], rec["f"], rec["h"])
                erased = st.record_own_erasures(conn, records)
                if erased:
                    st.purge_outbox(conn, erased)
                    set_setting(conn, change, S["rewrite"], "1")
                st.put_outbox(conn, seq, records)
                set_setting(conn, change, S["next_seq"], str(seq + 1))
            if last:
                st.drop_journal(conn, last)
            set_setting(conn, change, S["hlc"], clock.state())

        self.vault.write(job)
        for seq, records in self.vault.read(st.outbox):
            self._write_change(cfg, folder, seq, records)
            self.vault.write(_dropper(seq))
            report.sent.append(seq)

    def _write_change(self, cfg: SyncConfig, folder: SyncFolder, seq: int, records: list[st.Record]) -> bool:
        """Seal and place change file ``seq``; a file already there (a crash after its rename, or a rewrite)
        keeps its place: the same content is left as it is, other content goes in as its next generation."""
        path = folder.change_path(cfg.device, seq)
        gen = 0
        existing = read_bytes(path)
        if existing is not None:
            with contextlib.suppress(Refused):
                old = sealing.unseal(cfg.keys, "c", cfg.device, seq, existing)
                if old.get("records") == records:
                    return False
                gen = int(old.get("gen", 0)) + 1
        payload = {"v": 1, "device": cfg.device, "seq": seq, "gen": gen, "records": records}
        write_atomic(path, sealing.seal(cfg.keys, "c", cfg.device, seq, payload))
        return True

    # -- devices -----------------------------------------------------------------------------------------
    def _read_devices(self, cfg: SyncConfig, folder: SyncFolder, report: RunReport) -> dict[str, dict[str, Any]]:
        devices: dict[str, dict[str, Any]] = {}
        for entry in folder.entries():
            if entry == cfg.device:
                continue
            where = f"vodou/{entry}"
            data = read_bytes(folder.device_file(entry)) if _is_device_id(entry) else None
            if data is None:
                if folder.change_files(entry) or not _is_device_id(entry):
                    report.refused.append(f"refused {where}: unknown device (no device record of this vault); "
                                          "its files are ignored")
                continue
            try:
                meta = sealing.unseal(cfg.keys, "d", entry, 0, data)
            except Refused as exc:
                report.refused.append(f"refused {where}/device.vsd: {exc}; this device's files are ignored")
                continue
            devices[entry] = meta
        known = self.vault.read(st.peers)

        def job(conn: apsw.Connection, change: Change) -> None:
            for device, meta in devices.items():
                if device not in known or known[device]["name"] != meta.get("name") \
                        or known[device]["left_at"] != meta.get("left_at"):
                    st.upsert_peer(conn, device, meta.get("name"), meta.get("left_at"))

        self.vault.write(job)
        return devices

    def _write_device_file(self, cfg: SyncConfig, *, left: bool = False) -> None:
        def read(conn: apsw.Connection) -> dict[str, Any]:
            acks = {d: p["last_seq"] for d, p in st.peers(conn).items()}
            seq = int(get_setting(conn, S["next_seq"]) or "1") - 1
            return {"v": 1, "device": cfg.device, "name": cfg.name, "created_at": get_setting(conn, S["created_at"]),
                    "acks": acks, "last_seq": seq, "left_at": None}

        meta = self.vault.read(read)
        if left:
            meta["left_at"] = now_iso()
        path = SyncFolder(cfg.folder).device_file(cfg.device)
        data = sealing.seal(cfg.keys, "d", cfg.device, 0, meta)
        if read_bytes(path) != data:
            write_atomic(path, data)

    # -- receiving -----------------------------------------------------------------------------------------
    def _receive(self, cfg: SyncConfig, folder: SyncFolder, device: str, meta: dict[str, Any],
                 report: RunReport) -> None:
        files = folder.change_files(device)
        last = int(self.vault.read(lambda c: st.peers(c).get(device, {}).get("last_seq", 0)))
        final = int(meta.get("last_seq", 0)) if meta.get("left_at") else None
        for seq in sorted(s for s in files if s <= last):
            self._check_applied(cfg, device, seq, files[seq], report)
        seq = last + 1
        while seq in files and (final is None or seq <= final):
            data = read_bytes(files[seq])
            if data is None:
                break
            try:
                payload = sealing.unseal(cfg.keys, "c", device, seq, data)
                if payload.get("device") != device or payload.get("seq") != seq:
                    raise Refused("names another device or number than its place")
            except Refused as exc:
                report.refused.append(f"refused vodou/{device}/{files[seq].name}: {exc}; later files of this "
                                      "device wait for it")
                break
            erased = self.vault.write(self._apply_job(cfg, device, seq, payload, sealing.digest(data)))
            report.erased += erased
            report.applied[device] = report.applied.get(device, 0) + 1
            seq += 1
        waiting = len([s for s in files if s >= seq and (final is None or s <= final)])
        if waiting:
            report.waiting[device] = waiting

    def _apply_job(self, cfg: SyncConfig, device: str, seq: int, payload: dict[str, Any], digest: str):  # type: ignore[no-untyped-def]
        records = list(payload.get("records", []))

        def job(conn: apsw.Connection, change: Change) -> int:
            out = st.Applier(conn, change, self.ceilings).run(records)
            clock = Clock.load(cfg.device, get_setting(conn, S["hlc"]))
            if out.max_stamp:
                clock.observe(out.max_stamp)
            set_setting(conn, change, S["hlc"], clock.state())
            at = _stamp_time(out.max_stamp)
            st.mark_applied(conn, device, seq, int(payload.get("gen", 0)), digest, at)
            if out.erased:
                st.purge_outbox(conn, out.erased)
                set_setting(conn, change, S["rewrite"], "1")
            return len(out.erased)

        return job

    def _check_applied(self, cfg: SyncConfig, device: str, seq: int, path: Path, report: RunReport) -> None:
        """A file already applied: the same bytes, or a later generation (rewritten after an erase), are
        fine; anything else repeats an old number: a replay, refused."""
        known = self.vault.read(lambda c: st.applied_file(c, device, seq))
        if known is None:
            return  # covered by the snapshot this device joined from
        data = read_bytes(path)
        if data is None or sealing.digest(data) == known[1]:
            return
        try:
            payload = sealing.unseal(cfg.keys, "c", device, seq, data)
        except Refused as exc:
            report.refused.append(f"refused vodou/{device}/{path.name}: {exc}")
            return
        gen = int(payload.get("gen", 0))
        if gen > known[0]:
            digest = sealing.digest(data)
            self.vault.write(lambda c, ch: st.mark_applied(c, device, seq, gen, digest, None))
            return
        report.refused.append(f"refused vodou/{device}/{path.name}: repeats sequence number {seq} of that device, "
                              "already applied with other content (a replayed or restored old file)")

    # -- joining -------------------------------------------------------------------------------------------
    def _compacted_away(self, folder: SyncFolder, devices: dict[str, dict[str, Any]]) -> dict[str, int]:
        """Devices whose first change file in the folder comes after the next one this device needs: the
        number a snapshot must cover for each."""
        known = self.vault.read(st.peers)
        gaps = {}
        for device, meta in devices.items():
            files = folder.change_files(device)
            last = known.get(device, {}).get("last_seq", 0)
            written = int(meta.get("last_seq", 0))  # what the device says it has written
            if last < written and last + 1 not in files and (not files or min(files) > last + 1):
                gaps[device] = min(files) - 1 if files else written
        return gaps

    def _from_snapshot(self, cfg: SyncConfig, folder: SyncFolder, devices: dict[str, dict[str, Any]],
                       report: RunReport, needed: dict[str, int] | None) -> None:
        """Apply the best snapshot: when joining (``needed`` None), the one covering most; else one that
        covers the ``needed`` numbers. Applying a snapshot is always safe (the merge is idempotent and
        commutative); the numbers it covers are then taken as applied."""
        best: tuple[int, str, dict[str, Any]] | None = None
        for device in devices:
            data = read_bytes(folder.snapshot_file(device))
            if data is None:
                continue
            try:
                snap = sealing.unseal(cfg.keys, "s", device, 0, data)
            except Refused as exc:
                report.refused.append(f"refused vodou/{device}/snapshot.vss: {exc}")
                continue
            weight = sum(int(v) for v in snap.get("vector", {}).values())
            if not _usable(snap, folder, devices):
                continue
            if needed and any(int(snap.get("vector", {}).get(d, 0)) < seq for d, seq in needed.items()):
                continue
            if best is None or weight > best[0]:
                best = (weight, device, snap)
        if best is not None:
            _, device, snap = best
            records = list(snap.get("records", []))
            vector = {str(k): int(v) for k, v in snap.get("vector", {}).items() if k != cfg.device}

            def job(conn: apsw.Connection, change: Change) -> int:
                out = st.Applier(conn, change, self.ceilings).run(records)
                for dev, seq in vector.items():
                    st.set_last_seq(conn, dev, seq)
                clock = Clock.load(cfg.device, get_setting(conn, S["hlc"]))
                if out.max_stamp:
                    clock.observe(out.max_stamp)
                set_setting(conn, change, S["hlc"], clock.state())
                set_setting(conn, change, S["bootstrap"], "0")
                if out.erased:  # erased rows this device's own files may hold: they are written again
                    st.purge_outbox(conn, out.erased)
                    set_setting(conn, change, S["rewrite"], "1")
                return len(out.erased)

            report.erased += self.vault.write(job)
            if needed is None:
                report.bootstrapped_from = devices[device].get("name") or device
        elif needed:
            report.warnings.append(f"waiting: {plural(len(needed), 'device')} compacted change files this device still "
                                   "needs; their next snapshot brings them")
        else:
            self.vault.write(lambda conn, change: set_setting(conn, change, S["bootstrap"], "0"))

    # -- after an erase -------------------------------------------------------------------------------------
    def _rewrite_own(self, cfg: SyncConfig, folder: SyncFolder, report: RunReport) -> None:
        """Every own change file that holds an erased row, or an operation's target since redacted, is written
        again without it (its next generation); the snapshot too. Then the WAL is flushed."""
        gone, targets = self.vault.read(lambda c: (st.tombstones(c), st.sent_targets(c)))
        for seq, path in sorted(folder.change_files(cfg.device).items()):
            data = read_bytes(path)
            if data is None:
                continue
            try:
                payload = sealing.unseal(cfg.keys, "c", cfg.device, seq, data)
            except Refused:
                continue
            records = _without(payload.get("records", []), gone, targets)
            if records != payload.get("records") and self._write_change(cfg, folder, seq, records):
                report.rewritten += 1
        if folder.snapshot_file(cfg.device).exists():
            self._write_snapshot(cfg, folder)
            report.rewritten += 1
        self.vault.write(lambda conn, change: set_setting(conn, change, S["rewrite"], "0"))
        self.vault.checkpoint()

    # -- snapshots and compaction -----------------------------------------------------------------------------
    def _maybe_snapshot(self, cfg: SyncConfig, folder: SyncFolder, report: RunReport, *, force: bool) -> None:
        last, at = self.vault.read(lambda c: (int(get_setting(c, S["next_seq"]) or "1") - 1,
                                               int(get_setting(c, S["snapshot_seq"]) or "0")))
        exists = folder.snapshot_file(cfg.device).exists()
        if force or (last > 0 and not exists) or last - at >= SNAPSHOT_EVERY:
            self._write_snapshot(cfg, folder)
            report.snapshot = True

    def _write_snapshot(self, cfg: SyncConfig, folder: SyncFolder) -> None:
        def read(conn: apsw.Connection) -> dict[str, Any]:
            vector = {d: p["last_seq"] for d, p in st.peers(conn).items()}
            vector[cfg.device] = int(get_setting(conn, S["next_seq"]) or "1") - 1
            parked = [json.loads(t) for (t,) in conn.execute("SELECT record FROM sync_parked ORDER BY id")]
            return {"v": 1, "device": cfg.device, "vector": vector, "records": st.state_records(conn) + parked}

        snap = self.vault.read(read)
        write_atomic(folder.snapshot_file(cfg.device), sealing.seal(cfg.keys, "s", cfg.device, 0, snap))
        seq = snap["vector"][cfg.device]
        self.vault.write(lambda conn, change: set_setting(conn, change, S["snapshot_seq"], str(seq)))

    def _compact(self, cfg: SyncConfig, folder: SyncFolder, devices: dict[str, dict[str, Any]],
                 report: RunReport) -> None:
        """Delete own change files that every device still syncing has applied and the snapshot covers."""
        covered = int(self.vault.read(lambda c: get_setting(c, S["snapshot_seq"]) or "0"))
        live = [m for m in devices.values() if not m.get("left_at")]
        known = self.vault.read(st.peers)  # a device known here whose record has not arrived counts as 0
        acks = [int(m.get("acks", {}).get(cfg.device, 0)) for m in live]
        acks += [0 for d, p in known.items() if d not in devices and not p["left_at"]]
        if not acks:
            return
        acked = min(acks)
        for seq, path in folder.change_files(cfg.device).items():
            if seq <= min(acked, covered):
                path.unlink(missing_ok=True)
                report.compacted += 1

    def _save_outcome(self, report: RunReport) -> None:
        def job(conn: apsw.Connection, change: Change) -> None:
            set_setting(conn, change, S["problems"], json.dumps(report.refused + report.warnings))
            set_setting(conn, change, S["last_run"], now_iso())

        self.vault.write(job)

    # -- status --------------------------------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        cfg = self.config()
        if cfg is None:
            return {"set_up": False}
        folder = SyncFolder(cfg.folder)

        def read(conn: apsw.Connection) -> dict[str, Any]:
            return {"set_up": True, "device": cfg.device, "name": cfg.name, "folder": str(cfg.folder),
                    "paused": get_setting(conn, S["paused"]) == "1", "last_run": get_setting(conn, S["last_run"]),
                    "pending_changes": st.pending_journal(conn) + len(st.outbox(conn)),
                    "problems": json.loads(get_setting(conn, S["problems"]) or "[]"),
                    "peers": st.peers(conn),
                    "parked": int(scalar(conn, "SELECT count(*) FROM sync_parked"))}

        out = self.vault.read(read)
        devices = []
        for device, peer in sorted(out.pop("peers").items()):
            files = folder.change_files(device)
            devices.append({"id": device, "name": peer["name"], "last_applied": peer["last_seq"],
                            "last_change_at": peer["last_change_at"], "left": peer["left_at"] is not None,
                            "pending_files": len([s for s in files if s > peer["last_seq"]])})
        out["devices"] = devices
        out["versioning"] = [str(p) for p in folder.versioning_folders()]
        return out

    def paused(self) -> bool:
        return self.vault.read(lambda c: get_setting(c, S["paused"])) == "1"


def _usable(snap: dict[str, Any], folder: SyncFolder, devices: dict[str, dict[str, Any]]) -> bool:
    """A snapshot can start a device when, for every device, the change files after what it covers are all
    still in the folder (none compacted away since it was written)."""
    vector = snap.get("vector", {})
    for device in devices:
        files = folder.change_files(device)
        if files and min(files) > int(vector.get(device, 0)) + 1:
            return False
    return True


def _dropper(seq: int) -> Any:
    return lambda conn, change: st.drop_outbox(conn, seq)


def _without(records: list[st.Record], gone: set[tuple[str, str]], targets: dict[str, str]) -> list[st.Record]:
    out = []
    for rec in records:
        if (rec["e"], rec["k"]) in gone and rec["f"] != "erase":
            continue
        if rec["e"] == "op" and rec["k"] in targets:
            if rec["f"] == "create" and rec["v"]["target"] != targets[rec["k"]]:
                rec = {**rec, "v": {**rec["v"], "target": targets[rec["k"]]}}
            elif rec["f"] == "target" and rec["v"] != targets[rec["k"]]:
                rec = {**rec, "v": targets[rec["k"]]}
        out.append(rec)
    return out


def _stamp_time(stamp: str) -> str | None:
    if not stamp or stamp.startswith("0000000000000"):
        return None
    from datetime import UTC, datetime

    return datetime.fromtimestamp(int(stamp[:13]) / 1000, UTC).isoformat(timespec="seconds")


def _is_device_id(name: str) -> bool:
    from vodou_desktop.sync.folder import DEVICE_ID

    return DEVICE_ID.fullmatch(name) is not None


def _clean_name(name: str) -> str:
    name = " ".join(str(name or "").split())
    if not name:
        raise InvalidInput("give this device a name (--name), such as 'laptop'")
    if len(name) > 60:
        raise InvalidInput("the device name is too long (60 characters at most)")
    return name


def resolve_join_key(typed: str) -> bytes:
    """A ``VSK1-`` sync key, or the vault's recovery key, to the folder's secret."""
    secret = sealing.parse_sync_key(typed)
    if secret is not None:
        return secret
    from vodou_desktop.data.recovery import from_recovery

    return bytes.fromhex(from_recovery(typed).removeprefix("vodou-key-1:"))
