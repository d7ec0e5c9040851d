"""The strace log reader of the no-network test (tests/integration/packaging/nettrace.py)."""

from __future__ import annotations

from pathlib import Path

from tests.integration.packaging.nettrace import created_folders, network_violations

LOOPBACK = [
    '101 connect(7, {sa_family=AF_INET, sin_port=htons(47653), sin_addr=inet_addr("127.0.0.1")}, 16) = 0',
    '101 connect(8, {sa_family=AF_INET6, sin6_port=htons(8080), sin6_flowinfo=htonl(0), '
    'inet_pton(AF_INET6, "::1", &sin6_addr), sin6_scope_id=0}, 28) = 0',
    '101 sendto(17, "HTTP/1.1 200 OK\\r\\n"..., 452, 0, NULL, 0) = 452',
    '101 connect(3, {sa_family=AF_UNIX, sun_path="/run/dbus/system_bus_socket"}, 110) = 0',
    '101 mkdir("/home/p/.local/share/vodou-desktop", 0700) = 0',
]
LEAKS = [
    '102 connect(5, {sa_family=AF_INET, sin_port=htons(53), sin_addr=inet_addr("127.0.0.53")}, 16) = 0',
    '102 connect(6, {sa_family=AF_INET, sin_port=htons(443), sin_addr=inet_addr("20.42.65.92")}, 16) = -1 '
    'EINPROGRESS (Operation now in progress)',
    '102 connect(6, {sa_family=AF_INET6, sin6_port=htons(443), sin6_flowinfo=htonl(0), '
    'inet_pton(AF_INET6, "2001:db8::1", &sin6_addr), sin6_scope_id=0}, 28) = -1 ENETUNREACH',
    '102 sendto(9, "x", 1, 0, {sa_family=AF_INET, sin_port=htons(5353), sin_addr=inet_addr("192.0.2.7")}, 16) = 1',
    '102 connect(4, {sa_family=AF_UNIX, sun_path="/run/systemd/resolve/io.systemd.Resolve"}, 42) = 0',
]


def test_loopback_and_local_sockets_pass_and_every_leak_is_caught() -> None:
    assert network_violations(LOOPBACK) == []
    assert network_violations(LEAKS) == LEAKS


def test_a_configured_endpoint_is_allowed_and_only_that_one() -> None:
    assert network_violations(LEAKS[1:2], allowed=[("20.42.65.92", 443)]) == []
    assert network_violations(LEAKS[1:2], allowed=[("20.42.65.92", 80)]) == LEAKS[1:2]


def test_folders_made_are_read_from_successful_mkdirs_only() -> None:
    lines = [*LOOPBACK, '103 mkdir("/tmp/torchinductor_root", 0777)   = 0',
             '103 mkdir("/tmp/exists", 0777) = -1 EEXIST (File exists)',
             '103 mkdirat(AT_FDCWD, "/var/x", 0755) = 0']
    assert created_folders(lines) == [Path("/home/p/.local/share/vodou-desktop"), Path("/tmp/torchinductor_root"),
                                      Path("/var/x")]
