"""Settings ▸ Sync and the tray's sync state: start syncing from the page (the join key shown once), a
second computer joins, "Sync now" lists it with its last change; the tray menu says the state in words."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QMenu

from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.sync.engine import SyncEngine, resolve_join_key
from vodou_desktop.ui.actions import ActionRegistry
from vodou_desktop.ui.sync_settings import SyncSettingsPage
from vodou_desktop.ui.sync_status import SyncStatus
from vodou_desktop.ui.tray import build_menu
from vodou_desktop.vault import Vault


def test_start_syncing_join_and_sync_now_from_the_page(qtbot, services, tmp_path: Path) -> None:
    folder = tmp_path / "synced"
    folder.mkdir()
    page = SyncSettingsPage(services)
    qtbot.addWidget(page)
    page.show()
    qtbot.waitUntil(lambda: page.status == {"set_up": False})
    assert page.setup_part.isVisible()
    assert not page.synced_part.isVisible()
    page.folder.setText(str(folder))
    page.name.setText("laptop")
    page.start_button.click()
    qtbot.waitUntil(lambda: page.key_box is not None, timeout=20000)
    shown = page.key_box.text().split()[-1]
    qtbot.waitUntil(lambda: page.synced_part.isVisible(), timeout=20000)
    assert "“laptop”" in page.summary.text()
    assert page.devices.item(0).text().startswith("No other computer has joined yet")

    with Vault.open(tmp_path / "desktop.sqlite") as other:
        remember(other, "written on the desktop", Origin(kind="cli"))
        SyncEngine(other).setup(folder, "desktop", resolve_join_key(shown), joining=True)
        SyncEngine(other).run()
    page.sync_now.click()
    qtbot.waitUntil(lambda: page.devices.count() == 1 and page.devices.item(0).text().startswith("desktop — "),
                    timeout=20000)
    assert services.runtime.vault.read(
        lambda c: c.execute("SELECT 1 FROM chunks WHERE text = 'written on the desktop'").fetchone()) is not None
    page.pause.setChecked(True)
    qtbot.waitUntil(lambda: SyncEngine(services.runtime.vault).paused(), timeout=20000)


def test_tray_menu_shows_the_sync_state_in_words(qtbot, services, tmp_path: Path) -> None:
    actions = ActionRegistry()
    status = SyncStatus(services, actions)
    menu: QMenu = build_menu(actions)
    status.attach(menu)
    names = [a.objectName() for a in menu.actions() if a.objectName()]
    assert names[-3:] == ["sync.state", "sync.now", "quit"]
    status.start()
    qtbot.waitUntil(lambda: actions["sync.state"].text() == "Sync: off — not set up", timeout=20000)
    folder = tmp_path / "synced"
    folder.mkdir()
    SyncEngine(services.runtime.vault).setup(folder, "laptop", bytes(range(32)), joining=False)
    status.restart()
    qtbot.waitUntil(lambda: actions["sync.state"].text() == "Sync: synced", timeout=20000)
    assert actions["sync.now"].isEnabled()
    (folder / ".stversions").mkdir()
    status.sync_now()
    qtbot.waitUntil(lambda: actions["sync.state"].text().startswith("Sync: problem"), timeout=20000)
    assert "versioning" in actions["sync.state"].toolTip()
    status.stop()


def test_a_refused_file_shows_as_a_problem_and_a_lost_computer_is_removed_from_the_page(
        qtbot, services, tmp_path: Path) -> None:
    """A file of another computer that breaks a rule: the page says so in its one line (computer and number);
    "Remove…" on that computer, confirmed, makes every computer ignore it."""
    from vodou_desktop.sync import sealing
    from vodou_desktop.sync.folder import SyncFolder

    folder = tmp_path / "synced"
    folder.mkdir()
    engine = SyncEngine(services.runtime.vault)
    secret = sealing.new_secret()
    engine.setup(folder, "laptop", secret, joining=False)
    engine.run(force_snapshot=True)
    with Vault.open(tmp_path / "desktop.sqlite") as other:
        SyncEngine(other).setup(folder, "desktop", secret, joining=True)
        remember(other, "written on the desktop", Origin(kind="cli"))
        SyncEngine(other).run()
        desktop = SyncEngine(other).require().device
    keys = sealing.FolderKeys.from_secret(secret)
    path = max(SyncFolder(folder).change_files(desktop).values())
    seq = int(path.stem)
    payload = sealing.unseal(keys, "c", desktop, seq, path.read_bytes())
    payload["records"][0]["v"]["source"]["tier"] = "root"
    path.write_bytes(sealing.seal(keys, "c", desktop, seq, payload))
    page = SyncSettingsPage(services)
    qtbot.addWidget(page)
    page.show()
    page.sync_now.click()
    qtbot.waitUntil(lambda: "'desktop'" in page.problems.text(), timeout=20000)
    assert f"change {seq} " in page.problems.text() and "tier" in page.problems.text()
    assert not page.remove_button.isEnabled()
    page.devices.setCurrentRow(0)
    assert page.remove_button.isEnabled()
    page.remove_button.click()
    qtbot.waitUntil(lambda: page.remove_box is not None and page.remove_box.isVisible(), timeout=5000)
    remove = next(b for b in page.remove_box.buttons() if b.text() == "Remove")
    remove.click()
    qtbot.waitUntil(lambda: "removed: its files are ignored" in page.devices.item(0).text(), timeout=20000)
    assert [d["removed"] for d in engine.status()["devices"]] == [True]
    assert not SyncFolder(folder).device_dir(desktop).exists()
