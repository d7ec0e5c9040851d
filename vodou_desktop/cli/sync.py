"""``vodou sync setup|join|now|status|pause|resume|leave|remove``: one memory on all of a person's computers,
through a folder a sync engine (Syncthing, Nextcloud, Dropbox, a USB stick) keeps in step. docs/sync.md.
"""

from __future__ import annotations

import argparse
import getpass
import os
import sys
from pathlib import Path

from vodou_desktop import paths
from vodou_desktop.cli.output import print_json
from vodou_desktop.errors import InvalidInput
from vodou_desktop.governance.ages import format_age
from vodou_desktop.sync import sealing
from vodou_desktop.sync.engine import SyncEngine, resolve_join_key
from vodou_desktop.vault import Vault, cipher
from vodou_desktop.words import plural

SYNC_KEY_ENV = "VODOU_SYNC_KEY"


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("sync", help="keep this vault in step with your other computers through a synced folder")
    actions = p.add_subparsers(dest="sync_command", metavar="ACTION", required=True)
    setup = actions.add_parser("setup", help="first computer: start syncing this vault into FOLDER")
    setup.add_argument("folder", help="a folder your sync engine keeps in step (Syncthing, Dropbox, a USB stick)")
    setup.add_argument("--name", default=os.uname().nodename if hasattr(os, "uname") else "computer",
                       help="this computer's name as the other devices show it (default: its host name)")
    setup.add_argument("--key-file", metavar="PATH", help="write the join key into this new 0600 file instead of "
                                                          "printing it")
    setup.set_defaults(func=cmd_setup)
    join = actions.add_parser("join", help="another computer: join the synced vault in FOLDER")
    join.add_argument("folder")
    join.add_argument("--name", default=os.uname().nodename if hasattr(os, "uname") else "computer")
    join.add_argument("--key-file", metavar="PATH", help=f"the join key's file (else ${SYNC_KEY_ENV} or asked)")
    join.set_defaults(func=cmd_join)
    now = actions.add_parser("now", help="send this vault's changes and apply the other computers' now")
    now.add_argument("--json", action="store_true")
    now.set_defaults(func=cmd_now, needs_vault=True)
    status = actions.add_parser("status", help="devices, last change applied, pending files, problems")
    status.add_argument("--json", action="store_true")
    status.set_defaults(func=cmd_status, needs_vault=True)
    for name, helptext, value in (("pause", "stop syncing in the background until resumed", True),
                                  ("resume", "sync in the background again", False)):
        act = actions.add_parser(name, help=helptext)
        act.set_defaults(func=cmd_pause, paused=value, needs_vault=True)
    leave = actions.add_parser("leave", help="stop syncing this computer (its memories stay here)")
    leave.set_defaults(func=cmd_leave, needs_vault=True)
    remove = actions.add_parser("remove", help="remove a lost computer: every computer ignores its files from now on")
    remove.add_argument("device", help="its name or id, as `vodou sync status` shows them")
    remove.set_defaults(func=cmd_remove, needs_vault=True)


def _open(args: argparse.Namespace, *, first_use: bool = False) -> Vault:
    """The vault; with ``first_use`` (setup, join: the first thing a person may do on a computer) the data
    folder and an empty vault are made as the app makes them, in the default place only."""
    path = paths.vault_path(args.vault)
    if first_use and path.parent == paths.data_dir():
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    return Vault.open(path)


def setup_secret(vault_path: Path) -> tuple[bytes, str]:
    """The folder's secret and the join key to show: the recovery key of a vault encrypted with a generated
    key, else a new random sync key."""
    if cipher.is_encrypted(vault_path):
        key = cipher.key_for(vault_path)
        if key is not None and cipher.is_generated_key(key):
            from vodou_desktop.data.recovery import to_recovery

            return bytes.fromhex(key.removeprefix("vodou-key-1:")), to_recovery(key)
    secret = sealing.new_secret()
    return secret, sealing.format_sync_key(secret)


def _write_key_file(path: Path, shown: str) -> None:
    if not path.parent.is_dir():
        raise InvalidInput(f"The folder does not exist: {path.parent}")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError as exc:
        raise InvalidInput(f"{path} already exists; choose another name (a key file is never overwritten)") from exc
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write("Vodou sync join key: join another computer with `vodou sync join FOLDER --key-file THIS-FILE`.\n"
                 "Anyone with this key and the synced folder can read your memories.\n\n" + shown + "\n")


def cmd_setup(args: argparse.Namespace) -> int:
    folder = Path(args.folder).expanduser()
    key_file = Path(args.key_file).expanduser() if args.key_file else None
    if key_file is not None and key_file.exists():
        raise InvalidInput(f"{key_file} already exists; choose another name (a key file is never overwritten)")
    with _open(args, first_use=True) as vault:
        secret, shown = setup_secret(vault.path)
        engine = SyncEngine(vault)
        cfg = engine.setup(folder, args.name, secret, joining=False)
        if key_file is not None:
            _write_key_file(key_file, shown)
        report = engine.run(force_snapshot=True)
    print(f"this vault now syncs through {cfg.folder} as '{cfg.name}'; " + "; ".join(report.lines()))
    if key_file is not None:
        print(f"the join key is in {key_file} (readable by you only); keep it safe")
    else:
        print(shown)
        print("This is the join key, shown once: on each other computer run `vodou sync join FOLDER` with it "
              f"(${SYNC_KEY_ENV}, --key-file, or typed). Keep it safe: with it and the folder, anyone reads your "
              "memories.", file=sys.stderr)
    return 0


