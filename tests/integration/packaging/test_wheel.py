"""PKG-2: the wheel built from a clean copy is complete. It is installed into a new venv by a pip
with a configuration of its own (no pip configuration file or PIP_* variable of this machine; only
the indexes and wheel folders named by VODOU_TEST_PIP_SOURCES, by default those this machine's pip
names) and the constraints file, so torch is the CPU build and no CUDA package comes along; the
installed ``vodou`` is run there, away from the source tree, with a fresh VODOU_HOME."""

from __future__ import annotations

import json
import os
import subprocess
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.packaging.support import PYTHON, ROOT, clean_copy, require_tool, run

# Installing torch, Qt and the rest into a new venv takes minutes on a busy machine.
pytestmark = [pytest.mark.wheel, pytest.mark.timeout(1800)]

SHIPPED = [
    "vodou_desktop/_resources/icons/vodou.svg",
    *(f"vodou_desktop/_resources/icons/vodou-{n}.png" for n in (16, 22, 32, 48, 64, 128)),
    *(f"vodou_desktop/_resources/sensitive/{n}.txt" for n in ("bank", "health", "tax", "sign-in", "host-patterns")),
    "vodou_desktop/_resources/extension/manifest.json",
    "vodou_desktop/_resources/extension/background.js",
    "vodou_desktop/_resources/extension/js/bridge.js",
    "vodou_desktop/_resources/extension/icons/green-48.png",
    "vodou_desktop/_resources/THIRD_PARTY_NOTICES",
    "vodou_desktop/_resources/desktop/vodou.desktop",
    "vodou_desktop/_resources/desktop/io.vodou.Desktop.metainfo.xml",
    "vodou_desktop/py.typed",
]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``python -m build`` (sdist, then the wheel from the sdist) on a copy of the tracked files."""
    src = clean_copy(tmp_path_factory.mktemp("clean-copy"))
    dist = tmp_path_factory.mktemp("dist")
    run([PYTHON, "-m", "build", "--outdir", str(dist), str(src)])
    (found,) = dist.glob("vodou_desktop-*.whl")
    return found


# Where the wheel test's pip may look besides PyPI, whitespace-separated: index addresses and folders
# of wheels (e.g. "https://download.pytorch.org/whl/cpu"). Unset: the indexes and wheel folders this
# machine's pip is configured with, and nothing else of that configuration (no constraints, no cap):
# the install must be right on its own.
INDEXES_ENV = "VODOU_TEST_PIP_SOURCES"


def pip_sources() -> list[str]:
    given = os.environ.get(INDEXES_ENV)
    if given is not None:
        return given.split()
    listed = subprocess.run([PYTHON, "-m", "pip", "config", "list"], capture_output=True, text=True).stdout
    found: list[str] = []
    for line in listed.splitlines():
        key, _, value = line.partition("=")
        if key.rsplit(".", 1)[-1] in ("index-url", "extra-index-url", "find-links"):
            found += [v for v in value.strip("'\"").split() if v not in found]
    return found


def pip_source_args(sources: list[str]) -> list[str]:
    """An address (``https://…/simple``, ``file:///…/simple``) is an index pip adds to PyPI; a plain
    path is a folder of wheels."""
    args: list[str] = []
    for source in sources:
        args += ["--extra-index-url" if "://" in source else "--find-links", source]
    return args


def isolated_pip_env() -> dict[str, str]:
    """No pip configuration file and no PIP_* variable of this machine; no PYTHONPATH either (a
    checkout on it, with its editable install's metadata, would make pip skip the wheel as installed)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PYTHON", "VIRTUAL_ENV"))}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1")
    return env


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A new venv with the wheel installed by a pip that sees only ``constraints.txt`` and the sources
    above. pip's cache makes the downloads quick after once; --no-compile skips byte-compiling torch
    and transformers (Python compiles what it imports)."""
    venv = tmp_path_factory.mktemp("venv") / "v"
    run([PYTHON, "-m", "venv", str(venv)])
    run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-compile", *pip_source_args(pip_sources()),
         "-c", str(ROOT / "constraints.txt"), str(wheel)], timeout=1500, env=isolated_pip_env())
    yield venv


@pytest.fixture
def shell(installed: Path, tmp_path: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    """Where to run the installed tools: a folder outside the source tree, no PYTHONPATH."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "VODOU_"))}
    env.update(VODOU_HOME=str(tmp_path / "home"), QT_QPA_PLATFORM="offscreen", HF_HUB_OFFLINE="1",
               TRANSFORMERS_OFFLINE="1", PATH=f"{installed / 'bin'}:{env.get('PATH', '')}")
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    yield cwd, env


def vodou(shell: tuple[Path, dict[str, str]], *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    cwd, base = shell
    return run(["vodou", *args], cwd=cwd, env={**base, **env})


def test_wheel_holds_every_resource(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = [n for n in SHIPPED if n not in names]
    assert not missing, f"not in {wheel.name}: {missing}"
    tracked = subprocess.run(["git", "ls-files", "resources"], cwd=ROOT, check=True, capture_output=True,
                             text=True).stdout.split()
    unshipped = [t for t in tracked if "vodou_desktop/_resources/" + t.removeprefix("resources/") not in names]
    assert not unshipped, f"tracked under resources/ but not in the wheel: {unshipped}"


def test_installed_package_is_the_wheel_not_the_checkout(installed: Path, shell: tuple[Path, dict[str, str]]) -> None:
    cwd, env = shell
    out = run([str(installed / "bin" / "python"), "-c",
               "import vodou_desktop, vodou_desktop.resources as r; print(vodou_desktop.__file__); "
               "print(r.resources_dir())"], cwd=cwd, env=env).stdout.split()
    assert out[0].startswith(str(installed)), out
    assert out[1].startswith(str(installed)) and out[1].endswith("_resources"), out


def test_torch_is_the_cpu_build(installed: Path, shell: tuple[Path, dict[str, str]]) -> None:
    """No CUDA: none of the nvidia-* packages or triton that PyPI's torch pulls in."""
    cwd, env = shell
    listed = json.loads(run([str(installed / "bin" / "python"), "-m", "pip", "list", "--format", "json"], cwd=cwd,
                            env=isolated_pip_env()).stdout)
    names = {d["name"].lower().replace("_", "-"): d["version"] for d in listed}
    assert [n for n in names if n.startswith("nvidia-") or n == "triton"] == []
    assert "torch" in names
    cuda = run([str(installed / "bin" / "python"), "-c", "import torch; print(torch.version.cuda)"], cwd=cwd,
               env=env).stdout.strip()
    assert cuda == "None", f"torch {names['torch']} is built for CUDA {cuda}"


def test_version(shell: tuple[Path, dict[str, str]]) -> None:
    from vodou_desktop import __version__

    assert vodou(shell, "--version").stdout.strip() == f"vodou {__version__}"


def test_licence_in_the_metadata_and_notices_printed(wheel: Path, shell: tuple[Path, dict[str, str]]) -> None:
    with zipfile.ZipFile(wheel) as zf:
        meta = zf.read(next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))).decode()
        licence = zf.read(next(n for n in zf.namelist() if n.endswith(".dist-info/licenses/LICENSE"))).decode()
    assert "License-Expression: Apache-2.0" in meta.splitlines()
    assert licence == (ROOT / "LICENSE").read_text()
    assert vodou(shell, "--licences").stdout == (ROOT / "resources" / "THIRD_PARTY_NOTICES").read_text()


def test_desktop_install_names_the_installed_vodou(installed: Path, shell: tuple[Path, dict[str, str]],
                                                   tmp_path: Path) -> None:
    """From a wheel (as pipx installs it): no checkout needed; the entry starts this venv's vodou."""
    data = tmp_path / "share"
    vodou(shell, "desktop", "install", XDG_DATA_HOME=str(data))
    entry = data / "applications" / "vodou.desktop"
    run([require_tool("desktop-file-validate"), str(entry)])
    assert f"Exec={installed / 'bin' / 'vodou'}" in entry.read_text().splitlines()
    assert (data / "icons" / "hicolor" / "48x48" / "apps" / "vodou.png").is_file()


def test_sensitive_lists_ship(shell: tuple[Path, dict[str, str]]) -> None:
    vodou(shell, "mem", "add", "a first memory makes the vault")  # sites get reads a vault; it makes none
    got = json.loads(vodou(shell, "sites", "get", "www.chase.com", "--json").stdout)
    assert got["mode"] == "off", got


def test_remember_and_search_by_keyword(shell: tuple[Path, dict[str, str]]) -> None:
    vodou(shell, "mem", "add", "The heron stands still in shallow water", VODOU_EMBEDDER="none")
    hits = json.loads(vodou(shell, "mem", "search", "heron", "--json", VODOU_EMBEDDER="none").stdout)
    assert [h["text"] for h in _results(hits)] == ["The heron stands still in shallow water"]


@pytest.mark.model
def test_search_by_meaning_with_the_installed_model(installed: Path, shell: tuple[Path, dict[str, str]]) -> None:
    """The model package installed from the registry loads in the new venv (no download). No word
    of the query is in the memory, so only the model can find it."""
    cwd, env = shell
    # The first import of torch in a venv installed with --no-compile byte-compiles it, which on a
    # busy machine can outlast the CLI's wait for the model; do it once beforehand.
    run([str(installed / "bin" / "python"), "-c", "import sentence_transformers"], cwd=cwd, env=env)
    vodou(shell, "mem", "add", "The heron stands still in shallow water", VODOU_EMBEDDER="none")
    vodou(shell, "mem", "add", "Quarterly report is due on the fifth", VODOU_EMBEDDER="none")
    # The first search of a new install prepares the model (the export child) and, told to wait for
    # it, searches by meaning; without VODOU_MODEL_WAIT it would answer from keywords meanwhile.
    found = vodou(shell, "mem", "search", "wading bird fishing", "--json", VODOU_MODEL_WAIT="900")
    assert json.loads(found.stdout)["semantic"] is True, found.stderr
    hits = _results(json.loads(found.stdout))
    assert hits and hits[0]["text"] == "The heron stands still in shallow water", (hits, found.stderr)


def test_doctor_passes_on_a_new_vault_of_the_wheel(shell: tuple[Path, dict[str, str]]) -> None:
    vodou(shell, "mem", "add", "A memory so the checks have rows to read", VODOU_EMBEDDER="none")
    cwd, env = shell
    proc = subprocess.run(["vodou", "doctor", "--json"], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert "Traceback" not in proc.stderr, proc.stderr
    checks = {c["name"]: c for c in json.loads(proc.stdout)["checks"]}
    assert proc.returncode == 0, [c for c in checks.values() if not c["passed"]]
    assert {"integrity", "fts_integrity", "resources", "backup_age"} <= set(checks)


def test_screenshots_render_with_the_shipped_icons(installed: Path, shell: tuple[Path, dict[str, str]]) -> None:
    cwd, env = shell
    out = cwd / "shots"
    run([str(installed / "bin" / "python"), "-m", "vodou_desktop.ui.screenshots", str(out)], cwd=cwd, env=env)
    written = sorted(p.name for p in out.glob("*.png"))
    assert "icon-states.png" in written and "memory-browser.png" in written, written
    colours = run([str(installed / "bin" / "python"), "-c",
                   "import sys; from PySide6.QtGui import QImage; i = QImage(sys.argv[1]); "
                   "print(len({i.pixel(x, y) for x in range(i.width()) for y in range(i.height())}))",
                   str(out / "icon-states.png")], cwd=cwd, env=env).stdout
    assert int(colours) > 50, "the icon strip is (nearly) one colour: the artwork did not load"


def _results(payload: object) -> list[dict[str, object]]:
    if isinstance(payload, dict):
        payload = payload.get("results", payload.get("hits", []))
    assert isinstance(payload, list), payload
    return payload
