"""The running app's single-instance socket, as a plain Unix socket (Qt-free, for the CLI).

The tray app listens on ``desktop.sock`` in the runtime folder (``ui/single_instance.py``); a line
written to it asks for something: ``show`` (the memory browser), ``quick`` (the quick-access box).
"""

from __future__ import annotations

import socket
from pathlib import Path

from vodou_desktop import paths

SOCKET_NAME = "desktop.sock"
REQUESTS = ("show", "quick")
CONNECT_S = 0.5


def socket_path() -> Path:
    return paths.runtime_dir() / SOCKET_NAME


def knock(request: str | None, path: Path | None = None) -> bool:
    """True when a running Vodou answered on its socket (and was sent ``request``, when one is given);
    False when none runs (no socket, or a stale one left by a crash)."""
    if request is not None and request not in REQUESTS:
        raise ValueError(f"unknown request {request!r}")
    where = str(path or socket_path())
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(CONNECT_S)
        try:
            conn.connect(where)
            if request is not None:
                conn.sendall(f"{request}\n".encode())
        except OSError:
            return False
    return True
