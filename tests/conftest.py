"""Test-wide fixtures. Tests never touch the real home folder: VODOU_HOME and XDG_CONFIG_HOME are
temp dirs."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# Caches that vodou_desktop.offline would put in the real home's Vodou cache folder (read once, at
# import, before the autouse fixture below sets VODOU_HOME): a temp folder for the whole session.
_SESSION_CACHE = tempfile.mkdtemp(prefix="vodou-test-cache-")
os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", os.path.join(_SESSION_CACHE, "torch"))
os.environ.setdefault("TLDEXTRACT_CACHE", os.path.join(_SESSION_CACHE, "tldextract"))

import pytest  # noqa: E402

from tests.support import share_model_graph  # noqa: E402
from vodou_desktop import runtime as runtime_module  # noqa: E402
from vodou_desktop.search.embedder import Embedder, EmbedderState  # noqa: E402
from vodou_desktop.search.service import SearchService  # noqa: E402
from vodou_desktop.search.vectors import VectorIndex  # noqa: E402
from vodou_desktop.vault import Vault  # noqa: E402


@pytest.fixture(autouse=True)
def vodou_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("vodou-home")
    monkeypatch.setenv("VODOU_HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "xdg-config"))  # the autostart entry lives there
    monkeypatch.delenv("VODOU_VAULT", raising=False)
    monkeypatch.delenv("VODOU_EMBEDDER", raising=False)
    return home


@pytest.fixture(scope="session")
def model(tmp_path_factory: pytest.TempPathFactory) -> Embedder:
    """The real default model (bge-small-en-v1.5 int8, from the installed package), loaded once per
    test session on ONNX Runtime."""
    embedder = Embedder("default", cache_dir=tmp_path_factory.mktemp("model-cache")).start()
    assert embedder.wait(600) is EmbedderState.READY, embedder.error
    assert embedder.runtime == "onnx", embedder.onnx_note
    return embedder


@pytest.fixture(scope="session")
def minilm_model(tmp_path_factory: pytest.TempPathFactory) -> Embedder:
    """The real all-MiniLM-L6-v2 (the choice "minilm"), loaded once per test session on ONNX Runtime:
    its graph exported (and checked against encode) by the export child once, into a session cache folder."""
    embedder = Embedder("minilm", cache_dir=tmp_path_factory.mktemp("minilm-cache")).start()
    assert embedder.wait(600) is EmbedderState.READY, embedder.error
    assert embedder.runtime == "onnx", embedder.onnx_note
    return embedder


@pytest.fixture(scope="session")
def torch_model() -> Embedder:
    """all-MiniLM-L6-v2 on torch (sentence-transformers' own ``encode``): the reference vectors."""
    embedder = Embedder("minilm", onnx=False).start()
    assert embedder.wait(600) is EmbedderState.READY, embedder.error
    return embedder


@pytest.fixture
def model_cache(model: Embedder, vodou_home: Path) -> Path:
    """This test's cache folder (under VODOU_HOME) holding the session's exported graph, so a
    ``vodou`` subprocess finds the model ready without exporting it again."""
    return share_model_graph(model, vodou_home)


@pytest.fixture
def vault_path(tmp_path: Path) -> Path:
    return tmp_path / "vault.sqlite"


@pytest.fixture
def vault(vault_path: Path) -> Iterator[Vault]:
    v = Vault.open(vault_path)
    yield v
    v.close()


@pytest.fixture
def keyword_search(vault: Vault) -> Iterator[SearchService]:
    """Search with the embedder off (the degraded path)."""
    index = VectorIndex(vault)
    yield SearchService(vault, Embedder("none"), index)
    index.close()


@pytest.fixture
def hybrid_search(vault: Vault, model: Embedder) -> Iterator[SearchService]:
    index = VectorIndex(vault)
    index.load()
    yield SearchService(vault, model, index)
    index.close()


@pytest.fixture
def cli_model(model: Embedder, monkeypatch: pytest.MonkeyPatch) -> Embedder:
    """Make in-process CLI runs reuse the session's model instead of loading their own."""
    real = runtime_module.make_embedder

    def shared(choice: str) -> Embedder:
        return model if choice == "default" else real(choice)

    monkeypatch.setattr(runtime_module, "make_embedder", shared)
    return model
