"""Settings: invalid values refused with a message and nothing written; valid ones persisted."""

from __future__ import annotations

from keyring.backends.fail import Keyring as FailKeyring
from PySide6.QtCore import Qt

from vodou_desktop import config
from vodou_desktop.bridge.tokens import TokenStore
from vodou_desktop.governance.sitemodes import SiteModes
from vodou_desktop.ui.settings_dialog import SettingsDialog

EXT_A = "aaaabbbbccccddddeeeeffffgggghhhh"
EXT_B = "ppppoooonnnnmmmmllllkkkkjjjjiiii"


def test_bad_port_is_refused_and_nothing_is_written(qtbot, services, vault, tmp_path):
    path = tmp_path / "settings.json"
    dialog = SettingsDialog(services, SiteModes(vault), None, vault_path=vault.path, config_path=path)
    qtbot.addWidget(dialog)
    assert dialog.vault.text() == str(vault.path)
    dialog.port.setText("80")
    dialog.save()
    assert "Not saved: bridge port must be a number between 1024 and 65535" in dialog.problem.text()
    dialog.port.setText("abc")
    dialog.save()
    assert "not 'abc'" in dialog.problem.text()
    dialog.endpoint.setText("ftp://model")
    dialog.port.setText("48000")
    dialog.save()
    assert "model endpoint must be an http(s) URL" in dialog.problem.text()
    assert not path.exists()


def test_valid_settings_are_saved(qtbot, services, vault, tmp_path):
    path = tmp_path / "settings.json"
    sites = SiteModes(vault)
    dialog = SettingsDialog(services, sites, None, vault_path=vault.path, config_path=path)
    qtbot.addWidget(dialog)
    dialog.port.setText("48000")
    dialog.semantic.setChecked(False)
    dialog.default_mode.setCurrentText("Suggest")
    dialog.save()
    qtbot.waitUntil(lambda: dialog.saved is not None)
    saved = config.load(path)
    assert saved.bridge_port == 48000 and saved.embedder == "none"
    assert sites.global_default == "suggest"


def test_the_embedding_model_is_chosen_in_settings(qtbot, services, vault, tmp_path):
    path = tmp_path / "settings.json"
    dialog = SettingsDialog(services, SiteModes(vault), None, vault_path=vault.path, config_path=path)
    qtbot.addWidget(dialog)
    assert dialog.meaning_model.currentData() == "default" and dialog.meaning_model.isEnabled()
    assert [dialog.meaning_model.itemData(i) for i in range(dialog.meaning_model.count())] == ["default", "minilm"]
    assert "embeds every memory again in the background" in dialog.model_help.text()
    dialog.meaning_model.setCurrentIndex(dialog.meaning_model.findData("minilm"))
    dialog.save()
    qtbot.waitUntil(lambda: dialog.saved is not None)
    assert config.load(path).embedder == "minilm"
    dialog.semantic.setChecked(False)
    assert not dialog.meaning_model.isEnabled()  # no model to choose while meaning is off


def test_paired_browsers_are_listed_and_revoked(qtbot, services, vault, tmp_path):
    tokens = TokenStore(tmp_path / "bridge", backend=FailKeyring())
    tokens.pair(EXT_A, "Chromium")
    tokens.pair(EXT_B)
    dialog = SettingsDialog(services, SiteModes(vault), tokens, vault_path=vault.path,
                            config_path=tmp_path / "settings.json")
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: dialog.pairings.rowCount() == 2)
    assert dialog.pairings.index(0, 0).data() == "Chromium, paired just now"
    assert dialog.pairings.index(0, 0).data(Qt.ItemDataRole.ToolTipRole) == EXT_A  # which one, for the curious
    assert dialog.pairings.index(1, 0).data() == "the browser extension, paired just now"
    assert "a private file (0600)" in dialog.storage.text()
    assert dialog.revoke_button.isEnabled()
    dialog.pairings_view.setCurrentIndex(dialog.pairings.index(0, 0))
    dialog.revoke_button.click()
    qtbot.waitUntil(lambda: dialog.pairings.rowCount() == 1)
    assert dialog.pairings.row_record(0).extension_id == EXT_B
    assert not tokens.is_paired(EXT_A) and tokens.is_paired(EXT_B)
    assert TokenStore(tmp_path / "bridge", backend=FailKeyring()).pairings()[0].extension_id == EXT_B  # persisted


def test_settings_say_the_effective_state_explain_the_endpoint_and_open_the_folder(qtbot, services, vault, tmp_path,
                                                                                   monkeypatch):
    monkeypatch.setenv("VODOU_EMBEDDER", "none")
    dialog = SettingsDialog(services, SiteModes(vault), None, vault_path=vault.path,
                            config_path=tmp_path / "settings.json")
    qtbot.addWidget(dialog)
    assert dialog.semantic.isChecked()  # the file says on…
    said = dialog.effective.text()  # …and the dialog says what really holds, and why
    assert said.startswith("Search by meaning is off") and "VODOU_EMBEDDER=none" in said and "wins" in said
    assert "OpenAI-compatible" in dialog.endpoint_help.text() and "Leave it empty" in dialog.endpoint_help.text()
    from PySide6.QtCore import QObject, QUrl, Slot
    from PySide6.QtGui import QDesktopServices

    class FileManager(QObject):  # stands in for the desktop's file manager
        opened: list[str] = []

        @Slot(QUrl)
        def show(self, url: QUrl) -> None:
            self.opened.append(url.toLocalFile())

    manager = FileManager()
    QDesktopServices.setUrlHandler("file", manager, "show")
    try:
        dialog.open_folder.click()
    finally:
        QDesktopServices.unsetUrlHandler("file")
    assert manager.opened == [str(vault.path.parent)]


def test_no_wrapped_explanation_is_cut_at_the_dialogs_size(qtbot, services, vault, tmp_path):
    """Every wrapped label is as tall as its text needs at the width it really has (the endpoint's
    explanation lost its last line once the dialog grew other sections)."""
    from PySide6.QtWidgets import QLabel

    dialog = SettingsDialog(services, SiteModes(vault), None, vault_path=vault.path,
                            config_path=tmp_path / "settings.json")
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.adjustSize()
    qtbot.wait(50)
    cut = [label.text()[:40] for label in dialog.findChildren(QLabel)
           if label.isVisible() and label.wordWrap() and label.text()
           and label.height() < label.heightForWidth(label.width())]
    assert cut == []


def test_distilling_with_the_model_is_off_until_ticked_and_needs_an_endpoint(qtbot, services, vault, tmp_path):
    path = tmp_path / "settings.json"
    dialog = SettingsDialog(services, SiteModes(vault), None, vault_path=vault.path, config_path=path)
    qtbot.addWidget(dialog)
    assert not dialog.distil.isChecked()
    dialog.endpoint.setText("")
    dialog.distil.setChecked(True)
    dialog.save()
    assert "Not saved: distilling with a model needs a model endpoint" in dialog.problem.text()
    assert not path.exists()
    dialog.endpoint.setText("http://127.0.0.1:11434/v1")
    dialog.save()
    qtbot.waitUntil(lambda: dialog.saved is not None)
    saved = config.load(path)
    assert saved.distil_with_model is True and saved.model_base_url == "http://127.0.0.1:11434/v1"
