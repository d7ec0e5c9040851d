"""Zip the browser extension for a store upload: ``python packaging/extension_zip.py [OUTDIR]``.

The zip holds ``resources/extension/`` as it is, except:
  - ``manifest.json`` takes the project's version (pyproject.toml), and loses the development
    ``key``, so the store gives the extension its own id;
  - the folder's README.md (developer notes) is left out.
Entries are sorted and dated 1980-01-01, so the same sources give the same zip.
"""

from __future__ import annotations

import json
import re
import sys
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXTENSION = ROOT / "resources" / "extension"
LEFT_OUT = {"README.md"}
FIXED_TIME = (1980, 1, 1, 0, 0, 0)


def project_version() -> str:
    return str(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"])


def store_manifest(manifest: dict[str, object], version: str) -> dict[str, object]:
    """The manifest for the store: project version (Chrome takes 1-4 dot-separated numbers; a
    pre-release keeps its full name in ``version_name``) and no development ``key``."""
    numbers = re.match(r"\d+(\.\d+){0,3}", version)
    if numbers is None:
        raise SystemExit(f"project version {version!r} does not start with a number")
    out = {k: v for k, v in manifest.items() if k != "key"}
    out["version"] = numbers.group(0)
    if numbers.group(0) != version:
        out["version_name"] = version
    else:
        out.pop("version_name", None)
    return out


def build(out_dir: Path) -> Path:
    version = project_version()
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / f"vodou-extension-{version}.zip"
    manifest = store_manifest(json.loads((EXTENSION / "manifest.json").read_text(encoding="utf-8")), version)
    files = sorted(p for p in EXTENSION.rglob("*") if p.is_file() and p.name not in LEFT_OUT)
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in files:
            name = path.relative_to(EXTENSION).as_posix()
            data = (json.dumps(manifest, indent=2) + "\n").encode() if name == "manifest.json" else path.read_bytes()
            info = zipfile.ZipInfo(name, FIXED_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, data)
    return target


def main(argv: list[str]) -> int:
    target = build(Path(argv[0]) if argv else ROOT / "dist")
    print(target)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