def _join_key(args: argparse.Namespace) -> str:
    if args.key_file:
        path = Path(args.key_file).expanduser()
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise InvalidInput(f"Cannot read the key file {path}: {exc.strerror or exc}") from exc
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        return lines[-1] if lines else ""
    given = os.environ.get(SYNC_KEY_ENV)
    if given:
        return given
    if not sys.stdin.isatty():
        raise InvalidInput(f"give the join key with --key-file FILE or ${SYNC_KEY_ENV}, or run this on a terminal")
    return getpass.getpass("Join key (from `vodou sync setup`, or the vault's recovery key): ")


def cmd_join(args: argparse.Namespace) -> int:
    secret = resolve_join_key(_join_key(args))
    with _open(args, first_use=True) as vault:
        engine = SyncEngine(vault)
        cfg = engine.setup(Path(args.folder).expanduser(), args.name, secret, joining=True)
        report = engine.run()
    print(f"joined the synced vault in {cfg.folder} as '{cfg.name}'; " + "; ".join(report.lines()))
    for line in report.refused:
        print(line, file=sys.stderr)
    return 1 if report.refused else 0


def cmd_now(args: argparse.Namespace) -> int:
    with _open(args) as vault:
        report = SyncEngine(vault).run()
    if args.json:
        print_json({"sent": report.sent, "applied": report.applied, "refused": report.refused,
                    "waiting": report.waiting, "erased": report.erased, "rewritten": report.rewritten,
                    "compacted": report.compacted, "snapshot": report.snapshot, "warnings": report.warnings})
    else:
        for line in report.lines():
            print(line)
    for line in report.refused:
        print(line, file=sys.stderr)
    return 1 if report.refused else 0


def cmd_status(args: argparse.Namespace) -> int:
    with _open(args) as vault:
        status = SyncEngine(vault).status()
    if args.json:
        print_json(status)
        return 0
    if not status["set_up"]:
        print("this vault does not sync; `vodou sync setup FOLDER` starts (or `vodou sync join FOLDER`)")
        return 0
    last_run = format_age(status["last_run"]) if status["last_run"] else "never"
    print(f"'{status['name']}' syncs through {status['folder']}{' (paused)' if status['paused'] else ''}; "
          f"last run {last_run}; {plural(status['pending_changes'], 'change')} here not sent yet")
    if not status["devices"]:
        print("no other device has joined yet")
    for d in status["devices"]:
        if d["removed"]:
            continue
        state = "left" if d["left"] else f"{plural(d['pending_files'], 'file')} waiting"
        when = format_age(d["last_change_at"]) if d["last_change_at"] else "not known yet"
        print(f"  {d['name'] or d['id']}: applied through change {d['last_applied']}, last change {when}, {state}")
    removed = [d["name"] or d["id"] for d in status["devices"] if d["removed"]]
    if removed:
        print(f"removed (their files are ignored): {', '.join(removed)}")
    if status["waiting_for_newer_version"]:
        print(f"{plural(status['waiting_for_newer_version'], 'change')} from a newer Vodou wait here, kept: update "
              "Vodou on this computer to apply them")
    for line in status["notes"]:
        print(f"note: {line}")
    for line in status["problems"]:
        print(f"problem: {line}")
    return 0


def cmd_pause(args: argparse.Namespace) -> int:
    with _open(args) as vault:
        SyncEngine(vault).set_paused(args.paused)
    print("sync paused: changes are kept and sent when you resume" if args.paused else "sync resumed")
    return 0


def cmd_leave(args: argparse.Namespace) -> int:
    with _open(args) as vault:
        cfg = SyncEngine(vault).leave()
    print(f"this computer ('{cfg.name}') left the synced vault in {cfg.folder}; its memories stay here. The other "
          "devices ignore what it writes from now on. A lost computer still holds the key: see docs/sync.md to "
          "change it.")
    return 0


def cmd_remove(args: argparse.Namespace) -> int:
    with _open(args) as vault:
        done = SyncEngine(vault).remove(args.device)
    print(f"removed '{done['name'] or done['device']}' ({done['device']}) from the synced vault: every computer "
          f"ignores its files from now on; {plural(done['files_deleted'], 'file')} of it deleted from the folder. "
          "It still holds the folder's key (every computer shares one): to shut it out for good, make a new key "
          "(`vodou sync leave` on every computer, `vodou sync setup` into a new folder, join the others again; "
          "rotate the vault's key first if it is encrypted).")
    return 0
