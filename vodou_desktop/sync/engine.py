"""One device's side of sync (docs/sync.md): send this vault's changes, apply the other devices'.

A run, under a lock next to the vault (one run at a time per vault, whichever process):

1. a vault that is not the one that wrote this device's files (restored from a backup, or a copy of it
   on another computer: the folder holds numbers it never gave) becomes a new device, a new
   *incarnation*: its numbers are never reused, its own earlier files are another device's to it;
2. send: the journal becomes change records with clock stamps, committed into the outbox together with
   the next sequence numbers (files of a bounded size); then each outbox entry is sealed and renamed into
   the folder, and dropped;
3. read the devices' sealed ``device.vsd`` files (an unknown or unreadable device folder is refused in
   one line and skipped; a computer removed by ``sync remove`` is ignored);
4. a device that has just joined bootstraps from the best snapshot in the folder;
5. apply each device's files in sequence order, one transaction per file (records, what follows from
   them, and the file's number and digest land together: a kill at any moment loses nothing and the
   next run resumes at the first file not recorded). Every file is measured before it is read and every
   record checked before any is applied (``sync.validate``); a file that breaks a rule, or fails while it
   is applied, is rolled back and refused in one line naming its computer and number, and holds back only
   the later files of its own device. Records of a kind only a newer version knows wait, kept;
6. after any erase (here or applied), rewrite this device's own files (and those of its earlier
   incarnations) and snapshot without the erased rows, so their text leaves the folder; erase the same
   rows in every copy of the vault Vodou keeps (backups, ``before-`` copies); then flush the vault's WAL;
7. write a snapshot when due, this device's ``device.vsd`` (what it has applied: others compact by it),
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

from vodou_desktop.errors import Conflict, InvalidInput, KnownError, NotFound, VaultUnavailable
from vodou_desktop.sync import sealing, validate
from vodou_desktop.sync.folder import (
    CHANGE_LIMIT,
    DEVICE_LIMIT,
    SyncFolder,
    TooLarge,
    new_device_id,
    read_bounded,
    snapshot_limit,
    write_atomic,
)
from vodou_desktop.sync.sealing import FolderKeys, Refused
from vodou_desktop.vault import Change, Vault
from vodou_desktop.vault import sync_store as st
from vodou_desktop.vault.clock import now_iso
from vodou_desktop.vault.connection import scalar
from vodou_desktop.vault.hlc import Clock, ms_of, parse
from vodou_desktop.vault.retraction import SYNC_HOST_KEY_SETTING
from vodou_desktop.vault.settings_store import get_setting, set_setting
from vodou_desktop.words import plural

log = logging.getLogger(__name__)
SNAPSHOT_EVERY = 32  # own change files between two snapshots
CHANGE_TARGET = 4 << 20  # the JSON a change file holds at most (one larger record goes alone)
S = {k: f"sync_{k}" for k in ("device_id", "device_name", "folder", "key", "hlc", "next_seq", "problems",
                              "paused", "last_run", "snapshot_seq", "bootstrap", "rewrite", "created_at",
                              "predecessors", "retire", "notes")}
_run_locks: dict[str, threading.Lock] = {}
_run_locks_guard = threading.Lock()
# errors of one file's apply that are the file's (it is refused, the rest carries on); the environment's
# (``VaultUnavailable``: a full disk, a locked vault) end the run instead
_BAD_APPLY = (KnownError, apsw.Error, ValueError, TypeError, KeyError, AssertionError, AttributeError)


def opm_ceilings() -> dict[str, int]:
    from vodou_desktop.governance.opm import CATEGORIES

    return {name: cat.ceiling for name, cat in CATEGORIES.items()}


@dataclass(frozen=True)
class SyncConfig:
    device: str
    name: str
    folder: Path
    secret: bytes
    predecessors: tuple[str, ...] = ()  # this vault's earlier device ids (before a restore)

    @property
    def keys(self) -> FolderKeys:
        return FolderKeys.from_secret(self.secret)

    @property
    def own(self) -> tuple[str, ...]:
        """Every device id whose files this vault writes: its own, and its earlier incarnations'."""
        return (self.device, *self.predecessors)


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
    notes: list[str] = field(default_factory=list)  # what happened that is no problem (a new incarnation)
    copies_rewritten: int = 0

    def lines(self) -> list[str]:
        out = []
        if self.bootstrapped_from:
            out.append(f"joined from the snapshot of device {self.bootstrapped_from}")
        out += self.notes
        out.append(f"sent {plural(len(self.sent), 'change file')}; applied {sum(self.applied.values())} from "
                   f"{plural(len(self.applied), 'device')}")
        if self.erased:
            out.append(f"erased {plural(self.erased, 'row')} here; rewrote {self.rewritten} of this device's files "
                       "without them")
        if self.copies_rewritten:
            out.append(f"erased them from {plural(self.copies_rewritten, 'copy')} of this vault too (backups, "
                       "copies from before a restore)")
        out += [f"waiting: {plural(n, 'file')} of device {d}, until an earlier one arrives"
                for d, n in self.waiting.items()]
        return out + self.warnings


