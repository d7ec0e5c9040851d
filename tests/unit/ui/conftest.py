"""Fixtures for the desktop UI tests: services over a real temp vault, and a small seeded memory."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from vodou_desktop import config
from vodou_desktop.data.sample_vault import fill_vault
from vodou_desktop.governance.approvals import ApprovalGate, ToolBox
from vodou_desktop.governance.forget import Forgetting
from vodou_desktop.governance.opm import OperatorMemory
from vodou_desktop.governance.page_memory import PageMemory
from vodou_desktop.governance.sitemodes import SiteModes
from vodou_desktop.ingest.remember import Origin, remember, save_document
from vodou_desktop.runtime import Runtime
from vodou_desktop.search.embedder import Embedder
from vodou_desktop.search.service import SearchService
from vodou_desktop.search.vectors import VectorIndex
from vodou_desktop.ui.services import Services
from vodou_desktop.vault import Vault

SEED = [
    ("The staging database password rotates every Monday", Origin("note", url="https://wiki.example.com/ops"),
     {"project": "infra"}),
    ("Use pnpm, not npm, in the web repository", Origin("cli"), {"project": "web", "kind": "decision"}),
    ("Prefers dark mode in every editor", Origin("cli"), {"kind": "preference"}),
    ("Rust borrow checker notes: lifetimes elide in simple cases", Origin("link", url="https://doc.rust-lang.org/book/"),
     {}),
    ("The quarterly report is due on the fifth", Origin("import_chatgpt", tier="import"), {}),
]


def seed(vault: Vault) -> dict[str, int]:
    ids = {}
    for text, origin, extra in SEED:
        ids[text] = remember(vault, text, origin, **extra)
    save_document(vault, "# Rust book\n\nOwnership rules.\n\nBorrowing rules.",
                  Origin("library", url="https://doc.rust-lang.org/book/", title="The Rust Book"))
    return ids


def make_services(search: SearchService, qtbot, **optional) -> Services:  # type: ignore[no-untyped-def]
    runtime = Runtime(config.Settings(), search.vault, search.embedder, search.index, search)
    services = Services.build(runtime, **optional)
    return services


@pytest.fixture
def seeded(vault: Vault) -> dict[str, int]:
    return seed(vault)


@pytest.fixture
def services(keyword_search: SearchService, qtbot) -> Iterator[Services]:  # type: ignore[no-untyped-def]
    svc = make_services(keyword_search, qtbot)
    yield svc
    svc.close()


@pytest.fixture
def governed(keyword_search: SearchService, qtbot) -> Iterator[Services]:  # type: ignore[no-untyped-def]
    """Services with every governance service the memory browser's tabs and actions use."""
    vault = keyword_search.vault
    sites = SiteModes(vault)
    pages = PageMemory(vault, keyword_search, sites)
    gate = ApprovalGate(vault, ToolBox(vault, sites, pages, keyword_search))
    svc = make_services(keyword_search, qtbot, sites=sites, forgetting=Forgetting(vault), page_memory=pages,
                        opm=OperatorMemory(vault), extras={"gate": gate})
    yield svc
    svc.close()
    pages.close()


BIG = 20_000


@pytest.fixture(scope="session")
def big_vault_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated vault of 20,000 memories in 6 projects, written once per session (one import
    transaction); each test gets its own copy."""
    path = tmp_path_factory.mktemp("big") / "vault.db"
    vault = Vault.open(path)
    fill_vault(vault, BIG)
    vault.close()
    return path


@pytest.fixture
def big_services(big_vault_file: Path, tmp_path: Path, qtbot) -> Iterator[Services]:  # type: ignore[no-untyped-def]
    """Services over a copy of the 20,000-memory vault (keyword search)."""
    path = tmp_path / "big.db"
    shutil.copyfile(big_vault_file, path)
    vault = Vault.open(path)
    index = VectorIndex(vault)
    svc = make_services(SearchService(vault, Embedder("none"), index), qtbot)
    yield svc
    svc.close()
    index.close()
    vault.close()
