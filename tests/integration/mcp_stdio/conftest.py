"""Real ``vodou mcp`` servers for the MCP tests: one keyword-only (``VODOU_EMBEDDER=none``) and one
with the embedding model, each module-scoped so the model loads once."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.integration.mcp_stdio.harness import McpClient
from tests.support import share_model_graph
from vodou_desktop.search.embedder import Embedder


@pytest.fixture(scope="module")
def keyword_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpClient]:
    home = tmp_path_factory.mktemp("mcp-home")
    with McpClient(home / "vault.sqlite", home) as client:
        yield client


@pytest.fixture(scope="module")
def model_server(tmp_path_factory: pytest.TempPathFactory, model: Embedder) -> Iterator[McpClient]:
    home = tmp_path_factory.mktemp("mcp-model-home")
    share_model_graph(model, home)  # the model exported earlier (a first run's export is tested elsewhere)
    with McpClient(home / "vault.sqlite", home, model=True) as client:
        yield client