class NotSetUp(KnownError):
    pass


class _NumberTaken(Exception):
    """This device's next number is already in the folder with other content: another vault wrote it."""


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
            earlier = tuple(json.loads(get_setting(conn, S["predecessors"]) or "[]"))
            return SyncConfig(device, get_setting(conn, S["device_name"]) or device, Path(folder), bytes.fromhex(key),
                              earlier)

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
            set_setting(conn, change, SYNC_HOST_KEY_SETTING, keys.host.hex())
            st.journal_everything(conn)
            st.set_capture(conn, change, True)

        self.vault.write(job)
        SyncFolder(folder).ensure_device_dir(device)
        return self.require()

    def _check_key_opens(self, folder: SyncFolder, keys: FolderKeys) -> None:
        devices = folder.entries()
        if not devices:
            raise InvalidInput(f"{folder.root} holds no synced vault yet: run `vodou sync setup` on the first "
                               "computer, and wait for its files to arrive here.")
        for device in devices:
            with contextlib.suppress(Refused, TooLarge):
                data = read_bounded(folder.device_file(device), DEVICE_LIMIT)
                if data is None:
                    continue
                sealing.unseal(keys, "d", device, 0, data, max_plain=4 * DEVICE_LIMIT)
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
                for table in ("sync_journal", "sync_peers", "sync_applied", "sync_parked", "sync_outbox",
                              "sync_clock", "sync_waiting"):
                    conn.execute(f"DELETE FROM {table}")

            self.vault.write(job)
        return cfg

    def set_paused(self, paused: bool) -> None:
        self.require()
        self.vault.write(lambda conn, change: set_setting(conn, change, S["paused"], "1" if paused else "0"))

    def remove(self, which: str) -> dict[str, Any]:
        """Remove a lost computer from the synced vault: every computer ignores its files from now on (this
        one's device record says so), and its files are deleted from the folder. It still holds the key."""
        cfg = self.require()
        with self._locked():
            peers = self.vault.read(st.peers)
            wanted = which.strip()
            found = [d for d, p in peers.items() if d == wanted or p["name"] == wanted
                     or (len(wanted) >= 4 and d.startswith(wanted.lower()))]
            if wanted in cfg.own:
                raise InvalidInput("that is this computer: run `vodou sync leave` to stop syncing here")
            if not found:
                names = ", ".join(f"{p['name'] or '?'} ({d})" for d, p in sorted(peers.items())) or "none yet"
                raise NotFound(f"no computer {wanted!r} in this synced vault; the others are: {names}")
            if len(found) > 1:
                raise Conflict(f"{wanted!r} names {len(found)} computers; give its id (`vodou sync status --json`)")
            device = found[0]
            self.vault.write(lambda conn, change: st.mark_removed(conn, device, now_iso()))
            folder = SyncFolder(cfg.folder)
            folder.require()
            deleted = 0
            if folder.device_dir(device).is_dir():
                for path in folder.device_dir(device).iterdir():
                    if path.is_file():
                        path.unlink()
                        deleted += 1
                with contextlib.suppress(OSError):
                    folder.device_dir(device).rmdir()
            self._write_device_file(cfg)
        return {"device": device, "name": peers[device]["name"], "files_deleted": deleted}

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
            folder.require()
            for versions in folder.versioning_folders():
                report.warnings.append(
                    f"warning: {versions} keeps old copies of files: turn off file versioning for this folder in "
                    "the sync engine, or erased memories stay readable there (sealed) until it expires them")
            folder.ensure_device_dir(cfg.device)
            cfg = self._check_incarnation(cfg, folder, report)
            cfg = self._send(cfg, folder, report)
            devices = self._read_devices(cfg, folder, report)
            if self.vault.read(lambda c: get_setting(c, S["bootstrap"])) == "1":
                self._from_snapshot(cfg, folder, devices, report, None)
            gaps = self._compacted_away(folder, devices)
            if gaps:  # files this device still needs were compacted before it was known: a snapshot has them
                self._from_snapshot(cfg, folder, devices, report, gaps)
            self._retry_waiting(report)
            for device, meta in sorted(devices.items()):
                self._receive(cfg, folder, device, meta, report)
            if self.vault.read(lambda c: get_setting(c, S["rewrite"])) == "1":
                self._rewrite_own(cfg, folder, report)
            self._maybe_snapshot(cfg, folder, report, force=force_snapshot)
            self._write_device_file(cfg)
            self._retire_predecessors(cfg, folder)
            self._compact(cfg, folder, devices, report)
            self._save_outcome(report)
        return report

    # -- a new incarnation -------------------------------------------------------------------------------
    def _check_incarnation(self, cfg: SyncConfig, folder: SyncFolder, report: RunReport) -> SyncConfig:
        """The folder holds a number of this device that this vault never gave (its record or a change file
        at or past the next number): the vault was restored from a backup, or copied from the computer that
        wrote them. It becomes a new device; nothing of what the folder holds is overwritten."""
        next_seq = int(self.vault.read(lambda c: get_setting(c, S["next_seq"])) or "1")
        highest = max(folder.change_files(cfg.device), default=0)
        meta = self._own_record(cfg, folder)
        written = int(meta.get("last_seq", 0)) if meta else 0
        if max(highest, written) < next_seq:
            return cfg
        return self._reincarnate(cfg, folder, report, max(highest, written))

    def _own_record(self, cfg: SyncConfig, folder: SyncFolder) -> dict[str, Any] | None:
        try:
            data = read_bounded(folder.device_file(cfg.device), DEVICE_LIMIT)
            return None if data is None else sealing.unseal(cfg.keys, "d", cfg.device, 0, data,
                                                             max_plain=4 * DEVICE_LIMIT)
        except (Refused, TooLarge):
            return None

    def _reincarnate(self, cfg: SyncConfig, folder: SyncFolder, report: RunReport, written: int) -> SyncConfig:
        device = new_device_id()

        def job(conn: apsw.Connection, change: Change) -> int:
            held = int(get_setting(conn, S["next_seq"]) or "1") - 1  # what this vault holds of its old files
            pending = st.outbox(conn)
            conn.execute("DELETE FROM sync_outbox")
            # the old identity is another device now: its files after what this vault holds are applied here
            st.upsert_peer(conn, cfg.device, cfg.name, None)
            st.set_last_seq(conn, cfg.device, held)
            # the clock stays as the backup left it: what its journal still holds is sent with the stamps it
            # would have had (the old identity sent the same changes; the later stamp of the two wins)
            for n, (_, records) in enumerate(pending, 1):  # sent again under the new numbers
                st.put_outbox(conn, n, records)
            for k, value in (("device_id", device), ("next_seq", str(len(pending) + 1)), ("snapshot_seq", "0"),
                             ("bootstrap", "0"),
                             ("predecessors", json.dumps([cfg.device, *cfg.predecessors])),
                             ("retire", json.dumps({cfg.device: written}))):
                set_setting(conn, change, S[k], value)
            return held

        held = self.vault.write(job)
        new = self.require()
        folder.ensure_device_dir(new.device)
        report.notes.append(
            f"this vault is not the one that wrote its earlier files (restored from a backup, or copied from "
            f"another computer): it syncs on as a new device of '{cfg.name}' from now on; its earlier files "
            f"after change {held} are applied here like another computer's, and never overwritten")
        self._retire_predecessors(new, folder)
        return new

    def _retire_predecessors(self, cfg: SyncConfig, folder: SyncFolder) -> None:
        """An earlier incarnation's device record says it left (after its last file), once: the others then
        neither wait for it nor apply files under its id written later."""
        retire = json.loads(self.vault.read(lambda c: get_setting(c, S["retire"])) or "{}")
        for device, last in retire.items():
            meta = self._own_record(SyncConfig(device, cfg.name, cfg.folder, cfg.secret), folder) or {}
            record = {"v": 1, "device": device, "name": meta.get("name", cfg.name), "acks": meta.get("acks", {}),
                      "created_at": meta.get("created_at"), "last_seq": max(int(last), int(meta.get("last_seq", 0))),
                      "left_at": meta.get("left_at") or now_iso(), "successor": cfg.device}
            folder.ensure_device_dir(device)
            write_atomic(folder.device_file(device), sealing.seal(cfg.keys, "d", device, 0, record))
        if retire:
            self.vault.write(lambda conn, change: set_setting(conn, change, S["retire"], "{}"))

    # -- sending ---------------------------------------------------------------------------------------
    def _send(self, cfg: SyncConfig, folder: SyncFolder, report: RunReport) -> SyncConfig:
        def job(conn: apsw.Connection, change: Change) -> None:
            clock = Clock.load(cfg.device, get_setting(conn, S["hlc"]))
            records, last = st.take_journal(conn, lambda at: clock.tick(ms_of(at)))
            if records:
                seq = int(get_setting(conn, S["next_seq"]) or "1")
                for rec in records:
                    if rec["f"] not in st.UNION_FIELDS and rec["f"] != "erase":
                        st.set_clock(conn, rec["e"], rec["k"], rec["f"], rec["h"])
                erased = st.record_own_erasures(conn, records)
                if erased:
                    st.purge_outbox(conn, erased)
                    set_setting(conn, change, S["rewrite"], "1")
                parts = _files_of(records)
                for n, part in enumerate(parts):
                    st.put_outbox(conn, seq + n, part)
                set_setting(conn, change, S["next_seq"], str(seq + len(parts)))
            if last:
                st.drop_journal(conn, last)
            set_setting(conn, change, S["hlc"], clock.state())

        self.vault.write(job)
        for seq, records in self.vault.read(st.outbox):
            try:
                self._write_change(cfg, folder, seq, records, fresh=True)
            except _NumberTaken:
                cfg = self._reincarnate(cfg, folder, report, seq)
                return self._send(cfg, folder, report)
            self.vault.write(_dropper(seq))
            report.sent.append(seq)
        return cfg

    def _write_change(self, cfg: SyncConfig, folder: SyncFolder, seq: int, records: list[st.Record], *,
                      device: str | None = None, fresh: bool = False) -> bool:
        """Seal and place change file ``seq``. A file already there keeps its place: the same content is left
        as it is; this device's own earlier content (a crash after its rename, a rewrite after an erase) is
        replaced by its next generation. With ``fresh`` (a number just given), content this vault did not
        write is never replaced: ``_NumberTaken``."""
        device = device or cfg.device
        path = folder.change_path(device, seq)
        gen = 0
        try:
            existing = read_bounded(path, CHANGE_LIMIT)
        except TooLarge:
            existing = None
        if existing is not None:
            with contextlib.suppress(Refused):
                old = sealing.unseal(cfg.keys, "c", device, seq, existing, max_plain=4 * CHANGE_LIMIT)
                if old.get("records") == records:
                    return False
                if fresh:
                    gone, targets = self.vault.read(lambda c: (st.tombstones(c), st.sent_targets(c)))
                    if _without(list(old.get("records") or []), gone, targets) != _without(records, gone, targets):
                        raise _NumberTaken(seq)
                gen = int(old.get("gen", 0)) + 1
        payload = {"v": validate.PAYLOAD_VERSION, "device": device, "seq": seq, "gen": gen, "records": records}
        write_atomic(path, sealing.seal(cfg.keys, "c", device, seq, payload))
        return True

    # -- devices -----------------------------------------------------------------------------------------
    def _read_devices(self, cfg: SyncConfig, folder: SyncFolder, report: RunReport) -> dict[str, dict[str, Any]]:
        devices: dict[str, dict[str, Any]] = {}
        known = self.vault.read(st.peers)
        for entry in folder.entries():
            if entry == cfg.device:
                continue
            where = f"vodou/{entry}"
            if known.get(entry, {}).get("removed_at"):
                continue  # removed from the synced vault (`vodou sync remove`): its files are ignored
            try:
                data = read_bounded(folder.device_file(entry), DEVICE_LIMIT) if _is_device_id(entry) else None
                if data is None:
                    if self._ours_waiting_for_record(cfg, folder, entry):
                        report.waiting[entry] = len(folder.change_files(entry))  # its record is on its way
                    elif folder.change_files(entry) or not _is_device_id(entry):
                        report.refused.append(f"refused {where}: unknown device (no device record of this vault); "
                                              "its files are ignored")
                    continue
                meta = sealing.unseal(cfg.keys, "d", entry, 0, data, max_plain=4 * DEVICE_LIMIT)
            except (Refused, TooLarge) as exc:
                report.refused.append(f"refused {where}/device.vsd: {exc}; this device's files are ignored")
                continue
            if meta.get("device") != entry:
                report.refused.append(f"refused {where}/device.vsd: names another device than its place; this "
                                      "device's files are ignored")
                continue
            devices[entry] = meta
        removed = {d for meta in devices.values() for d in meta.get("removed") or [] if isinstance(d, str)}
        if cfg.device in removed:
            report.warnings.append("this computer was removed from the synced vault by another computer (`vodou "
                                   "sync remove`): the others ignore its changes; `vodou sync leave`, then join again")
        removed -= set(cfg.own)

        def job(conn: apsw.Connection, change: Change) -> None:
            for device, meta in devices.items():
                if device not in known or known[device]["name"] != meta.get("name") \
                        or known[device]["left_at"] != meta.get("left_at"):
                    st.upsert_peer(conn, device, meta.get("name"), meta.get("left_at"))
            for device in removed:
                if not known.get(device, {}).get("removed_at"):
                    st.mark_removed(conn, device, now_iso())

        self.vault.write(job)
        return {d: m for d, m in devices.items() if d not in removed}

    def _ours_waiting_for_record(self, cfg: SyncConfig, folder: SyncFolder, device: str) -> bool:
        """A device folder whose change files arrived before its record (a sync engine copies in any order):
        its first file opens under this vault's key."""
        files = folder.change_files(device) if _is_device_id(device) else {}
        if not files:
            return False
        first = min(files)
        try:
            data = read_bounded(files[first], CHANGE_LIMIT)
            return data is not None and bool(sealing.unseal(cfg.keys, "c", device, first, data,
                                                            max_plain=4 * CHANGE_LIMIT))
        except (Refused, TooLarge):
            return False

    def _write_device_file(self, cfg: SyncConfig, *, left: bool = False) -> None:
        def read(conn: apsw.Connection) -> dict[str, Any]:
            peers = st.peers(conn)
            acks = {d: p["last_seq"] for d, p in peers.items()}
            seq = int(get_setting(conn, S["next_seq"]) or "1") - 1
            return {"v": 1, "device": cfg.device, "name": cfg.name, "created_at": get_setting(conn, S["created_at"]),
                    "acks": acks, "last_seq": seq, "left_at": None,
                    "removed": sorted(d for d, p in peers.items() if p["removed_at"])}

        meta = self.vault.read(read)
        folder = SyncFolder(cfg.folder)
        snapshot = folder.snapshot_file(cfg.device)
        meta["snapshot_bytes"] = snapshot.stat().st_size if snapshot.exists() else 0
        if left:
            meta["left_at"] = now_iso()
        path = folder.device_file(cfg.device)
        data = sealing.seal(cfg.keys, "d", cfg.device, 0, meta)
        try:
            same = read_bounded(path, DEVICE_LIMIT) == data
        except TooLarge:
            same = False
        if not same:
            folder.ensure_device_dir(cfg.device)
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
        who = _who(meta, device)
        while seq in files and (final is None or seq <= final):
            try:
                data = read_bounded(files[seq], CHANGE_LIMIT)
                if data is None:
                    break
                payload = sealing.unseal(cfg.keys, "c", device, seq, data, max_plain=4 * CHANGE_LIMIT)
                if payload.get("device") != device or payload.get("seq") != seq:
                    raise Refused("names another device or number than its place")
                version = payload.get("v")
                if isinstance(version, int) and not isinstance(version, bool) and version > validate.PAYLOAD_VERSION:
                    report.warnings.append(f"waiting: change {seq} of {who} was written by a newer Vodou; update "
                                           "Vodou on this computer to apply it (its later changes wait for it)")
                    break
                if version != validate.PAYLOAD_VERSION:
                    raise Refused("names no format version of Vodou's")
                known, future = validate.split(payload)
                erased = self.vault.write(self._apply_job(cfg, device, seq, payload, known, future,
                                                          sealing.digest(data)))
            except (Refused, TooLarge, validate.BadRecord) as exc:
                report.refused.append(_refusal(who, device, files[seq].name, seq, str(exc)))
                break
            except VaultUnavailable:
                raise
            except _BAD_APPLY as exc:  # rolled back: the file's transaction did not commit
                log.warning("applying change %s of device %s failed", seq, device, exc_info=True)
                report.refused.append(_refusal(who, device, files[seq].name, seq,
                                               f"could not be applied ({_one_line(exc)}); nothing of it was kept"))
                break
            del data, payload
            report.erased += erased
            report.applied[device] = report.applied.get(device, 0) + 1
            seq += 1
        waiting = len([s for s in files if s >= seq and (final is None or s <= final)])
        if waiting:
            report.waiting[device] = waiting

    def _apply_job(self, cfg: SyncConfig, device: str, seq: int, payload: dict[str, Any], known: list[st.Record],
                   future: list[st.Record], digest: str):  # type: ignore[no-untyped-def]
        def job(conn: apsw.Connection, change: Change) -> int:
            out = st.Applier(conn, change, self.ceilings).run(known)
            st.keep_waiting(conn, future)
            stamps = [rec["h"] for rec in future if parse(rec["h"]) is not None]
            self._observe(conn, change, cfg, [out.max_stamp, *stamps])
            at = _stamp_time(out.max_stamp)
            st.mark_applied(conn, device, seq, int(payload.get("gen", 0)), digest, at)
            if out.erased or out.redacted:
                st.purge_outbox(conn, out.erased)
                set_setting(conn, change, S["rewrite"], "1")
            return len(out.erased)

        return job

    def _observe(self, conn: apsw.Connection, change: Change, cfg: SyncConfig, stamps: list[str]) -> None:
        clock = Clock.load(cfg.device, get_setting(conn, S["hlc"]))
        for stamp in stamps:
            if stamp:
                clock.observe(stamp)
        set_setting(conn, change, S["hlc"], clock.state())

    def _retry_waiting(self, report: RunReport) -> None:
        """Records that waited for a version that knows them, applied once this one does."""
        def job(conn: apsw.Connection, change: Change) -> int:
            ready = []
            for row_id, rec in st.waiting_rows(conn):
                try:
                    if validate.check(rec):
                        ready.append((row_id, rec))
                except validate.BadRecord as exc:
                    log.warning("a waiting change is not valid for this version and was dropped: %s", exc)
                    st.drop_waiting(conn, [row_id])
            if ready:
                st.drop_waiting(conn, [row_id for row_id, _ in ready])
                out = st.Applier(conn, change, self.ceilings).run([rec for _, rec in ready])
                if out.erased or out.redacted:
                    set_setting(conn, change, S["rewrite"], "1")
            return len(ready)

        if self.vault.read(lambda c: scalar(c, "SELECT count(*) FROM sync_waiting")):
            done = self.vault.write(job)
            if done:
                report.notes.append(f"applied {plural(done, 'change')} that waited for this version")

    def _check_applied(self, cfg: SyncConfig, device: str, seq: int, path: Path, report: RunReport) -> None:
        """A file already applied: the same bytes, or a later generation (rewritten after an erase), are
        fine; anything else repeats an old number: a replay, refused."""
        known = self.vault.read(lambda c: st.applied_file(c, device, seq))
        if known is None:
            return  # covered by the snapshot this device joined from
        try:
            data = read_bounded(path, CHANGE_LIMIT)
            if data is None or sealing.digest(data) == known[1]:
                return
            payload = sealing.unseal(cfg.keys, "c", device, seq, data, max_plain=4 * CHANGE_LIMIT)
        except (Refused, TooLarge) as exc:
            report.refused.append(f"refused vodou/{device}/{path.name}: {exc}")
            return
        gen = payload.get("gen", 0)
        if isinstance(gen, int) and gen > known[0]:
            try:
                records, _ = validate.split(payload)
                rewrite = self.vault.read(lambda c: st.nothing_new(c, records))  # after an erase: only less
            except validate.BadRecord:
                rewrite = False
            if rewrite:
                digest = sealing.digest(data)
                self.vault.write(lambda c, ch: st.mark_applied(c, device, seq, gen, digest, None))
                return
            report.refused.append(f"refused vodou/{device}/{path.name}: a later generation of sequence number {seq} "
                                  "of that device holds changes the one applied here did not (another vault, restored "
                                  "or copied, reused the number); it is not applied")
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

    def _read_snapshot(self, cfg: SyncConfig, folder: SyncFolder, device: str, meta: dict[str, Any],
                       report: RunReport) -> dict[str, Any] | None:
        """A device's snapshot, measured first (its size limit: what its record declares, or one derived from
        this vault) and checked record by record; None when there is none or it is refused."""
        declared = meta.get("snapshot_bytes") if isinstance(meta.get("snapshot_bytes"), int) else None
        limit = snapshot_limit(declared, self.vault.path.stat().st_size if self.vault.path.exists() else 0)
        try:
            data = read_bounded(folder.snapshot_file(device), limit)
            if data is None:
                return None
            snap = sealing.unseal(cfg.keys, "s", device, 0, data, max_plain=8 * limit)
            del data
            if snap.get("v") != validate.PAYLOAD_VERSION or not isinstance(snap.get("vector"), dict):
                raise Refused("is not a snapshot this version reads")
            snap["known"], snap["future"] = validate.split(snap)
            del snap["records"]
        except (Refused, TooLarge, validate.BadRecord) as exc:
            report.refused.append(f"refused the snapshot of {_who(meta, device)} (vodou/{device}/snapshot.vss): "
                                  f"{exc}")
            return None
        return snap

    def _from_snapshot(self, cfg: SyncConfig, folder: SyncFolder, devices: dict[str, dict[str, Any]],
                       report: RunReport, needed: dict[str, int] | None) -> None:
        """Apply the best snapshot: when joining (``needed`` None), the one covering most; else one that
        covers the ``needed`` numbers. Applying a snapshot is always safe (the merge is idempotent and
        commutative); the numbers it covers are then taken as applied. Snapshots are read one at a time:
        only the best so far is kept."""
        best: tuple[tuple[int, int], str, dict[str, Any]] | None = None
        for device, meta in devices.items():
            if not folder.snapshot_file(device).exists():
                continue
            snap = self._read_snapshot(cfg, folder, device, meta, report)
            if snap is None or not _usable(snap, folder, devices):
                continue
            vector = snap["vector"]
            if needed and any(int(vector.get(d, 0)) < seq for d, seq in needed.items()):
                continue
            weight = (sum(int(v) for v in vector.values()), len(vector))  # covers most, then knows most devices
            if best is None or weight > best[0]:
                best = (weight, device, snap)
        if best is not None:
            _, device, snap = best
            vector = {str(k): int(v) for k, v in snap["vector"].items() if k not in cfg.own}

            def job(conn: apsw.Connection, change: Change) -> int:
                out = st.Applier(conn, change, self.ceilings).run(snap["known"])
                st.keep_waiting(conn, snap["future"])
                for dev, seq in vector.items():
                    st.set_last_seq(conn, dev, seq)
                self._observe(conn, change, cfg, [out.max_stamp])
                set_setting(conn, change, S["bootstrap"], "0")
                if out.erased or out.redacted:  # erased rows this device's own files may hold: written again
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
        """Every own change file (this device's and its earlier incarnations') that holds an erased row, or an
        operation's target since redacted, is written again without it (its next generation); the snapshot
        too. The same rows are erased from the copies of this vault Vodou keeps. Then the WAL is flushed."""
        gone, targets = self.vault.read(lambda c: (st.tombstones(c), st.sent_targets(c)))
        for device in cfg.own:
            for seq, path in sorted(folder.change_files(device).items()):
                try:
                    data = read_bounded(path, CHANGE_LIMIT)
                    if data is None:
                        continue
                    payload = sealing.unseal(cfg.keys, "c", device, seq, data, max_plain=4 * CHANGE_LIMIT)
                except (Refused, TooLarge):
                    continue
                records = _without(payload.get("records", []), gone, targets)
                if records != payload.get("records") and self._write_change(cfg, folder, seq, records, device=device):
                    report.rewritten += 1
        for earlier in cfg.predecessors:  # the current snapshot covers what theirs did
            folder.snapshot_file(earlier).unlink(missing_ok=True)
        if folder.snapshot_file(cfg.device).exists():
            self._write_snapshot(cfg, folder)
            report.rewritten += 1
        self._erase_in_copies(report)
        self.vault.write(lambda conn, change: set_setting(conn, change, S["rewrite"], "0"))
        self.vault.checkpoint()

    def _erase_in_copies(self, report: RunReport) -> None:
        """Every erased row also leaves the copies of this vault Vodou keeps (its backups folder, ``before-``
        copies), exactly as a local erase does; the copies it could not reach are named."""
        from vodou_desktop.data.erase_copies import erase_in_copies

        gone = self.vault.read(lambda c: [(str(e), str(k), str(h)) for e, k, h in c.execute(
            "SELECT entity, key, hlc FROM sync_tombstones")])
        if not gone:
            return
        keys = {(e, k) for e, k, _ in gone}

        def erase(forgetting: Any) -> None:
            forgetting.vault.write(lambda conn, change: st.erase_keys(conn, change, gone, self.ceilings))
            forgetting.vault.checkpoint()

        done = erase_in_copies(self.vault.path, erase, lambda conn: st.holds_any(conn, keys))
        report.copies_rewritten += len(done.rewritten)
        if done.not_reached:
            report.warnings.append("an erased memory may still be in copies this computer could not reach: "
                                   + "; ".join(done.not_reached))

    # -- snapshots and compaction -----------------------------------------------------------------------------
    def _maybe_snapshot(self, cfg: SyncConfig, folder: SyncFolder, report: RunReport, *, force: bool) -> None:
        last, at = self.vault.read(lambda c: (int(get_setting(c, S["next_seq"]) or "1") - 1,
                                               int(get_setting(c, S["snapshot_seq"]) or "0")))
        exists = folder.snapshot_file(cfg.device).exists()
        if force or (last > 0 and not exists) or last - at >= SNAPSHOT_EVERY or (cfg.predecessors and not exists):
            self._write_snapshot(cfg, folder)
            for earlier in cfg.predecessors:
                folder.snapshot_file(earlier).unlink(missing_ok=True)
            report.snapshot = True

    def _write_snapshot(self, cfg: SyncConfig, folder: SyncFolder) -> None:
        def read(conn: apsw.Connection) -> dict[str, Any]:
            vector = {d: p["last_seq"] for d, p in st.peers(conn).items()}
            vector[cfg.device] = int(get_setting(conn, S["next_seq"]) or "1") - 1
            parked = [json.loads(t) for (t,) in conn.execute("SELECT record FROM sync_parked ORDER BY id")]
            return {"v": validate.PAYLOAD_VERSION, "device": cfg.device, "vector": vector,
                    "records": st.state_records(conn) + parked}

        snap = self.vault.read(read)
        write_atomic(folder.snapshot_file(cfg.device), sealing.seal(cfg.keys, "s", cfg.device, 0, snap))
        seq = snap["vector"][cfg.device]
        self.vault.write(lambda conn, change: set_setting(conn, change, S["snapshot_seq"], str(seq)))

    def _compact(self, cfg: SyncConfig, folder: SyncFolder, devices: dict[str, dict[str, Any]],
                 report: RunReport) -> None:
        """Delete own change files (and earlier incarnations') that every device still syncing has applied and
        the snapshot covers. A device known here whose record has not arrived counts as having applied none."""
        covered = int(self.vault.read(lambda c: get_setting(c, S["snapshot_seq"]) or "0"))
        known = self.vault.read(st.peers)
        live = [m for d, m in devices.items() if not m.get("left_at") and d not in cfg.own]
        absent = [d for d, p in known.items() if d not in devices and d not in cfg.own
                  and not p["left_at"] and not p["removed_at"]]
        for device in cfg.own:
            acks = [int(m.get("acks", {}).get(device, 0)) for m in live] + [0 for _ in absent]
            if not acks:
                continue
            upto = min(min(acks), covered if device == cfg.device else int(known.get(device, {}).get("last_seq", 0)))
            if device != cfg.device and covered == 0:
                continue  # an earlier incarnation's files go once this device's snapshot covers them
            for seq, path in folder.change_files(device).items():
                if seq <= upto:
                    path.unlink(missing_ok=True)
                    report.compacted += 1

    def _save_outcome(self, report: RunReport) -> None:
        def job(conn: apsw.Connection, change: Change) -> None:
            set_setting(conn, change, S["problems"], json.dumps(report.refused + report.warnings))
            if report.notes:
                set_setting(conn, change, S["notes"], json.dumps(report.notes))
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
                    "notes": json.loads(get_setting(conn, S["notes"]) or "[]"),
                    "peers": st.peers(conn),
                    "parked": int(scalar(conn, "SELECT count(*) FROM sync_parked")),
                    "waiting_for_newer_version": int(scalar(conn, "SELECT count(*) FROM sync_waiting")),
                    "earlier_ids": list(cfg.predecessors)}

        out = self.vault.read(read)
        devices = []
        for device, peer in sorted(out.pop("peers").items()):
            if device in cfg.own:
                continue
            files = folder.change_files(device)
            devices.append({"id": device, "name": peer["name"], "last_applied": peer["last_seq"],
                            "last_change_at": peer["last_change_at"], "left": peer["left_at"] is not None,
                            "removed": peer["removed_at"] is not None,
                            "pending_files": len([s for s in files if s > peer["last_seq"]])})
        out["devices"] = devices
        out["versioning"] = [str(p) for p in folder.versioning_folders()]
        return out

    def paused(self) -> bool:
        return self.vault.read(lambda c: get_setting(c, S["paused"])) == "1"


