"""Fixtures: a real bridge on 127.0.0.1 over a temp vault (see helpers.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.integration.bridge.helpers import Bridge, LoopThread, ScriptedModel, start_bridge, stop_bridge
from vodou_desktop import config
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


@pytest.fixture
def model_bridge(vault: Vault, keyword_search: SearchService, loop_thread: LoopThread
                 ) -> Iterator[tuple[Bridge, ScriptedModel]]:
    model = ScriptedModel(loop_thread)
    settings = config.Settings(model_base_url=model.base_url, model_name="scripted")
    bridge = start_bridge(vault, keyword_search, loop_thread, settings)
    yield bridge, model
    stop_bridge(bridge)
    model.close()
