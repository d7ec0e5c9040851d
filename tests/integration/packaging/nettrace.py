"""Reading ``strace`` logs for DATA-6: which connections and lookups a process tree made, and which
folders it created.

``traced(cmd, log)`` wraps a command; ``network_violations`` and ``created_folders`` read the log.
A DNS lookup shows as a connect (or sendto) to port 53, whatever the address (a resolver on
127.0.0.53 is still a lookup), or as a connect to systemd-resolved's socket. (nscd's socket is not
counted: it answers user lookups too. Where nscd runs, a host lookup through it is not seen here.)
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

TRACED_CALLS = "connect,sendto,sendmsg,sendmmsg,mkdir,mkdirat"
LOOPBACK = {"127.0.0.1", "::1", "::ffff:127.0.0.1"}
NAME_SERVICE_SOCKETS = ("/run/systemd/resolve/",)

_INET = re.compile(r'sa_family=AF_INET6?, sin6?_port=htons\((\d+)\)'
                   r'.*?(?:inet_addr|inet_pton)\((?:AF_INET6?, )?"([^"]+)"')
_UNIX = re.compile(r'sa_family=AF_UNIX, sun_path=@?"([^"]*)"')
_MKDIR = re.compile(r'\bmkdir(?:at)?\((?:AT_FDCWD, |\d+, )?"([^"]+)", [0-7]+\)\s+=\s+0\b')


def traced(cmd: list[str], log: Path) -> list[str]:
    """``cmd`` under strace, following children; only the calls above stop the process."""
    return ["strace", "-f", "-qq", "--seccomp-bpf", "-e", f"trace={TRACED_CALLS}", "-o", str(log), *cmd]


def network_violations(lines: Iterable[str], allowed: Iterable[tuple[str, int]] = ()) -> list[str]:
    """Every traced line that reached beyond loopback, looked a name up, or used a name service.
    ``allowed``: (address, port) pairs a test configured on purpose (a model endpoint)."""
    permitted = set(allowed)
    bad = []
    for line in lines:
        if not re.search(r"\b(connect|sendto|sendmsg|sendmmsg)\(", line):
            continue
        for port_s, addr in _INET.findall(line):
            port = int(port_s)
            if (addr, port) in permitted:
                continue
            if port == 53 or addr not in LOOPBACK:
                bad.append(line.strip())
        for path in _UNIX.findall(line):
            if path.startswith(NAME_SERVICE_SOCKETS):
                bad.append(line.strip())
    return bad


def created_folders(lines: Iterable[str]) -> list[Path]:
    """Folders the traced processes made (successful ``mkdir`` calls with an absolute path)."""
    found = []
    for line in lines:
        for name in _MKDIR.findall(line):
            if name.startswith("/"):
                found.append(Path(name))
    return found