def _files_of(records: list[st.Record]) -> list[list[st.Record]]:
    """Records cut into change files of at most ``CHANGE_TARGET`` bytes of JSON (a larger record alone)."""
    files: list[list[st.Record]] = [[]]
    size = 0
    for rec in records:
        n = len(json.dumps(rec, ensure_ascii=False).encode("utf-8"))
        if files[-1] and size + n > CHANGE_TARGET:
            files.append([])
            size = 0
        files[-1].append(rec)
        size += n
    return files if files[0] else []


def _who(meta: dict[str, Any], device: str) -> str:
    name = meta.get("name")
    return f"'{name}'" if isinstance(name, str) and name else f"device {device}"


def _refusal(who: str, device: str, name: str, seq: int, reason: str) -> str:
    return (f"refused change {seq} of {who} (vodou/{device}/{name}): {reason}; this computer's later changes wait "
            "for it, the others' still apply")


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return (text[:200] + "…") if len(text) > 200 else (text or type(exc).__name__)


def _usable(snap: dict[str, Any], folder: SyncFolder, devices: dict[str, dict[str, Any]]) -> bool:
    """A snapshot can start a device when, for every device, the change files after what it covers are all
    still in the folder (none compacted away since it was written)."""
    vector = snap.get("vector", {})
    for device in devices:  # (a device removed from the vault is not among them)
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
    parsed = parse(stamp) if stamp else None
    if parsed is None or parsed[0] == 0:
        return None
    from datetime import UTC, datetime

    return datetime.fromtimestamp(parsed[0] / 1000, UTC).isoformat(timespec="seconds")


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
