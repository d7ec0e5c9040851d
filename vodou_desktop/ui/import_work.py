"""File ▸ Import…: a ChatGPT or Claude export imported as long work, with progress and Cancel (UI-5).

The format is guessed from the file. After a ChatGPT or Claude file, a small dialog asks for a project
to file the memories under (none: global; preferences stay global either way), as ``vodou import
--project`` does; the local model distils when the settings turn it on. Cancel stops between
conversations: each conversation lands whole or not at all, so what was imported before the cancel
stays and a new import skips it. A Vodou export goes through the same checked import as ``vodou
import vodou`` (one transaction; its memories keep their projects).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QComboBox, QDialog, QDialogButtonBox, QFileDialog, QLabel, QVBoxLayout, QWidget

from vodou_desktop.data.export import ImportReport as VodouImportReport
from vodou_desktop.data.export import import_records, is_vodou_export, read_jsonl
from vodou_desktop.errors import InvalidInput
from vodou_desktop.ingest.distil import ModelDistiller, from_settings
from vodou_desktop.ingest.importer import AUTO, ImportReport, import_export
from vodou_desktop.ingest.settle import settle_new_facts
from vodou_desktop.ui.long_work import JobProgressDialog, LongJob, Progress
from vodou_desktop.ui.services import Services
from vodou_desktop.vault import Vault
from vodou_desktop.vault.facts import clean_project
from vodou_desktop.words import plural

FILE_FILTER = ("Exports (conversations.json *.json *.jsonl);;Conversation exports (conversations.json *.json);;"
               "Vodou exports (*.jsonl);;All files (*)")


NO_PROJECT = "No project (global)"


def import_job(vault: Vault, path: Path, fmt: str = AUTO, parent: Any = None, *, project: str | None = None,
               distil: ModelDistiller | None = None) -> LongJob:
    def work(progress: Progress, cancel: threading.Event) -> tuple[ImportReport | VodouImportReport, bool]:
        if fmt == AUTO and is_vodou_export(path):
            return import_records(vault, read_jsonl(path), path.name), False
        report = import_export(vault, path, fmt, progress=progress, cancel=cancel, project=project, distil=distil)
        settle_new_facts(vault, report.distilled_ids)
        return report, cancel.is_set()

    return LongJob("Importing", work, parent)


def summary(report: ImportReport | VodouImportReport, cancelled: bool) -> str:
    if isinstance(report, VodouImportReport):
        return "Import finished: " + "; ".join(report.sentences()) + "."
    where = f" into {report.project}" if report.project else ""
    done = (f"{plural(report.imported, 'conversation')} of {report.conversations} imported from "
            f"{report.format}{where}: {plural(report.messages, 'message')} of yours kept, "
            f"{plural(report.distilled, 'memory')} distilled")
    skipped = f"; {len(report.malformed)} unreadable skipped" if report.malformed else ""
    model = f"; {report.model.sentence()}" if report.model is not None and report.model.windows else ""
    return ("Import cancelled. " if cancelled else "Import finished. ") + done + skipped + model + "."


class ImportOptions(QDialog):
    """Which project the imported memories go under: none (global), a project the vault has, or a new name."""

    def __init__(self, projects: Sequence[str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Import into a project")
        self.project = QComboBox(editable=True)
        self.project.addItem(NO_PROJECT)
        self.project.addItems(list(projects))
        self.project.setAccessibleName("Project for the imported memories")
        label = QLabel("File the imported memories under a &project, or keep them global. Preferences stay "
                       "global either way.", wordWrap=True)
        label.setBuddy(self.project)
        self.error = QLabel(wordWrap=True, visible=False)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("&Import")
        buttons.accepted.connect(self._accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        for part in (label, self.project, self.error, buttons):
            layout.addWidget(part)

    def chosen(self) -> str | None:
        """The project typed or picked (None: global); InvalidInput for a name no project can have."""
        text = self.project.currentText().strip()
        return None if text in ("", NO_PROJECT) else clean_project(text)

    def _accept(self) -> None:
        try:
            self.chosen()
        except InvalidInput as exc:
            self.error.setText(str(exc))
            self.error.setVisible(True)
            return
        self.accept()


class Importer:
    """Ask for a file, run the import with a progress dialog, say how it ended."""

    def __init__(self, services: Services, parent: QWidget | None = None,
                 projects: Callable[[], Sequence[str]] = list) -> None:
        self._services = services
        self._parent = parent
        self._projects = projects  # the vault's projects as the window already knows them (no query here)
        self.job: LongJob | None = None
        self.dialog: JobProgressDialog | None = None
        self.last_summary = ""
        self.last_report: ImportReport | VodouImportReport | None = None
        # told how an import ended and its undo journal entry (the memory browser's undo bar)
        self.on_finished: Callable[[str, str | None], None] | None = None

    def choose_and_start(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self._parent, "Import a ChatGPT, Claude or Vodou export",
                                              str(Path.home()), FILE_FILTER)
        if not path:
            return
        if is_vodou_export(Path(path)):  # its memories keep their own projects
            self.start(Path(path))
            return
        options = ImportOptions(self._projects(), self._parent)
        if options.exec() == QDialog.DialogCode.Accepted:
            self.start(Path(path), project=options.chosen())

    def start(self, path: Path, fmt: str = AUTO, project: str | None = None) -> LongJob:
        runtime = self._services.runtime
        return self.start_job(import_job(runtime.vault, path, fmt, project=project,
                                         distil=from_settings(runtime.settings)))

    def start_job(self, job: LongJob) -> LongJob:
        self.last_summary = ""
        job.finished.connect(self._finished)
        job.failed.connect(self._failed)
        self.job, self.dialog = job, JobProgressDialog(job, self._parent)
        self.dialog.setAccessibleName("Import progress")
        self.dialog.show()
        job.start()
        return job

    def _finished(self, result: tuple[ImportReport | VodouImportReport, bool]) -> None:
        self.last_report = result[0]
        self.last_summary = summary(*result)
        if self.on_finished is not None:
            self.on_finished(self.last_summary, result[0].op)
        else:
            self._services.messages.info(self.last_summary)

    def _failed(self, text: str) -> None:
        self.last_summary = f"Not imported: {text}"
        self._services.messages.error(self.last_summary)
