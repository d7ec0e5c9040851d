"""One Vodou per person: a local socket in the runtime folder. A second launch asks the running
app to show its memory browser, then exits (UI-1); ``vodou quick`` asks it for the quick-access box
(UI-6). The requests are lines (``instance.REQUESTS``); the CLI writes them without Qt."""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

from vodou_desktop.instance import socket_path

log = logging.getLogger(__name__)
SHOW = b"show\n"
CONNECT_MS = 500


def ask_running_instance_to_show(path: Path | None = None, *, show: bool = True) -> bool:
    """True when another Vodou answered (it now shows its browser, unless ``show`` is False:
    a start at login only needs to know); False when none runs."""
    socket = QLocalSocket()
    socket.connectToServer(str(path or socket_path()))
    if not socket.waitForConnected(CONNECT_MS):
        return False
    if show:
        socket.write(SHOW)
        socket.flush()
        socket.waitForBytesWritten(CONNECT_MS)
    socket.disconnectFromServer()
    return True


class SingleInstance(QObject):
    """Listens on the socket; emits ``show_requested`` when a second launch knocks, ``quick_requested``
    for ``vodou quick``."""

    show_requested = Signal()
    quick_requested = Signal()

    def __init__(self, path: Path | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.path = path or socket_path()
        self.server = QLocalServer(self)
        self.server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self.server.newConnection.connect(self._accept)

    def listen(self) -> bool:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if self.server.listen(str(self.path)):
            return True
        QLocalServer.removeServer(str(self.path))  # a stale socket left by a crash
        return self.server.listen(str(self.path))

    def close(self) -> None:
        self.server.close()

    def _accept(self) -> None:
        while self.server.hasPendingConnections():
            conn = self.server.nextPendingConnection()
            conn.readyRead.connect(lambda c=conn: self._read(c))
            conn.disconnected.connect(conn.deleteLater)
            if conn.bytesAvailable():
                self._read(conn)

    def _read(self, conn: QLocalSocket) -> None:
        for line in bytes(conn.readAll().data()).splitlines():
            if line.strip() == b"show":
                log.info("another launch of Vodou asked this one to show its memory browser")
                self.show_requested.emit()
            elif line.strip() == b"quick":
                log.info("vodou quick asked for the quick-access box")
                self.quick_requested.emit()
