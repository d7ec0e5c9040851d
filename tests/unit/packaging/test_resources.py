"""PKG-2: one lookup for resources/, the package list that maps it into the wheel, and what
``vodou doctor`` and the CLI say when something is missing (one line, never a traceback)."""

from __future__ import annotations

import json
import shutil
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from vodou_desktop import paths, resources
from vodou_desktop.cli.main import main as cli_main
from vodou_desktop.governance import sensitive
from vodou_desktop.vault import Vault

ROOT = Path(__file__).resolve().parents[3]


def test_every_package_is_listed_for_the_wheel() -> None:
    """pyproject lists packages by hand (for the resources mapping): a new subpackage must join."""
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    on_disk = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "vodou_desktop").rglob("__init__.py")}
    assert on_disk - listed == set(), "add these to [tool.setuptools] packages in pyproject.toml"
    assert listed - on_disk == {"vodou_desktop._resources"}


def test_checkout_finds_the_top_level_folder() -> None:
    assert resources.resources_dir() == ROOT / "resources"
    assert resources.missing_resources() == []


@pytest.fixture
def fake_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A package folder whose ``_resources`` is a copy of the real one, as an installed wheel has it."""
    package = tmp_path / "site-packages" / "vodou_desktop"
    shutil.copytree(ROOT / "resources", package / resources.INSTALLED_NAME)
    monkeypatch.setattr(resources, "_PACKAGE_DIR", package)
    sensitive.default_lists.cache_clear()
    yield package / resources.INSTALLED_NAME
    sensitive.default_lists.cache_clear()


def test_installed_copy_wins_over_a_checkout(fake_install: Path) -> None:
    assert resources.resources_dir() == fake_install
    assert resources.resource_path("icons", "vodou.svg") == fake_install / "icons" / "vodou.svg"


def said(out: str, text: str) -> bool:
    """``text`` appears in ``out`` however the terminal wrapping broke its lines."""
    return "".join(text.split()) in "".join(out.split())


def test_doctor_names_a_missing_file_and_what_to_do(fake_install: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (fake_install / "sensitive" / "bank.txt").unlink()
    assert cli_main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert said(out, "PROBLEM  Files Vodou ships with are missing: sensitive/bank.txt. Reinstall Vodou"), out
    assert "Traceback" not in out


def test_doctor_names_a_missing_folder(fake_install: Path, capsys: pytest.CaptureFixture[str],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.rmtree(fake_install)
    monkeypatch.setattr(resources, "candidates", lambda: [fake_install])
    assert cli_main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert said(out, f"PROBLEM  Files Vodou ships with are missing: Vodou's resources folder is missing "
                     f"(looked in: {fake_install}); reinstall Vodou."), out
    assert "Traceback" not in out


def test_doctor_json_names_the_missing_file(fake_install: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (fake_install / "icons" / "vodou-22.png").unlink()
    assert cli_main(["doctor", "--json"]) == 1
    checks = {c["name"]: c for c in json.loads(capsys.readouterr().out)["checks"]}
    assert checks["resources"]["passed"] is False and checks["resources"]["detail"] == "icons/vodou-22.png"


def test_cli_reports_a_missing_list_without_a_traceback(fake_install: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    (fake_install / "sensitive" / "tax.txt").unlink()
    made = paths.vault_path(None)  # sites get reads the vault's rules: one must exist
    made.parent.mkdir(parents=True, exist_ok=True)
    Vault.open(made).close()
    assert cli_main(["sites", "get", "www.chase.com"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("vodou: error: the sensitive-site list ") and "tax.txt is missing" in err
    assert len(err.strip().splitlines()) == 1


def test_doctor_names_the_folder_in_use(fake_install: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """So a person with a wheel or a bundle can find the extension folder to load unpacked."""
    cli_main(["doctor"])
    out = capsys.readouterr().out
    assert said(out, "ok    Files Vodou ships with: icons, sensitive-site lists and the browser extension are in "
                     f"{fake_install}"), out
