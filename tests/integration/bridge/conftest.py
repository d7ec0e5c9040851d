"""Fixtures: a real bridge on 127.0.0.1 over a temp vault (see helpers.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.integration.bridge.helpers import Bridge, LoopThread, start_bridge, stop_bridge
from vodou_desktop.search.service import SearchService
from vodou_desktop.vault import Vault


@pytest.fixture
def loop_thread() -> Iterator[LoopThread]:
    lt = LoopThread()
    yield lt
    lt.close()


@pytest.fixture
def bridge(vault: Vault, keyword_search: SearchService, loop_thread: LoopThread) -> Iterator[Bridge]:
    b = start_bridge(vault, keyword_search, loop_thread)
    yield b
    stop_bridge(b)

