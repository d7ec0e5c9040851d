"""Pairing over HTTP, token storage (file fallback and the real Secret Service), and `vodou pair`."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.integration.bridge.helpers import ORIGIN, Bridge
from tests.support import run_cli
from vodou_desktop.bridge import events
from vodou_desktop.bridge.tokens import TokenStore

NEW_ID = "kkkkkkkkkkkkkkkkllllllllllllllll"
NEW_ORIGIN = f"chrome-extension://{NEW_ID}"
ROOT = Path(__file__).resolve().parents[3]


def start(bridge: Bridge, origin: str | None = NEW_ORIGIN, body: dict | None = None):  # type: ignore[no-untyped-def]
    return bridge.post("/api/pair/start", body or {}, token=None, origin=origin)


def shown_code(bridge: Bridge) -> str:
    return [p for kind, p in bridge.events if kind == events.PAIRING_CODE][-1]["code"]


def test_pairing_flow_and_revocation(bridge: Bridge) -> None:
    assert start(bridge, origin=None).status == 403
    assert start(bridge, origin="http://evil.test").status == 403
    assert start(bridge, body={"extensionId": "a" * 32}).status == 400
    reply = start(bridge)
    assert reply.status == 202 and "code" not in reply.json and reply.json["codeLength"] == 8
    code = shown_code(bridge)
    wrong = bridge.post("/api/pair/complete", {"code": "ZZZZZZZZ"}, token=None, origin=NEW_ORIGIN)
    assert wrong.status == 401
    other = bridge.post("/api/pair/complete", {"code": code}, token=None, origin=ORIGIN)
    assert other.status == 401  # the code is bound to the extension that asked for it
    done = bridge.post("/api/pair/complete", {"code": code.lower()}, token=None, origin=NEW_ORIGIN)
    assert done.status == 200 and done.json["extensionId"] == NEW_ID and len(done.json["token"]) == 64
    token = done.json["token"]
    assert bridge.post("/api/pair/complete", {"code": code}, token=None, origin=NEW_ORIGIN).status == 401  # once
    assert bridge.get("/api/approvals", token=token, origin=NEW_ORIGIN).status == 200
    assert bridge.get("/api/approvals").status == 200  # several browsers stay paired
    assert {p.extension_id for p in bridge.tokens.pairings()} >= {NEW_ID}
    gone = bridge.request("DELETE", "/api/pair", token=token, origin=NEW_ORIGIN, content_type=None)
    assert gone.status == 200 and gone.json["revoked"] == NEW_ID
    assert bridge.get("/api/approvals", token=token).status == 401
    assert bridge.get("/api/approvals").status == 200


def test_code_dies_after_five_wrong_tries(bridge: Bridge) -> None:
    start(bridge)
    code = shown_code(bridge)
    for _ in range(5):
        bridge.post("/api/pair/complete", {"code": "WRONG234"}, token=None, origin=NEW_ORIGIN)
    assert bridge.post("/api/pair/complete", {"code": code}, token=None, origin=NEW_ORIGIN).status == 401


def test_pair_starts_are_rate_limited(bridge: Bridge) -> None:
    statuses = [start(bridge).status for _ in range(11)]
    assert statuses[:10] == [202] * 10 and statuses[10] == 429


def test_revocation_by_another_process_takes_effect_on_next_request(bridge: Bridge) -> None:
    assert bridge.get("/api/approvals").status == 200
    TokenStore().revoke(bridge.tokens.pairings()[0].extension_id)  # what `vodou pair --revoke` does
    assert bridge.get("/api/approvals").status == 401


def test_file_fallback_is_private_and_said_plainly(bridge: Bridge, vodou_home: Path) -> None:
    store = bridge.tokens
    assert store.uses_file and "no OS keyring" in store.storage
    folder = vodou_home / "config" / "bridge"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    for name in ("tokens.json", "pairings.json"):
        assert stat.S_IMODE((folder / name).stat().st_mode) == 0o600
    assert bridge.token in (folder / "tokens.json").read_text()
    assert bridge.token not in (folder / "pairings.json").read_text()


def test_vodou_pair_prints_the_code_lists_and_revokes(bridge: Bridge) -> None:
    assert run_cli("pair").code == 2  # nothing waiting yet
    start(bridge)
    shown = run_cli("pair")
    assert shown.code == 0 and shown_code(bridge) in shown.out
    listed = run_cli("pair", "--list")
    assert listed.code == 0 and "abcdefghijklmnopabcdefghijklmnop" in listed.out and "private file" in listed.out
    assert run_cli("pair", "--revoke", "abcdefghijklmnopabcdefghijklmnop").code == 0
    assert bridge.get("/api/approvals").status == 401
    assert run_cli("pair", "--revoke", "abcdefghijklmnopabcdefghijklmnop").code == 2


KEYRING_SCRIPT = textwrap.dedent("""
    import keyring, keyring.backends.SecretService as ss
    from vodou_desktop.bridge.tokens import TokenStore
    store = TokenStore()
    assert isinstance(keyring.get_keyring(), ss.Keyring), keyring.get_keyring()
    assert not store.uses_file and "OS keyring" in store.storage
    token = store.pair("abcdefghijklmnopabcdefghijklmnop")
    again = TokenStore()
    assert again.match(token) == "abcdefghijklmnopabcdefghijklmnop"
    assert again.match(token[:-1] + "x") is None
    again.revoke("abcdefghijklmnopabcdefghijklmnop")
    assert TokenStore().match(token) is None
    print("KEYRING-OK")
""")


def test_tokens_live_in_the_real_secret_service(tmp_path: Path, vodou_home: Path) -> None:
    missing = [b for b in ("dbus-run-session", "gnome-keyring-daemon") if shutil.which(b) is None]
    if missing:
        pytest.skip(f"needs {', '.join(missing)} (Debian: dbus, gnome-keyring) for a real Secret Service")
    script = tmp_path / "keyring_check.py"
    script.write_text(KEYRING_SCRIPT)
    shell = (f'eval "$(printf pw | gnome-keyring-daemon --unlock --components=secrets)"; '
             f'exec "{sys.executable}" "{script}"')
    env = {**os.environ, "VODOU_HOME": str(vodou_home), "PYTHONPATH": str(ROOT)}
    done = subprocess.run(["dbus-run-session", "--", "sh", "-c", shell], env=env, capture_output=True, text=True,
                          timeout=60, cwd=ROOT)
    assert "KEYRING-OK" in done.stdout, done.stdout + done.stderr
    assert not (vodou_home / "config" / "bridge" / "tokens.json").exists()
