"""A CPU install that does not depend on a machine's pip setup: ``constraints.txt`` lets pip take
only the CPU build of torch. Real pip resolves against a wheel folder made here with stand-ins for
the two torch 2.13.0 builds (PyPI's, which needs CUDA packages, and the PyTorch CPU index's
``+cpu``); the real wheels are gigabytes, and what pip decides depends only on names and versions."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
CUDA_DEPS = ("nvidia-cublas==13.0.0", "triton==3.7.0")


def fake_wheel(folder: Path, name: str, version: str, requires: tuple[str, ...] = ()) -> None:
    dist_info = f"{name}-{version}.dist-info"
    needs = "".join(f"Requires-Dist: {r}\n" for r in requires)
    with zipfile.ZipFile(folder / f"{name}-{version}-py3-none-any.whl", "w") as zf:
        zf.writestr(f"{name}/__init__.py", "")
        zf.writestr(f"{dist_info}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n{needs}")
        zf.writestr(f"{dist_info}/WHEEL",
                    "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        zf.writestr(f"{dist_info}/RECORD", "")


def resolve(wheels: Path, constraints: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """What ``pip install -c constraints torch==2.13.0`` would install from ``wheels`` alone."""
    report = tmp_path / "report.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1")
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--no-index",
                           "--find-links", str(wheels), "-c", str(constraints), "--report", str(report), "-q",
                           "torch==2.13.0"], env=env, capture_output=True, text=True, timeout=120)
    proc.stdout = json.dumps(sorted(f"{i['metadata']['name'].replace('_', '-')}=={i['metadata']['version']}"
                                    for i in json.loads(report.read_text())["install"])) if proc.returncode == 0 else ""
    return proc


@pytest.fixture
def wheels(tmp_path: Path) -> Path:
    folder = tmp_path / "wheels"
    folder.mkdir()
    fake_wheel(folder, "torch", "2.13.0", requires=CUDA_DEPS)  # PyPI's: the CUDA build
    fake_wheel(folder, "nvidia_cublas", "13.0.0")
    fake_wheel(folder, "triton", "3.7.0")
    return folder


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the +cpu pin applies on x86_64")
def test_without_the_cpu_index_pip_stops_instead_of_taking_cuda(wheels: Path, tmp_path: Path) -> None:
    proc = resolve(wheels, ROOT / "constraints.txt", tmp_path)
    assert proc.returncode != 0
    assert "Cannot install torch==2.13.0" in proc.stderr and "ResolutionImpossible" in proc.stderr, proc.stderr


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the +cpu pin applies on x86_64")
def test_with_the_cpu_build_available_pip_takes_it_and_no_cuda(wheels: Path, tmp_path: Path) -> None:
    fake_wheel(wheels, "torch", "2.13.0+cpu")
    proc = resolve(wheels, ROOT / "constraints.txt", tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == ["torch==2.13.0+cpu"]


def test_a_plain_pin_would_take_the_cuda_build(wheels: Path, tmp_path: Path) -> None:
    """Why the local version is pinned: ``torch==2.13.0`` alone (the old constraint) takes the CUDA build."""
    plain = tmp_path / "plain.txt"
    plain.write_text("torch==2.13.0\n")
    proc = resolve(wheels, plain, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == ["nvidia-cublas==13.0.0", "torch==2.13.0", "triton==3.7.0"]
