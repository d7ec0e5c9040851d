"""UI-5: long work shows progress, can be cancelled, and never freezes the GUI thread."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QElapsedTimer, Qt, QTimer
from PySide6.QtWidgets import QPushButton

from vodou_desktop.errors import KnownError
from vodou_desktop.search.embedder import Embedder
from vodou_desktop.ui.long_work import JobProgressDialog, LongJob, backfill_job
from vodou_desktop.vault import Vault
from vodou_desktop.vault import query as q
from vodou_desktop.vault.facts import insert_fact
from vodou_desktop.vault.sources import stamp_source

N_CHUNKS = 10_000
TICK_MS = 20


def fill(vault: Vault, n: int) -> None:
    def job(conn, change):
        source = stamp_source(conn, change, kind="import_chatgpt", tier="import", batch_id="bulk")
        for i in range(n):
            insert_fact(conn, change, text=f"imported note {i} about topic {i % 97} and thing {i % 13}",
                        source_id=source)

    vault.write(job)


@pytest.mark.model
def test_gui_keeps_ticking_during_a_10000_chunk_backfill_and_cancel_stops_it(qtbot, vault, model):
    fill(vault, N_CHUNKS)
    assert vault.read(q.count_unembedded) == N_CHUNKS
    job = backfill_job(vault, model)
    dialog = JobProgressDialog(job)
    qtbot.addWidget(dialog)
    ticks: list[int] = []
    clock = QElapsedTimer()
    clock.start()
    timer = QTimer(interval=TICK_MS)
    timer.timeout.connect(lambda: ticks.append(clock.elapsed()))
    timer.start()
    job.start()
    qtbot.waitUntil(lambda: dialog.value() >= 256, timeout=60_000)  # at least two batches were embedded
    ticks.clear()
    qtbot.wait(2000)  # the backfill keeps running; the event loop must keep turning
    gaps = [b - a for a, b in zip(ticks, ticks[1:], strict=False)]
    assert len(ticks) >= 2000 / TICK_MS * 0.5, f"only {len(ticks)} ticks in 2 s"
    assert max(gaps) < 300, f"the GUI thread stalled for {max(gaps)} ms"
    assert dialog.maximum() == N_CHUNKS
    cancel_button = dialog.findChild(QPushButton)
    qtbot.mouseClick(cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(job.done.is_set, timeout=10_000)  # cancel is honoured between batches
    timer.stop()
    remaining = vault.read(q.count_unembedded)
    assert 0 < remaining < N_CHUNKS  # cancelled part-way: work was done, and it stopped


def test_a_failing_job_reports_a_message(qtbot):
    def work(progress, cancel):
        raise KnownError("the import file is not a ChatGPT export")

    job = LongJob("Import", work)
    with qtbot.waitSignal(job.failed) as blocker:
        job.start()
    assert blocker.args == ["the import file is not a ChatGPT export"]


def test_backfill_needs_a_ready_model(vault):
    with pytest.raises(KnownError, match="not ready"):
        backfill_job(vault, Embedder("none"))


def test_a_job_nobody_holds_is_released_on_the_gui_thread(qtbot):
    """Dropped by its starter while it runs, a job must still end on the GUI thread: a QObject freed on
    its worker thread (the thread's target held the last reference) is destroyed there."""
    import threading
    import time

    destroyed_on: list[str] = []
    ended: list[object] = []

    def work(progress, cancel):
        time.sleep(0.05)
        return 7

    def start() -> None:
        job = LongJob("Nobody holds me", work)
        job.destroyed.connect(lambda *_: destroyed_on.append(threading.current_thread().name),
                              Qt.ConnectionType.DirectConnection)
        job.finished.connect(ended.append)
        job.start()

    start()
    qtbot.waitUntil(lambda: ended == [7], timeout=5_000)
    qtbot.waitUntil(lambda: bool(destroyed_on), timeout=5_000)
    assert destroyed_on == [threading.main_thread().name]
