"""What the windows and the tray need, built once by the composition root and handed down.

Governance and bridge services are optional here so that each view can be built (and tested)
with exactly the services it uses; a view that needs a missing one is not offered at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QObject, Signal

from vodou_desktop.runtime import Runtime
from vodou_desktop.search.embedder import Embedder, EmbedderState
from vodou_desktop.ui.long_work import EMBEDDING, WorkProgress
from vodou_desktop.ui.messages import MessageBridge
from vodou_desktop.ui.ops import Ops, VaultEvents

MODEL_STATE_TEXT = {
    EmbedderState.LOADING: "Meaning search: model loading… (keyword search meanwhile)",
    EmbedderState.READY: "Meaning search: model ready",
    EmbedderState.OFF: "Meaning search: off (keyword search only)",
    EmbedderState.FAILED: "Meaning search: model failed to load (keyword search only)",
}


class ModelStatus(QObject):
    """The embedder's state on the GUI thread (the embedder reports from its loading thread)."""

    changed = Signal(str)

    def __init__(self, embedder: Embedder, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._embedder = embedder
        embedder.on_state(lambda state: self.changed.emit(self.text()))
        embedder.on_progress(lambda step, steps, what: self.changed.emit(self.text()))

    def text(self) -> str:
        progress = self._embedder.progress
        if self._embedder.preparing and progress is not None:
            return (f"Meaning search: preparing the model, first run (step {progress[0]} of {progress[1]})…"
                    " (keyword search meanwhile)")
        return MODEL_STATE_TEXT[self._embedder.state]


@dataclass
class Services:
    runtime: Runtime
    messages: MessageBridge
    ops: Ops
    events: VaultEvents
    model_status: ModelStatus
    sites: Any = None  # governance.sitemodes.SiteModes
    forgetting: Any = None  # governance.forget.Forgetting
    page_memory: Any = None  # governance.page_memory.PageMemory
    opm: Any = None  # governance.opm
    bridge: Any = None  # bridge.server.BridgeServer
    extras: dict[str, Any] = field(default_factory=dict)
    work: WorkProgress = field(default_factory=WorkProgress)  # background work's progress, for the status bar
    _stop_listening: Any = None

    @classmethod
    def build(cls, runtime: Runtime, parent: QObject | None = None, **optional: Any) -> Services:
        messages = MessageBridge(parent)
        ops = Ops(messages, parent=parent)
        ops.vault_path = runtime.vault.path
        events = VaultEvents(runtime.vault, parent)
        services = cls(runtime, messages, ops, events, ModelStatus(runtime.embedder, parent), **optional)
        work = services.work
        services._stop_listening = runtime.embedding_progress.listen(lambda d, t: work.report(EMBEDDING, d, t))
        return services

    def close(self) -> None:
        if self._stop_listening is not None:
            self._stop_listening()
        self.events.close()
        self.ops.shutdown()
