"""File ▸ Import…: a ChatGPT or Claude export imported as long work, with progress and Cancel (UI-5).

The format is guessed from the file. Cancel stops between conversations: each conversation lands
whole or not at all, so what was imported before the cancel stays and a new import skips it. A
Vodou export goes through the same checked import as ``vodou import vodou`` (one transaction).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QFileDialog, QWidget

from vodou_desktop.data.export import ImportReport as VodouImportReport
from vodou_desktop.data.export import import_records, is_vodou_export, read_jsonl
from vodou_desktop.ingest.importer import AUTO, ImportReport, import_export
from vodou_desktop.ingest.settle import settle_new_facts
from vodou_desktop.ui.long_work import JobProgressDialog, LongJob, Progress
from vodou_desktop.ui.services import Services
from vodou_desktop.vault import Vault
from vodou_desktop.words import plural

FILE_FILTER = ("Exports (conversations.json *.json *.jsonl);;Conversation exports (conversations.json *.json);;"
               "Vodou exports (*.jsonl);;All files (*)")


def import_job(vault: Vault, path: Path, fmt: str = AUTO, parent: Any = None) -> LongJob:
    def work(progress: Progress, cancel: threading.Event) -> tuple[ImportReport | VodouImportReport, bool]:
        if fmt == AUTO and is_vodou_export(path):
            return import_records(vault, read_jsonl(path)), False
        report = import_export(vault, path, fmt, progress=progress, cancel=cancel)
        settle_new_facts(vault, report.fact_ids)
        return report, cancel.is_set()

    return LongJob("Importing", work, parent)


def summary(report: ImportReport | VodouImportReport, cancelled: bool) -> str:
    if isinstance(report, VodouImportReport):
        return "Import finished: " + "; ".join(report.sentences()) + "."
    done = (f"{plural(report.imported, 'conversation')} of {report.conversations} imported from "
            f"{report.format}: {plural(report.facts, 'new memory')}")
    skipped = f"; {len(report.malformed)} unreadable skipped" if report.malformed else ""
    return ("Import cancelled. " if cancelled else "Import finished. ") + done + skipped + "."


class Importer:
    """Ask for a file, run the import with a progress dialog, say how it ended."""

    def __init__(self, services: Services, parent: QWidget | None = None) -> None:
        self._services = services
        self._parent = parent
        self.job: LongJob | None = None
        self.dialog: JobProgressDialog | None = None
        self.last_summary = ""
        self.last_report: ImportReport | VodouImportReport | None = None
        # told how an import ended and its undo journal entry (the memory browser's undo bar)
        self.on_finished: Callable[[str, str | None], None] | None = None

    def choose_and_start(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self._parent, "Import a ChatGPT, Claude or Vodou export",
                                              str(Path.home()), FILE_FILTER)
        if path:
            self.start(Path(path))

    def start(self, path: Path, fmt: str = AUTO) -> LongJob:
        return self.start_job(import_job(self._services.runtime.vault, path, fmt))

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
