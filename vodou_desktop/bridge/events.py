"""A tiny Qt-free event hub: the bridge raises events, the tray (or ``vodou serve``) listens.

Callbacks run synchronously on the thread that emits (the asyncio loop's thread, which is the Qt
thread under qasync), so a Qt subscriber may touch widgets directly. A failing subscriber is
logged and never breaks the request that raised the event.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

PAIRING_CODE = "pairing_code"
PAIRED = "paired"
ACTIVE_PAGE = "active_page"
APPROVALS_CHANGED = "approvals_changed"
KINDS = frozenset({PAIRING_CODE, PAIRED, ACTIVE_PAGE, APPROVALS_CHANGED})

Subscriber = Callable[[str, dict[str, Any]], None]


class EventHub:
    def __init__(self) -> None:
        self._subscribers: list[Subscriber] = []
        self._lock = threading.Lock()
        self.last: dict[str, dict[str, Any]] = {}

    def subscribe(self, callback: Subscriber) -> Callable[[], None]:
        """Call ``callback(kind, payload)`` for every event; returns the unsubscribe function."""
        with self._lock:
            self._subscribers.append(callback)

        def unsubscribe() -> None:
            with self._lock:
                if callback in self._subscribers:
                    self._subscribers.remove(callback)

        return unsubscribe

    def emit(self, kind: str, payload: dict[str, Any]) -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown bridge event {kind!r}")
        self.last[kind] = payload
        with self._lock:
            subscribers = list(self._subscribers)
        for callback in subscribers:
            try:
                callback(kind, payload)
            except Exception:
                log.exception("bridge event subscriber %r failed on %s", callback, kind)
